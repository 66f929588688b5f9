// Checks the narrow float codecs bit-exactly against ml_dtypes, XLA's reference, through
// tests/data/float_golden.txt (written by tests/tools/gen_float_golden.py).
#include "compiler/hlo/float_types.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tilesmith::hlo {
namespace {

constexpr uint32_t kCanonicalNan = 0x7FC00000u;

struct EncodeCase {
  uint32_t input;                  // f32 bits
  std::vector<uint32_t> expected;  // one per column type
};

struct Golden {
  std::map<PrimitiveType, std::vector<uint32_t>> decode;  // every pattern
  std::map<PrimitiveType, uint64_t> decode_fnv;           // 16-bit types
  std::map<PrimitiveType, std::vector<std::pair<uint32_t, uint32_t>>> decode_sample;
  std::vector<PrimitiveType> encode_types;
  std::vector<EncodeCase> encode;
  std::string error;  // non-empty if the file could not be read
};

uint32_t Hex(const std::string& text) {
  return static_cast<uint32_t>(std::stoul(text, nullptr, 16));
}

Golden ReadGolden() {
  Golden golden;
  std::string path = std::string(TILESMITH_TEST_DATA_DIR) + "/float_golden.txt";
  std::ifstream in(path);
  if (!in) {
    golden.error = "cannot open " + path;
    return golden;
  }
  auto type_named = [&](const std::string& name) {
    std::optional<PrimitiveType> type = ParsePrimitiveType(name);
    if (!type) golden.error = "unknown type '" + name + "' in " + path;
    return type.value_or(PrimitiveType::kInvalid);
  };
  std::string line;
  while (std::getline(in, line) && golden.error.empty()) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "decode") {
      std::string name;
      size_t count;
      fields >> name >> count;
      std::vector<uint32_t>& values = golden.decode[type_named(name)];
      std::string word;
      while (values.size() < count && in >> word) values.push_back(Hex(word));
    } else if (kind == "decode_fnv") {
      std::string name, hash;
      fields >> name >> hash;
      golden.decode_fnv[type_named(name)] = std::stoull(hash, nullptr, 16);
    } else if (kind == "decode_sample") {
      std::string name, bits, value;
      size_t count;
      fields >> name >> count;
      auto& sample = golden.decode_sample[type_named(name)];
      while (sample.size() < count && in >> bits >> value) {
        sample.emplace_back(Hex(bits), Hex(value));
      }
    } else if (kind == "encode") {
      size_t count;
      fields >> count;
      std::string name;
      while (fields >> name) golden.encode_types.push_back(type_named(name));
      std::string word;
      for (size_t i = 0; i < count && in >> word; ++i) {
        EncodeCase c{Hex(word), {}};
        for (size_t t = 0; t < golden.encode_types.size() && in >> word; ++t) {
          c.expected.push_back(Hex(word));
        }
        golden.encode.push_back(std::move(c));
      }
    } else {
      golden.error = "unexpected line '" + line + "' in " + path;
    }
  }
  return golden;
}

const Golden& GetGolden() {
  static const Golden golden = ReadGolden();
  return golden;
}

std::string HexText(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%08x", value);
  return buffer;
}

// Equal as f32 bit patterns, or both NaN (decoded NaN payloads are not compared).
bool SameValue(float actual, uint32_t expected_bits) {
  float expected = std::bit_cast<float>(expected_bits);
  if (std::isnan(expected)) return std::isnan(actual);
  return std::bit_cast<uint32_t>(actual) == expected_bits;
}

// Collects mismatches so that a failure shows the first few cases and the total.
class Mismatches {
 public:
  void Add(std::string text) {
    if (count_++ < 12) text_ += text + "\n";
  }
  int count() const { return count_; }
  std::string Report() const { return std::to_string(count_) + " mismatches:\n" + text_; }

 private:
  int count_ = 0;
  std::string text_;
};

TEST(FloatGoldenTest, FileCoversEveryNarrowType) {
  const Golden& golden = GetGolden();
  ASSERT_EQ(golden.error, "");
  for (PrimitiveType type : AllArrayTypes()) {
    if (!IsNarrowFloat(type)) continue;
    EXPECT_TRUE(golden.decode.contains(type) || golden.decode_fnv.contains(type))
        << PrimitiveTypeName(type);
    EXPECT_NE(std::find(golden.encode_types.begin(), golden.encode_types.end(), type),
              golden.encode_types.end())
        << PrimitiveTypeName(type);
  }
  EXPECT_GT(golden.encode.size(), 2000u);
}

