// Randomised robustness test of the HLO parser: mutated HLO (byte edits, splices, tokens
// from a dictionary) must either parse — and then print as a fixed point and fingerprint —
// or fail with a located error; what parses must also evaluate or fail cleanly. Never
// crash, never hang. `TILESMITH_FUZZ_SECONDS=N` runs it for N seconds (build with
// -fsanitize=address,undefined for long runs); inputs that once broke the parser live in
// tests/data/parser_regressions/ and run every time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/hlo/canonical.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace tilesmith::hlo {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// The property every input must satisfy. Returns a description of the violation or "".
std::string CheckInput(std::string_view text) {
  auto module = ParseHloModule(text, "fuzz.hlo");
  if (!module) {
    const std::string& message = module.error().message;
    if (!message.starts_with("fuzz.hlo:") || message.find(": error: ") == std::string::npos) {
      return "error without a location: " + message;
    }
    return "";
  }
  std::string printed = PrintModule(**module);
  auto again = ParseHloModule(printed, "printed.hlo");
  if (!again) return "printed text does not parse: " + again.error().message + "\n" + printed;
  if (PrintModule(**again) != printed) return "printing is not a fixed point:\n" + printed;
  if (CanonicalFusionText(**module) != CanonicalFusionText(**again)) {
    return "canonical text changed through printing";
  }
  // Whatever parses must also evaluate or fail cleanly (small values only, to stay fast).
  EvaluatorOptions options;
  options.max_value_bytes = 1 << 20;
  const HloComputation& fusion = *(*module)->fusion();
  auto arguments = MakeRandomArguments(fusion, /*seed=*/7, options);
  if (arguments) (void)Evaluate(fusion, *arguments, options);
  return "";
}

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {
      "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT s = f32[] add(a, b)\n}\nENTRY e {\n p = f32[8,16]{0,1:T(2,2)} parameter(0)\n"
      " c = f32[] constant(0)\n ROOT r = f32[8]{0} reduce(p, c), dimensions={1}, to_apply=add\n}\n",
      "f {\n p = s4[4,3]{1,0:E(4)} parameter(0)\n i = s32[] parameter(1)\n"
      " d = s4[2,3]{1,0:E(4)} dynamic-slice(p, i, i), dynamic_slice_sizes={2,3}\n"
      " k = s4[2,3] constant({{1, 2, 3}, {-4, -5, -6}})\n"
      " ROOT t = (s4[2,3], pred[2,3]) tuple(d, cmp)\n"
      " cmp = pred[2,3] compare(d, k), direction=LT, type=SIGNED\n}\n",
      "g {\n o = f32[30,20] parameter(0)\n i = s32[10,2] parameter(1)\n"
      " ROOT g = f32[10,4,8] gather(o, i), offset_dims={1,2}, collapsed_slice_dims={},"
      " start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,8}\n}\n",
  };
  const char* dirs[] = {TILESMITH_TEST_DATA_DIR "/eval", TILESMITH_SOURCE_DIR "/configs/examples"};
  for (const char* dir : dirs) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".hlo") seeds.push_back(ReadFile(entry.path()));
    }
  }
  return seeds;
}

const std::vector<std::string>& Dictionary() {
  static const std::vector<std::string> tokens = {
      "{",
      "}",
      "(",
      ")",
      "[",
      "]",
      ",",
      "=",
      ":",
      "%",
      "*",
      "<=",
      "?",
      "\n",
      " ",
      "\"",
      "/*",
      "//",
      "{...}",
      "T(8,128)",
      "(2,1)",
      "E(4)",
      "S(1)",
      "L(3)",
      "ROOT ",
      "ENTRY ",
      "HloModule x\n",
      "-1",
      "0",
      "1",
      "9223372036854775807",
      "99999999999999999999",
      "-inf",
      "nan",
      "1e400",
      "f32",
      "bf16",
      "s4",
      "pred",
      "c64",
      "token",
      "f32[]",
      "f32[3,5]",
      "(f32[], s32[2])",
      "tuple",
      "parameter(",
      "constant(",
      "dimensions={0}",
      "dimensions={5}",
      "to_apply=",
      "calls=",
      "slice={[0:1:1]}",
      "padding=0_0x1_-1_2",
      "window={size=2 stride=1}",
      "index=7",
      "fusion",
      "reduce",
      "broadcast",
      "transpose",
      "add",
      "bitcast",
      "iota()",
      "iota_dimension=3",
      "direction=GT",
      "kind=kLoop",
  };
  return tokens;
}

std::string Mutate(std::string text, std::mt19937_64& random,
                   const std::vector<std::string>& seeds) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(random() % n); };
  int edits = 1 + static_cast<int>(random() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t at = pick(text.size() + 1);
    switch (random() % 7) {
      case 0:  // flip a byte
        if (!text.empty()) text[pick(text.size())] = static_cast<char>(random() % 128);
        break;
      case 1:  // delete a range
        text.erase(at, 1 + pick(16));
        break;
      case 2:  // duplicate a range
        if (at < text.size()) text.insert(at, text.substr(at, 1 + pick(40)));
        break;
      case 3:  // insert a token
        text.insert(at, Dictionary()[pick(Dictionary().size())]);
        break;
      case 4:  // splice in part of another seed
      {
        const std::string& other = seeds[pick(seeds.size())];
        size_t from = pick(other.size());
        text.insert(at, other.substr(from, 1 + pick(80)));
        break;
      }
      case 5:  // truncate
        text.resize(at);
        break;
      default:  // replace a digit run with a random number
      {
        size_t digit = text.find_first_of("0123456789", at);
        if (digit != std::string::npos) {
          text.replace(digit, 1, std::to_string(static_cast<int64_t>(random() % 200) - 50));
        }
        break;
      }
    }
  }
  return text;
}

TEST(ParserFuzzTest, RegressionInputs) {
  fs::path dir = fs::path(TILESMITH_TEST_DATA_DIR) / "parser_regressions";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string problem = CheckInput(ReadFile(entry.path()));
    EXPECT_EQ(problem, "") << entry.path();
    ++count;
  }
  EXPECT_GT(count, 0);
}

TEST(ParserFuzzTest, MutatedInputsNeverCrash) {
  double seconds = 5;
  if (const char* env = std::getenv("TILESMITH_FUZZ_SECONDS")) seconds = std::atof(env);
  std::vector<std::string> seeds = Seeds();
  std::mt19937_64 random(20261122);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int64_t runs = 0;
  int64_t parsed = 0;
  std::vector<std::string> corpus = seeds;  // inputs that parsed are mutated further
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 100; ++i, ++runs) {
      std::string input = Mutate(corpus[random() % corpus.size()], random, seeds);
      std::string problem;
      try {
        problem = CheckInput(input);
      } catch (const std::exception& e) {
        problem = std::string("exception: ") + e.what();
      }
      ASSERT_EQ(problem, "") << "input:\n" << input;
      if (ParseHloModule(input).has_value()) {
        ++parsed;
        if (corpus.size() < 2000) corpus.push_back(std::move(input));
      }
    }
  }
  std::cerr << "fuzz: " << runs << " inputs, " << parsed << " parsed\n";
  EXPECT_GT(runs, 1000);
}

}  // namespace
}  // namespace tilesmith::hlo
