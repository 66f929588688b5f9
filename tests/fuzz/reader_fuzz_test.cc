// The readers fuzzed with seeded, bounded loops: the HLO parser, the AscGraph reader and
// the .npy reader on mutants of real inputs (tests/fuzz/mutate.h), then modules that parse
// through `tilesmith analyze`, `predict` and a host `check` as processes, so the back end
// meets odd shapes too. Properties: no crash, no hang (a watchdog aborts an input that takes
// over 20 s), and the commands exit 0, 1 or 2 with a message. An input that kills the
// process is written to $TMPDIR/tilesmith_fuzz_crash_PID.bin first (the path is printed).
//
// TILESMITH_FUZZ_SECONDS scales every loop's time budget (default 1: about 60 s in all);
// TILESMITH_FUZZ_SEED picks another seed (default 1).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <thread>

#include "tests/fuzz/mutate.h"
#include "tests/fuzz/reader_targets.h"

namespace tilesmith::fuzz {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- crash dumps and the watchdog ------------------------------------------------------

const char* g_input = nullptr;
size_t g_input_size = 0;
std::atomic<uint64_t> g_progress{0};
char g_dump_path[512] = {};

void DumpAndDie(int signal_number) {
  if (g_input != nullptr && g_dump_path[0] != '\0') {
    int fd = open(g_dump_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!write(fd, g_input, g_input_size);
      close(fd);
    }
    constexpr char kMessage[] = "\nfuzz: the input in flight is in ";
    (void)!write(2, kMessage, sizeof(kMessage) - 1);
    (void)!write(2, g_dump_path, strlen(g_dump_path));
    (void)!write(2, "\n", 1);
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

/// Installs the crash dump and a watchdog that aborts when one input takes over 20 s.
class Guard {
 public:
  Guard() {
    std::string path =
        (fs::temp_directory_path() / ("tilesmith_fuzz_crash_" + std::to_string(getpid()) + ".bin"))
            .string();
    snprintf(g_dump_path, sizeof(g_dump_path), "%s", path.c_str());
    for (int s : {SIGSEGV, SIGFPE, SIGABRT, SIGBUS, SIGILL}) std::signal(s, DumpAndDie);
    watchdog_ = std::thread([this] {
      uint64_t seen = g_progress.load();
      int still = 0;
      while (!done_.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        uint64_t now = g_progress.load();
        still = now == seen && g_input != nullptr ? still + 1 : 0;
        seen = now;
        if (still > 200) {
          std::cerr << "fuzz: one input took over 20 s (a hang)\n";
          std::abort();
        }
      }
    });
  }
  ~Guard() {
    done_ = true;
    watchdog_.join();
    g_input = nullptr;
  }
  /// Marks `input` as the one in flight.
  static void Current(std::string_view input) {
    g_input = input.data();
    g_input_size = input.size();
    ++g_progress;
  }

 private:
  std::atomic<bool> done_{false};
  std::thread watchdog_;
};

// ---- seeds --------------------------------------------------------------------------------

double Scale() {
  const char* value = std::getenv("TILESMITH_FUZZ_SECONDS");
  return value != nullptr ? std::max(0.05, std::atof(value)) : 1.0;
}

uint64_t Seed() {
  const char* value = std::getenv("TILESMITH_FUZZ_SEED");
  return value != nullptr ? std::strtoull(value, nullptr, 10) : 1;
}

fs::path CorpusDir() {
  const char* dir = std::getenv("TILESMITH_CORPUS_DIR");
  return dir != nullptr ? fs::path(dir) : fs::path(TILESMITH_DEFAULT_CORPUS_DIR);
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

/// Files under `dir` (recursively when `deep`) whose names end with `suffix`, sorted.
std::vector<std::string> Files(const fs::path& dir, std::string_view suffix, bool deep = false) {
  std::vector<fs::path> paths;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return {};
  auto add = [&](const fs::directory_entry& entry) {
    if (entry.is_regular_file() && entry.path().string().ends_with(suffix)) {
      paths.push_back(entry.path());
    }
  };
  if (deep) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) add(entry);
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) add(entry);
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> contents;
  for (const fs::path& path : paths) contents.push_back(ReadBytes(path));
  return contents;
}

std::vector<std::string> HloSeeds() {
  fs::path data = TILESMITH_TEST_DATA_DIR;
  std::vector<std::string> seeds =
      Files(fs::path(TILESMITH_SOURCE_DIR) / "configs/examples", ".hlo");
  for (const auto& dir : {data, data / "eval", data / "parser_regressions"}) {
    for (std::string& text : Files(dir, ".hlo")) seeds.push_back(std::move(text));
  }
  for (std::string& text : Files(CorpusDir() / "xla", ".hlo", true))
    seeds.push_back(std::move(text));
  return seeds;
}

struct AscSeed {
  std::string bytes;
  bool json;
};

std::vector<AscSeed> AscGraphSeeds() {
  std::vector<AscSeed> seeds;
  std::vector<fs::path> dirs = {fs::path(TILESMITH_SOURCE_DIR) / "configs/examples/ascgraph",
                                fs::path(TILESMITH_TEST_DATA_DIR) / "ascgraph",
                                CorpusDir() / "ascgraph"};
  for (const fs::path& dir : dirs) {
    for (std::string& text : Files(dir, ".ascgraph.txt", true)) seeds.push_back({text, false});
    for (std::string& text : Files(dir, ".ascgraph.json", true)) seeds.push_back({text, true});
  }
  return seeds;
}

/// The largest element count of any shape in `text` (0 when it names none).
double LargestShape(const std::string& text) {
  double largest = 0;
  for (size_t open = text.find('['); open != std::string::npos; open = text.find('[', open + 1)) {
    size_t close = text.find(']', open);
    if (close == std::string::npos) break;
    double count = 1;
    bool digits = close > open + 1;
    for (size_t i = open + 1; i < close; ++i) {
      if (text[i] != ',' && !std::isdigit(static_cast<unsigned char>(text[i]))) digits = false;
    }
    if (!digits) continue;
    for (size_t i = open + 1; i < close;) {
      count *= std::atof(text.c_str() + i);
      i = text.find(',', i);
      if (i == std::string::npos || i > close) break;
      ++i;
    }
    largest = std::max(largest, count);
  }
  return largest;
}

/// Runs `loop(iteration)` until `iterations` or `seconds` (scaled) run out; the count run.
template <typename Loop>
int Bounded(int iterations, double seconds, Loop loop) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds * Scale());
  int done = 0;
  for (; done < iterations && Clock::now() < deadline; ++done) loop(done);
  return done;
}