TEST(FloatGoldenTest, DecodeEveryPatternOfNarrowTypes) {
  const Golden& golden = GetGolden();
  ASSERT_EQ(golden.error, "");
  for (const auto& [type, values] : golden.decode) {
    ASSERT_EQ(values.size(), size_t{1} << BitWidth(type)) << PrimitiveTypeName(type);
    Mismatches mismatches;
    for (uint32_t bits = 0; bits < values.size(); ++bits) {
      float actual = DecodeNarrowFloat(type, bits);
      if (!SameValue(actual, values[bits])) {
        mismatches.Add(HexText(bits) + ": got " + HexText(std::bit_cast<uint32_t>(actual)) +
                       ", ml_dtypes " + HexText(values[bits]));
      }
    }
    EXPECT_EQ(mismatches.count(), 0) << PrimitiveTypeName(type) << ": " << mismatches.Report();
  }
}

uint64_t Fnv1a64(uint64_t hash, uint32_t word) {
  for (int i = 0; i < 4; ++i) {
    hash ^= (word >> (8 * i)) & 0xFFu;
    hash *= 0x100000001B3ull;
  }
  return hash;
}

TEST(FloatGoldenTest, DecodeEveryPatternOf16BitTypes) {
  const Golden& golden = GetGolden();
  ASSERT_EQ(golden.error, "");
  ASSERT_EQ(golden.decode_fnv.size(), 2u);
  for (const auto& [type, expected_hash] : golden.decode_fnv) {
    // The sample pinpoints a failure; the hash covers all 65536 patterns.
    Mismatches mismatches;
    for (auto [bits, expected] : golden.decode_sample.at(type)) {
      float actual = DecodeNarrowFloat(type, bits);
      if (!SameValue(actual, expected)) {
        mismatches.Add(HexText(bits) + ": got " + HexText(std::bit_cast<uint32_t>(actual)) +
                       ", ml_dtypes " + HexText(expected));
      }
    }
    EXPECT_EQ(mismatches.count(), 0) << PrimitiveTypeName(type) << ": " << mismatches.Report();
    uint64_t hash = 0xCBF29CE484222325ull;
    for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
      float value = DecodeNarrowFloat(type, bits);
      hash = Fnv1a64(hash, std::isnan(value) ? kCanonicalNan : std::bit_cast<uint32_t>(value));
    }
    EXPECT_EQ(hash, expected_hash) << PrimitiveTypeName(type);
  }
}

TEST(FloatGoldenTest, EncodeMatchesMlDtypes) {
  const Golden& golden = GetGolden();
  ASSERT_EQ(golden.error, "");
  for (size_t t = 0; t < golden.encode_types.size(); ++t) {
    PrimitiveType type = golden.encode_types[t];
    Mismatches encode, encode_double, round;
    for (const EncodeCase& c : golden.encode) {
      float input = std::bit_cast<float>(c.input);
      uint32_t expected = c.expected[t];
      uint32_t actual = EncodeNarrowFloat(type, input);
      if (actual != expected) {
        encode.Add(HexText(c.input) + ": got " + HexText(actual) + ", ml_dtypes " +
                   HexText(expected));
      }
      // f32 -> f64 is exact, so the double path must round the same way. Signalling NaNs
      // are quieted by that widening, so only their NaN-ness and sign must survive.
      uint32_t from_double = EncodeNarrowFloatFromDouble(type, static_cast<double>(input));
      bool same = from_double == expected;
      if (!same && std::isnan(input)) {
        float a = DecodeNarrowFloat(type, from_double), e = DecodeNarrowFloat(type, expected);
        same = std::isnan(a) && std::isnan(e) && std::signbit(a) == std::signbit(e);
      }
      if (!same) {
        encode_double.Add(HexText(c.input) + ": got " + HexText(from_double) + ", ml_dtypes " +
                          HexText(expected));
      }
      float rounded = RoundToNarrowFloat(type, input);
      uint32_t expected_rounded = std::bit_cast<uint32_t>(DecodeNarrowFloat(type, expected));
      if (!SameValue(rounded, expected_rounded)) {
        round.Add(HexText(c.input) + ": got " + HexText(std::bit_cast<uint32_t>(rounded)) +
                  ", expected " + HexText(expected_rounded));
      }
    }
    std::string name(PrimitiveTypeName(type));
    EXPECT_EQ(encode.count(), 0) << "EncodeNarrowFloat " << name << ": " << encode.Report();
    EXPECT_EQ(encode_double.count(), 0)
        << "EncodeNarrowFloatFromDouble " << name << ": " << encode_double.Report();
    EXPECT_EQ(round.count(), 0) << "RoundToNarrowFloat " << name << ": " << round.Report();
  }
}

