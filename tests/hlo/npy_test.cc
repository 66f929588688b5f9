#include "compiler/hlo/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace tilesmith::hlo {
namespace {

using Bytes = std::vector<uint8_t>;

// Random contents in the literal's canonical unpacked form (narrow ints sign-extended,
// pred 0/1, f4 in the low nibble), which is what reading produces.
Literal RandomLiteral(const Shape& shape, std::mt19937& rng) {
  Literal literal(shape);
  for (uint8_t& byte : literal.bytes()) byte = static_cast<uint8_t>(rng());
  if (literal.element_bytes() <= 8) {
    for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetBits(i, literal.GetBits(i));
  }
  return literal;
}

Bytes MustSerialize(const Literal& literal) {
  auto bytes = SerializeNpy(literal);
  EXPECT_TRUE(bytes.has_value()) << bytes.error().message;
  return bytes.value_or(Bytes{});
}

// A .npy file with the given header dict (padded as numpy does) and raw data.
Bytes MakeNpy(const std::string& dict, const Bytes& data, int major = 1) {
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  size_t length_bytes = major == 1 ? 2 : 4;
  std::string text = dict;
  while ((8 + length_bytes + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  for (size_t i = 0; i < length_bytes; ++i) out.push_back((text.size() >> (8 * i)) & 0xFF);
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': ";
  dict += fortran ? "True" : "False";
  dict += ", 'shape': ";
  dict += shape;
  dict += ", }";
  return dict;
}

// The error message of a parse that must fail.
std::string ParseError(const Bytes& bytes, std::optional<Shape> expected = std::nullopt) {
  auto literal = ParseNpy(bytes, std::move(expected));
  EXPECT_FALSE(literal.has_value());
  return literal.has_value() ? "" : literal.error().message;
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("tilesmith_npy_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

TEST(NpyTest, HeaderBytesMatchNumpySave) {
  Literal literal(Shape::Array(PrimitiveType::kF32, {3, 4}));
  literal.SetDouble(0, 1.0);
  Bytes bytes = MustSerialize(literal);
  // numpy.save: magic, version 1.0, header length 118, the dict, then spaces to byte 127
  // and a newline, so that the data starts 64-byte aligned at 128.
  ASSERT_EQ(bytes.size(), 128u + 48u);
  EXPECT_EQ(Bytes(bytes.begin(), bytes.begin() + 10),
            (Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0}));
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  EXPECT_EQ(std::string(bytes.begin() + 10, bytes.begin() + 10 + dict.size()), dict);
  for (size_t i = 10 + dict.size(); i < 127; ++i) ASSERT_EQ(bytes[i], ' ') << i;
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(Bytes(bytes.begin() + 128, bytes.begin() + 132), (Bytes{0, 0, 0x80, 0x3F}));
}

TEST(NpyTest, DtypesOfEveryType) {
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kPred), "|b1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kS8), "|i1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kS64), "<i8");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kU8), "|u1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kU32), "<u4");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kF16), "<f2");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kF64), "<f8");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kC64), "<c8");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kC128), "<c16");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kBF16), "<u2");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kF8E4M3FN), "|u1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kF4E2M1FN), "|u1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kS4), "|i1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kS1), "|i1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kU2), "|u1");
  EXPECT_EQ(NpyDtypeFor(PrimitiveType::kToken), "");
}

TEST(NpyTest, RoundTripEveryTypeWithExpectedShape) {
  std::mt19937 rng(1);
  for (PrimitiveType type : AllArrayTypes()) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{2, 3, 4}, {}, {0, 5}, {7}}) {
      Shape shape = Shape::Array(type, dims);
      SCOPED_TRACE(ShapeToString(shape));
      Literal literal = RandomLiteral(shape, rng);
      auto back = ParseNpy(MustSerialize(literal), shape);
      ASSERT_TRUE(back.has_value()) << back.error().message;
      EXPECT_EQ(*back, literal);
    }
  }
}

TEST(NpyTest, NaturalTypesRoundTripWithoutAHint) {
  std::mt19937 rng(2);
  using P = PrimitiveType;
  for (P type : {P::kPred, P::kS8, P::kS16, P::kS32, P::kS64, P::kU8, P::kU16, P::kU32, P::kU64,
                 P::kF16, P::kF32, P::kF64, P::kC64, P::kC128}) {
    Literal literal = RandomLiteral(Shape::Array(type, {3, 2}), rng);
    auto back = ParseNpy(MustSerialize(literal));
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(*back, literal) << PrimitiveTypeName(type);
  }
  // Without a hint a bf16 file is just its 16-bit carrier.
  Literal bf16 = RandomLiteral(Shape::Array(P::kBF16, {4}), rng);
  auto carrier = ParseNpy(MustSerialize(bf16));
  ASSERT_TRUE(carrier.has_value());
  EXPECT_EQ(carrier->element_type(), P::kU16);
  EXPECT_EQ(carrier->GetInt(2), static_cast<int64_t>(bf16.GetBits(2)));
}