// ---- the readers --------------------------------------------------------------------------

TEST(ReaderFuzz, HloParserSurvivesMutants) {
  std::vector<std::string> seeds = HloSeeds();
  ASSERT_GT(seeds.size(), 10u);
  Guard guard;
  Mutator mutator(Seed());
  int parsed = 0;
  int run = Bounded(200000, 10, [&](int) {
    std::string mutant = mutator.Mutate(seeds[mutator.Below(seeds.size())]);
    Guard::Current(mutant);
    if (ReadHloTarget(mutant)) ++parsed;
  });
  std::cout << "hlo parser: " << run << " mutants of " << seeds.size() << " seeds, " << parsed
            << " parsed\n";
  EXPECT_GT(run, 100);
}

TEST(ReaderFuzz, AscGraphReaderSurvivesMutants) {
  std::vector<AscSeed> seeds = AscGraphSeeds();
  ASSERT_GT(seeds.size(), 5u);
  Guard guard;
  Mutator mutator(Seed());
  int lowered = 0;
  int run = Bounded(100000, 8, [&](int) {
    const AscSeed& seed = seeds[mutator.Below(seeds.size())];
    std::string mutant = mutator.Mutate(seed.bytes);
    Guard::Current(mutant);
    int64_t size = mutator.OneIn(8) ? static_cast<int64_t>(mutator.Below(3)) : 4;
    if (ReadAscGraphTarget(mutant, seed.json, size)) ++lowered;
  });
  std::cout << "ascgraph reader: " << run << " mutants of " << seeds.size() << " seeds, " << lowered
            << " lowered\n";
  EXPECT_GT(run, 100);
}