// The fast 16-bit paths against the general rounding, over every 97th f32 bit pattern
// (about 44 million, covering every exponent and many ties).
TEST(FloatFastPathTest, Bf16AndF16AgreeWithGenericEncoder) {
  Mismatches bf16, f16;
  constexpr uint64_t kStride = 97;
  for (uint64_t n = 0; n < (uint64_t{1} << 32); n += kStride) {
    uint32_t bits = static_cast<uint32_t>(n);
    float value = std::bit_cast<float>(bits);
    bool nan = std::isnan(value);
    uint32_t fast_bf16 = FloatToBf16Bits(value);
    uint32_t slow_bf16 = EncodeNarrowFloatFromDouble(PrimitiveType::kBF16, value);
    if (fast_bf16 != slow_bf16) {
      bf16.Add(HexText(bits) + ": fast " + HexText(fast_bf16) + ", generic " + HexText(slow_bf16));
    }
    uint32_t fast_f16 = FloatToF16Bits(value);
    uint32_t slow_f16 = EncodeNarrowFloatFromDouble(PrimitiveType::kF16, value);
    // Widening to f64 quiets signalling NaNs; compare NaN-ness and sign for those.
    bool same = fast_f16 == slow_f16 ||
                (nan && (fast_f16 & 0x7C00u) == 0x7C00u && (fast_f16 & 0x3FFu) != 0 &&
                 (slow_f16 & 0x7C00u) == 0x7C00u && (slow_f16 & 0x3FFu) != 0 &&
                 (fast_f16 & 0x8000u) == (slow_f16 & 0x8000u));
    if (!same) {
      f16.Add(HexText(bits) + ": fast " + HexText(fast_f16) + ", generic " + HexText(slow_f16));
    }
  }
  EXPECT_EQ(bf16.count(), 0) << "bf16: " << bf16.Report();
  EXPECT_EQ(f16.count(), 0) << "f16: " << f16.Report();
}

TEST(FloatFastPathTest, DecodersAgreeWithEncoders) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    float bf16 = Bf16BitsToFloat(static_cast<uint16_t>(bits));
    float f16 = F16BitsToFloat(static_cast<uint16_t>(bits));
    // Every non-NaN value re-encodes to itself.
    if (!std::isnan(bf16)) {
      EXPECT_EQ(FloatToBf16Bits(bf16), bits);
    }
    if (!std::isnan(f16)) {
      EXPECT_EQ(FloatToF16Bits(f16), bits);
    }
  }
}

// Manual exhaustive check against tests/tools/float_exhaustive_hashes.py output named by
// $TILESMITH_FLOAT_HASHES (about 20 s per chunk); skipped in ordinary runs.
TEST(FloatExhaustiveTest, ChunkHashesMatchMlDtypes) {
  const char* path = std::getenv("TILESMITH_FLOAT_HASHES");
  if (path == nullptr) GTEST_SKIP() << "set TILESMITH_FLOAT_HASHES (float_exhaustive_hashes.py)";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  std::getline(in, line);
  std::istringstream names(line.substr(1));
  std::vector<PrimitiveType> types;
  for (std::string name; names >> name;) types.push_back(ParsePrimitiveType(name).value());
  int chunks = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uint64_t chunk;
    fields >> chunk;
    std::vector<uint64_t> hashes(types.size(), 0);
    for (uint64_t n = chunk << 26; n < (chunk + 1) << 26; ++n) {
      uint64_t weight = (n * 0x9E3779B97F4A7C15ull) | 1;
      float value = std::bit_cast<float>(static_cast<uint32_t>(n));
      for (size_t t = 0; t < types.size(); ++t) {
        hashes[t] += (uint64_t{EncodeNarrowFloat(types[t], value)} + 1) * weight;
      }
    }
    for (size_t t = 0; t < types.size(); ++t) {
      std::string expected;
      fields >> expected;
      EXPECT_EQ(hashes[t], std::stoull(expected, nullptr, 16))
          << "chunk " << chunk << ", " << PrimitiveTypeName(types[t]);
    }
    ++chunks;
  }
  EXPECT_GT(chunks, 0);
}

}  // namespace
}  // namespace tilesmith::hlo