TEST(NpyTest, ExpectedShapeSuppliesLayoutAndAcceptsRawBitCarriers) {
  Layout column_major;
  column_major.minor_to_major = {0, 1};
  Shape shape = Shape::Array(PrimitiveType::kF32, {2, 3}, column_major);
  Literal values(Shape::Array(PrimitiveType::kF32, {2, 3}));
  for (int64_t i = 0; i < 6; ++i) values.SetDouble(i, 0.5 * static_cast<double>(i));
  auto back = ParseNpy(MustSerialize(values), shape);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->shape(), shape);
  EXPECT_EQ(back->GetDouble(5), 2.5);
  // f32 stored as its bits in '<u4'.
  Bytes bits = MakeNpy(Dict("<u4", "(1,)"), Bytes{0, 0, 0xC0, 0x3F});
  auto from_bits = ParseNpy(bits, Shape::Array(PrimitiveType::kF32, {1}));
  ASSERT_TRUE(from_bits.has_value()) << from_bits.error().message;
  EXPECT_EQ(from_bits->GetDouble(0), 1.5);
  // s4 as raw bits in '|u1' is sign-extended; as values in '|i1' it is range-checked.
  auto s4_bits = ParseNpy(MakeNpy(Dict("|u1", "(2,)"), Bytes{0x0E, 0x07}),
                          Shape::Array(PrimitiveType::kS4, {2}));
  ASSERT_TRUE(s4_bits.has_value()) << s4_bits.error().message;
  EXPECT_EQ(s4_bits->GetInt(0), -2);
  EXPECT_EQ(s4_bits->GetInt(1), 7);
  auto s4_values = ParseNpy(MakeNpy(Dict("|i1", "(2,)"), Bytes{0xF8, 0x07}),
                            Shape::Array(PrimitiveType::kS4, {2}));
  ASSERT_TRUE(s4_values.has_value());
  EXPECT_EQ(s4_values->GetInt(0), -8);
  // pred from '|u1' or '|b1': any nonzero byte is true.
  auto pred = ParseNpy(MakeNpy(Dict("|b1", "(2,)"), Bytes{0, 7}));
  ASSERT_TRUE(pred.has_value());
  EXPECT_EQ(pred->bytes()[1], 1);
}

TEST(NpyTest, ValuesThatDoNotFitTheirTypeAreRejected) {
  Shape s4 = Shape::Array(PrimitiveType::kS4, {2});
  EXPECT_NE(ParseError(MakeNpy(Dict("|i1", "(2,)"), Bytes{1, 100}), s4).find("element 1"),
            std::string::npos);
  EXPECT_NE(ParseError(MakeNpy(Dict("|u1", "(2,)"), Bytes{16, 0}), s4).find("s4"),
            std::string::npos);
  ParseError(MakeNpy(Dict("|u1", "(1,)"), Bytes{0x10}),
             Shape::Array(PrimitiveType::kF4E2M1FN, {1}));
  ParseError(MakeNpy(Dict("|u1", "(1,)"), Bytes{4}), Shape::Array(PrimitiveType::kU2, {1}));
}