TEST(ReaderFuzz, NpyReaderSurvivesMutants) {
  std::vector<std::string> seeds =
      Files(fs::path(TILESMITH_TEST_DATA_DIR) / "ascgraph", ".npy", true);
  seeds.resize(std::min<size_t>(seeds.size(), 60));
  // Headers the files lack: format 2.0 and 3.0, Fortran order, a zero and a huge dimension.
  std::string data(24, '\1');
  auto npy = [&](std::string version, std::string header) {
    size_t prefix = version == "\x01" ? 10 : 12;
    header.append(64 - (prefix + header.size() + 1) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY" + version + std::string("\0", 1);
    uint32_t length = static_cast<uint32_t>(header.size());
    for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
    return out + header + data;
  };
  seeds.push_back(npy("\x02", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"));
  seeds.push_back(npy("\x03", "{'descr': '<u2', 'fortran_order': False, 'shape': (12,), }"));
  seeds.push_back(npy("\x01", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }"));
  seeds.push_back(
      npy("\x01", "{'descr': '|b1', 'fortran_order': False, 'shape': (9223372036854775807, 2), }"));
  seeds.push_back(npy("\x01", "{'descr': '<c8', 'fortran_order': False, 'shape': (), }"));
  Guard guard;
  Mutator mutator(Seed());
  int parsed = 0;
  int run = Bounded(200000, 5, [&](int) {
    std::string mutant = mutator.Mutate(seeds[mutator.Below(seeds.size())]);
    Guard::Current(mutant);
    auto bytes = std::span(reinterpret_cast<const uint8_t*>(mutant.data()), mutant.size());
    if (ReadNpyTarget(bytes)) ++parsed;
  });
  std::cout << "npy reader: " << run << " mutants of " << seeds.size() << " seeds, " << parsed
            << " parsed\n";
  EXPECT_GT(run, 100);
}

// ---- the back end, as processes -----------------------------------------------------------

struct Outcome {
  int code;
  std::string err;
};

/// `tilesmith ARGS` in `dir` under a timeout (124 when it runs out).
Outcome Run(const fs::path& dir, const std::string& args, int timeout_s = 60) {
  std::string err_path = (dir / "stderr.txt").string();
  std::string command = "cd '" + dir.string() + "' && timeout -k 5 " + std::to_string(timeout_s) +
                        " " + TILESMITH_CLI + " " + args + " >/dev/null 2>'" + err_path + "'";
  int status = std::system(command.c_str());
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, ReadBytes(err_path)};
}

/// Mutants (of small seeds, small dimensions unless `any_dims`) that still parse, made until
/// `count` are found or the budget runs out; AscGraph mutants are lowered to HLO first.
std::vector<std::string> ParsedMutants(size_t count, bool any_dims, double seconds) {
  std::vector<std::string> small;
  for (std::string& text : HloSeeds()) {
    if (LargestShape(text) <= 65536 && ReadHloTarget(text)) small.push_back(std::move(text));
  }
  std::vector<AscSeed> asc = AscGraphSeeds();
  Mutator mutator(Seed() * 7919 + (any_dims ? 1 : 0));
  std::vector<std::string> found;
  Dims dims = any_dims ? Dims::kAny : Dims::kSmall;
  Bounded(100000, seconds, [&](int) {
    if (found.size() >= count) return;
    if (mutator.OneIn(4) && !asc.empty()) {
      const AscSeed& seed = asc[mutator.Below(asc.size())];
      auto text = ReadAscGraphTarget(mutator.Mutate(seed.bytes, dims), seed.json,
                                     mutator.OneIn(6) ? 0 : 1 + mutator.Below(8));
      if (text) found.push_back(*text);
      return;
    }
    const std::string& seed = small[mutator.Below(small.size())];
    // Shape-level mutations only: they keep most mutants parsing.
    std::string mutant = seed;
    for (int i = 0; i < 2; ++i) {
      mutant = mutator.OneIn(2) ? mutator.ReplaceDimension(std::move(mutant), dims)
                                : mutator.ReplaceElementType(std::move(mutant));
    }
    if (mutant != seed && ReadHloTarget(mutant)) found.push_back(std::move(mutant));
  });
  return found;
}

bool ExpectCleanExit(const Outcome& outcome, const std::string& what, const fs::path& file) {
  bool clean =
      outcome.code == 0 || ((outcome.code == 1 || outcome.code == 2) && !outcome.err.empty());
  EXPECT_TRUE(clean) << what << " exited " << outcome.code
                     << (outcome.code == 124 ? " (timed out)" : "")
                     << (outcome.code > 128 ? " (killed by a signal)" : "") << " on " << file
                     << "\n"
                     << outcome.err.substr(0, 2000);
  return clean;
}

/// Runs analyze, predict and (when `check`) a host check on each mutant until the budget is
/// spent; a failing mutant's file is kept.
void BackEnd(const std::vector<std::string>& mutants, bool check, double seconds,
             const std::string& label) {
  fs::path dir =
      fs::temp_directory_path() / ("tilesmith_fuzz_" + label + "_" + std::to_string(getpid()));
  fs::create_directories(dir);
  int done = Bounded(static_cast<int>(mutants.size()), seconds, [&](int i) {
    fs::path file = dir / ("mutant_" + std::to_string(i) + ".hlo");
    std::ofstream(file) << mutants[i];
    const char* target = i % 2 == 0 ? "host" : "cuda:sm_90";
    bool clean = ExpectCleanExit(
        Run(dir, "analyze '" + file.string() + "' --json --target " + target), "analyze", file);
    // A few candidates compiled, not predict's default 64: the compiler still meets the
    // odd shapes, and the test's time stays bounded on a busy 2-core machine.
    // Compiling 16 transcendental outputs of 2^31 f8 elements for sm_90 takes 13 s on an
    // idle 2-core machine and over 40 s on a loaded one: the limit catches a hang, not that.
    clean &= ExpectCleanExit(
        Run(dir, "predict '" + file.string() + "' --top 2 --compile 4 --target " + target, 150),
        "predict", file);
    if (check) {
      clean &= ExpectCleanExit(
          Run(dir, "check '" + file.string() + "' --target host --configs default"), "check", file);
    }
    if (clean) fs::remove(file);
  });
  std::cout << label << ": " << done << " of " << mutants.size()
            << " parsed mutants through analyze, predict" << (check ? ", check" : "") << "\n";
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

TEST(ReaderFuzz, BackEndMeetsSmallOddShapes) {
  std::vector<std::string> mutants = ParsedMutants(40, false, 5);
  ASSERT_GT(mutants.size(), 5u);
  BackEnd(mutants, true, 20, "small");
}

TEST(ReaderFuzz, AnalysisAndModelMeetHugeShapes) {
  std::vector<std::string> mutants = ParsedMutants(40, true, 5);
  ASSERT_GT(mutants.size(), 5u);
  BackEnd(mutants, false, 10, "huge");
}

}  // namespace
}  // namespace tilesmith::fuzz