TEST(NpyTest, ExpectedShapeMismatchNamesBothSides) {
  Literal literal(Shape::Array(PrimitiveType::kF64, {3, 4}));
  Bytes bytes = MustSerialize(literal);
  std::string wrong_type = ParseError(bytes, Shape::Array(PrimitiveType::kF32, {3, 4}));
  EXPECT_NE(wrong_type.find("f32[3,4]"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("'<f4'"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("'<f8'"), std::string::npos) << wrong_type;
  std::string wrong_dims = ParseError(bytes, Shape::Array(PrimitiveType::kF64, {4, 3}));
  EXPECT_NE(wrong_dims.find("(4, 3)"), std::string::npos) << wrong_dims;
  EXPECT_NE(wrong_dims.find("(3, 4)"), std::string::npos) << wrong_dims;
  ParseError(bytes, Shape::Array(PrimitiveType::kF64, {12}));
  ParseError(bytes, Shape::Tuple({}));
  // bf16 does not accept '<i2' (neither its dtype nor its unsigned carrier).
  ParseError(MakeNpy(Dict("<i2", "(1,)"), Bytes{0, 0}), Shape::Array(PrimitiveType::kBF16, {1}));
}

TEST(NpyTest, FortranOrderIsTransposedIntoLogicalOrder) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column.
  Bytes data;
  for (int32_t v : {1, 4, 2, 5, 3, 6}) {
    for (int b = 0; b < 4; ++b) data.push_back((v >> (8 * b)) & 0xFF);
  }
  auto literal = ParseNpy(MakeNpy(Dict("<i4", "(2, 3)", true), data));
  ASSERT_TRUE(literal.has_value()) << literal.error().message;
  EXPECT_EQ(literal->shape(), Shape::Array(PrimitiveType::kS32, {2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(literal->GetInt(i), i + 1);
  // Rank 3: element (i, j, k) is at file offset i + 2 * j + 6 * k.
  Bytes data3(24);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k)
        data3[i + 2 * j + 6 * k] = static_cast<uint8_t>(i * 12 + j * 4 + k);
    }
  }
  auto rank3 = ParseNpy(MakeNpy(Dict("|u1", "(2, 3, 4)", true), data3));
  ASSERT_TRUE(rank3.has_value());
  for (int64_t n = 0; n < 24; ++n) EXPECT_EQ(rank3->GetInt(n), n);
}

TEST(NpyTest, ZeroDimensionalAndZeroSized) {
  auto scalar = ParseNpy(MakeNpy(Dict("<f8", "()"), Bytes{0, 0, 0, 0, 0, 0, 0xF0, 0x3F}));
  ASSERT_TRUE(scalar.has_value()) << scalar.error().message;
  EXPECT_EQ(scalar->shape().rank(), 0);
  EXPECT_EQ(scalar->GetDouble(0), 1.0);
  auto empty = ParseNpy(MakeNpy(Dict("<f4", "(0, 3)", true), Bytes{}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->shape(), Shape::Array(PrimitiveType::kF32, {0, 3}));
  Bytes header_only = MustSerialize(Literal(Shape::Array(PrimitiveType::kS8, {4, 0})));
  EXPECT_EQ(header_only.size(), 128u);
}

TEST(NpyTest, FormatVersions2And3AndLongHeaders) {
  Bytes v2 = MakeNpy(Dict("<i2", "(2,)"), Bytes{1, 0, 0xFF, 0xFF}, 2);
  auto literal = ParseNpy(v2);
  ASSERT_TRUE(literal.has_value()) << literal.error().message;
  EXPECT_EQ(literal->GetInt(1), -1);
  Bytes v3 =
      MakeNpy("{\"shape\": (1,), \"descr\": \"|u1\", \"fortran_order\": False}", Bytes{9}, 3);
  auto literal3 = ParseNpy(v3);
  ASSERT_TRUE(literal3.has_value()) << literal3.error().message;
  EXPECT_EQ(literal3->GetInt(0), 9);
  EXPECT_NE(ParseError(MakeNpy(Dict("|u1", "(1,)"), Bytes{9}, 4)).find("version"),
            std::string::npos);
  // A rank this large does not fit a 16-bit header length: numpy.save switches to 2.0.
  Literal wide(Shape::Array(PrimitiveType::kU8, std::vector<int64_t>(25000, 1)));
  Bytes bytes = MustSerialize(wide);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 1) % 64, 0u);  // header aligned, then one data byte
  auto back = ParseNpy(bytes, wide.shape());
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, wide);
}

TEST(NpyTest, MalformedFilesGiveClearErrors) {
  Bytes good = MakeNpy(Dict("<f4", "(2,)"), Bytes(8, 0));
  ASSERT_TRUE(ParseNpy(good).has_value());
  EXPECT_NE(ParseError(Bytes{}).find("not a .npy"), std::string::npos);
  EXPECT_NE(ParseError(Bytes{'P', 'K', 3, 4}).find("not a .npy"), std::string::npos);
  EXPECT_NE(ParseError(MakeNpy(Dict(">f4", "(2,)"), Bytes(8, 0))).find("big-endian"),
            std::string::npos);
  EXPECT_NE(ParseError(MakeNpy(Dict("|O", "(2,)"), Bytes(16, 0))).find("object"),
            std::string::npos);
  EXPECT_NE(ParseError(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
                               Bytes(4, 0)))
                .find("structured"),
            std::string::npos);
  std::string truncated = ParseError(Bytes(good.begin(), good.end() - 1));
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("8 data bytes but 7"), std::string::npos) << truncated;
  EXPECT_NE(ParseError(MakeNpy(Dict("<f4", "(2,)"), Bytes(9, 0))).find("9 follow"),
            std::string::npos);
  for (const char* dict :
       {"{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", "['descr', '<f4']",
        "{'descr: '<f4'", "", "{'descr': '<f16', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<U5', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': "
        "(9223372036854775807, 9223372036854775807)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': "
        "(99999999999999999999,)}"}) {
    std::string error = ParseError(MakeNpy(dict, Bytes(8, 0)));
    EXPECT_FALSE(error.empty()) << dict;
  }
  // A header length that runs past the end of the file.
  Bytes long_header = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xFF, 0xFF, '{'};
  EXPECT_NE(ParseError(long_header).find("truncated"), std::string::npos);
}

TEST(NpyTest, EveryTruncationAndRandomCorruptionFailsCleanly) {
  std::mt19937 rng(5);
  Literal literal = RandomLiteral(Shape::Array(PrimitiveType::kS16, {3, 5}), rng);
  Bytes good = MustSerialize(literal);
  for (size_t size = 0; size < good.size(); ++size) {
    EXPECT_FALSE(ParseNpy(Bytes(good.begin(), good.begin() + size)).has_value()) << size;
  }
  // Corrupted bytes anywhere in the header must give a value or an error, never a crash.
  for (int trial = 0; trial < 5000; ++trial) {
    Bytes bad = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) bad[rng() % 128] = static_cast<uint8_t>(rng());
    auto result = ParseNpy(bad);
    if (result.has_value()) {
      EXPECT_LE(result->bytes().size(), bad.size());
    }
  }
}

TEST(NpyTest, FilesRoundTripAndErrorsNameThePath) {
  TempDir dir;
  std::mt19937 rng(8);
  Literal literal = RandomLiteral(Shape::Array(PrimitiveType::kBF16, {4, 4}), rng);
  std::string path = dir.File("x.npy");
  ASSERT_TRUE(WriteNpy(path, literal).has_value());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto back = ReadNpy(path, literal.shape());
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, literal);

  // f16 shares bf16's '<u2' carrier, so only the bits' meaning changes; f32 does not fit.
  EXPECT_TRUE(ReadNpy(path, Shape::Array(PrimitiveType::kF16, {4, 4})).has_value());
  auto mismatch = ReadNpy(path, Shape::Array(PrimitiveType::kF32, {4, 4}));
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_NE(mismatch.error().message.find(path), std::string::npos);
  EXPECT_NE(mismatch.error().message.find("'<f4'"), std::string::npos);
  EXPECT_NE(mismatch.error().message.find("'<u2'"), std::string::npos);

  auto missing = ReadNpy(dir.File("missing.npy"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("missing.npy"), std::string::npos);

  std::ofstream(dir.File("garbage.npy")) << "hello";
  auto garbage = ReadNpy(dir.File("garbage.npy"));
  ASSERT_FALSE(garbage.has_value());
  EXPECT_NE(garbage.error().message.find("garbage.npy"), std::string::npos);

  auto unwritable = WriteNpy(dir.File("no/such/dir/x.npy"), literal);
  ASSERT_FALSE(unwritable.has_value());
  EXPECT_EQ(unwritable.error().code, ErrorCode::kIo);
  Literal tuple(Shape::Tuple({Shape::Scalar(PrimitiveType::kF32)}));
  EXPECT_FALSE(WriteNpy(dir.File("tuple.npy"), tuple).has_value());
  Literal elided(Shape::Array(PrimitiveType::kF32, {2}));
  elided.set_elided(true);
  EXPECT_FALSE(SerializeNpy(elided).has_value());
}

// Manual interop check driven by tests/tools/check_npy_interop.py, which writes NumPy files
// and a manifest into $TILESMITH_NPY_INTEROP_DIR, runs this test, then checks what it wrote
// with NumPy. Skipped in ordinary runs, so ctest needs no Python.
TEST(NpyInteropTest, ReadsNumpyFilesAndWritesThemBack) {
  const char* dir = std::getenv("TILESMITH_NPY_INTEROP_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set TILESMITH_NPY_INTEROP_DIR (check_npy_interop.py)";
  std::ifstream manifest(std::string(dir) + "/manifest.txt");
  ASSERT_TRUE(manifest.good()) << "no manifest.txt in " << dir;
  std::string name, type_name, dims_text;
  int cases = 0;
  while (manifest >> name >> type_name >> dims_text) {
    std::optional<PrimitiveType> type = ParsePrimitiveType(type_name);
    ASSERT_TRUE(type.has_value()) << type_name;
    std::vector<int64_t> dims;
    if (dims_text != "-") {
      std::stringstream parts(dims_text);
      for (std::string part; std::getline(parts, part, ',');) dims.push_back(std::stoll(part));
    }
    auto literal = ReadNpy(std::string(dir) + "/np_" + name + ".npy", Shape::Array(*type, dims));
    ASSERT_TRUE(literal.has_value()) << literal.error().message;
    auto written = WriteNpy(std::string(dir) + "/ts_" + name + ".npy", *literal);
    ASSERT_TRUE(written.has_value()) << written.error().message;
    ++cases;
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace tilesmith::hlo
