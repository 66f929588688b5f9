// bench/gpu_compare.py where it cannot compare (this machine: no GPU, maybe no JAX): its
// help, and the one line and exit status 0 it gives when JAX, a JAX device or a GPU that
// `tilesmith tune` can time on is missing. JAX is replaced by a stub package, so the test
// needs neither JAX nor a GPU; `python3 -S` keeps any installed JAX out of reach.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tilesmith {
namespace {

namespace fs = std::filesystem;

struct ScriptRun {
  int exit_code;
  std::string out;
  std::string err;
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

class GpuCompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
    dir_ = fs::temp_directory_path() /
           ("tilesmith_gpu_compare_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// `python3 -S bench/gpu_compare.py ARGUMENTS` with PYTHONPATH=`python_path`.
  ScriptRun Script(const std::string& arguments, const std::string& python_path = "") {
    fs::path out = dir_ / "stdout.txt";
    fs::path err = dir_ / "stderr.txt";
    std::string command = "cd '" + dir_.string() + "' && PYTHONPATH='" + python_path +
                          "' python3 -S '" TILESMITH_SOURCE_DIR "/bench/gpu_compare.py' " +
                          arguments + " >'" + out.string() + "' 2>'" + err.string() + "'";
    int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out), Slurp(err)};
  }

  /// A package `jax` whose devices() lists `devices` (a Python expression) or raises, with
  /// empty numpy and ml_dtypes beside it: enough for the script's checks before it measures.
  std::string StubJax(const std::string& devices) {
    fs::path root = dir_ / "stub";
    for (const char* package : {"jax", "numpy", "ml_dtypes"}) {
      fs::create_directories(root / package);
      std::ofstream(root / package / "__init__.py") << "";
    }
    std::ofstream(root / "jax" / "__init__.py")
        << "__version__ = '0.0-stub'\n"
           "def devices(backend=None):\n"
        << (devices.empty() ? "    raise RuntimeError('Unknown backend ' + str(backend))\n"
                            : "    return " + devices + "\n");
    return root.string();
  }

  fs::path dir_;
};

std::string Gelu() { return TILESMITH_SOURCE_DIR "/configs/examples/gelu.hlo"; }

TEST_F(GpuCompareTest, HelpNamesTheBackendsAndTheJsonOutput) {
  ScriptRun run = Script("--help");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* option : {"--platform", "--target", "--json", "--quick", "--tilesmith",
                             "--copy-mib", "--flush-mib"}) {
    EXPECT_NE(run.out.find(option), std::string::npos) << option << " missing:\n" << run.out;
  }
}

TEST_F(GpuCompareTest, WithoutJaxItSaysSoInOneLineAndExitsZero) {
  ScriptRun run = Script("--tilesmith '" TILESMITH_CLI "' '" + Gelu() + "'");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_EQ(lines[0].rfind("gpu_compare: skipped: No module named", 0), 0u) << lines[0];
}

TEST_F(GpuCompareTest, WithoutAJaxGpuItSaysSoInOneLineAndExitsZero) {
  ScriptRun run =
      Script("--platform cuda --target cuda:0 --tilesmith '" TILESMITH_CLI "' '" + Gelu() + "'",
             StubJax(""));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_EQ(lines[0].rfind("gpu_compare: skipped: JAX has no cuda device here", 0), 0u) << lines[0];
}

TEST_F(GpuCompareTest, WhenTilesmithFindsNoGpuItSaysSoBeforeMeasuringAndExitsZero) {
  // JAX (the stub) claims a device; the real tilesmith decides whether cuda:0 can be timed.
  std::string probe = std::string(TILESMITH_CLI) + " tune '" + Gelu() +
                      "' --target cuda:0 --budget 1 --quiet --db '" + (dir_ / "p.db").string() +
                      "' >/dev/null 2>&1";
  if (std::system(probe.c_str()) == 0) GTEST_SKIP() << "a GPU is here: nothing is missing";
  ScriptRun run =
      Script("--platform cpu --target cuda:0 --tilesmith '" TILESMITH_CLI "' '" + Gelu() + "'",
             StubJax("['stub device']"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_EQ(lines[0].rfind("gpu_compare: skipped: tilesmith cannot time on cuda:0 here", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find("GPU"), std::string::npos) << lines[0];
}

// A reduce's init parameter gets its reducer's identity (XLA:CUDA folds an init into every
// partial sum, so only an identity gives every backend the same result); other parameters
// stay random.
TEST_F(GpuCompareTest, ReduceInitParametersGetTheReducersIdentity) {
  fs::path hlo = dir_ / "reductions.hlo";
  std::ofstream(hlo) << "HloModule m\n"
                        "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                        "  ROOT s = f32[] add(a, b)\n}\n"
                        "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                        "  ROOT m = f32[] maximum(a, b)\n}\n"
                        "fused {\n  p0 = f32[8,64] parameter(0)\n  p1 = f32[] parameter(1)\n"
                        "  p2 = f32[] parameter(2)\n  p3 = f32[] parameter(3)\n"
                        "  s = f32[8] reduce(p0, p1), dimensions={1}, to_apply=add\n"
                        "  m = f32[8] reduce(p0, p2), dimensions={1}, to_apply=max\n"
                        "  b = f32[8] broadcast(p3), dimensions={}\n"
                        "  ROOT t = (f32[8], f32[8], f32[8]) tuple(s, m, b)\n}\n"
                        "ENTRY main {\n  p0 = f32[8,64] parameter(0)\n  p1 = f32[] parameter(1)\n"
                        "  p2 = f32[] parameter(2)\n  p3 = f32[] parameter(3)\n"
                        "  ROOT f = (f32[8], f32[8], f32[8]) fusion(p0, p1, p2, p3), kind=kInput,"
                        " calls=fused\n}\n";
  fs::path out = dir_ / "identities.txt";
  std::string command =
      "cd '" TILESMITH_SOURCE_DIR
      "/bench' && python3 -S -c 'import xla_compare as x, sys; "
      "print(sorted(x.reduction_identities(x.xla_text(sys.argv[1])).items()))' '" +
      hlo.string() + "' >'" + out.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << Slurp(out);
  EXPECT_EQ(Slurp(out), "[(1, 'add'), (2, 'maximum')]\n");

  // The shared corpus's bare computations (no ENTRY): XLA takes the last one.
  std::ofstream(hlo) << "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                        "  ROOT s = f32[] add(a, b)\n}\n\n"
                        "fusion {\n  param_0 = f32[8,2048] parameter(0)\n"
                        "  param_1 = f32[] parameter(1)\n"
                        "  reduce = f32[8] reduce(param_0, param_1), dimensions={1}, to_apply=add\n"
                        "  ROOT log = f32[8] log(reduce)\n}\n";
  ASSERT_EQ(std::system(command.c_str()), 0) << Slurp(out);
  EXPECT_EQ(Slurp(out), "[(1, 'add')]\n");
}

// A dump's header pins the layouts of the entry it was dumped with (a bitcast parameter of
// another rank, a scalar); once the fusion's computation is the entry, that header would
// make XLA refuse it, so the harness drops it.
TEST_F(GpuCompareTest, TheFusionAsEntryLosesTheDumpedEntrysLayout) {
  fs::path hlo = dir_ / "dumped.hlo";
  std::ofstream(hlo) << "HloModule m, entry_computation_layout={(f32[2,3,4]{2,1,0}, f32[])"
                        "->f32[6,4]{1,0}}, allow_spmd_sharding_propagation_to_output={true}\n"
                        "fused {\n  p0 = f32[6,4]{1,0} parameter(0)\n  p1 = f32[] parameter(1)\n"
                        "  b = f32[6,4]{1,0} broadcast(p1), dimensions={}\n"
                        "  ROOT a = f32[6,4]{1,0} add(p0, b)\n}\n"
                        "ENTRY main {\n  x = f32[2,3,4]{2,1,0} parameter(0)\n"
                        "  s = f32[] parameter(1)\n  bc = f32[6,4]{1,0} bitcast(x)\n"
                        "  ROOT f = f32[6,4]{1,0} fusion(bc, s), kind=kLoop, calls=fused\n}\n";
  fs::path out = dir_ / "entry.txt";
  std::string command = "cd '" TILESMITH_SOURCE_DIR
                        "/bench' && python3 -S -c 'import xla_compare as x, sys; "
                        "print(x.xla_text(sys.argv[1]))' '" +
                        hlo.string() + "' >'" + out.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << Slurp(out);
  std::string text = Slurp(out);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule m, allow_spmd_sharding_propagation_to_output={true}");
  EXPECT_NE(text.find("ENTRY fused {"), std::string::npos) << text;
}

// Each side's timing method is named from what the tunes and XLA's timer reported: one
// method on both sides only where both are CUPTI kernel durations (or both the same clock).
TEST_F(GpuCompareTest, TheComparisonNamesEachSidesTimingMethodAndWhetherTheyMatch) {
  fs::path out = dir_ / "timing.txt";
  const char* script = R"(import xla_compare as x, gpu_compare as g

def tune(best, default, event=None):
    def summary(method):
        timing = {"timing_method": method, "event_us": event} if method else {}
        return dict({"config": {}, "median_us": 2.0, "p20_us": 1.0}, **timing)
    return {"best": summary(best), "default": summary(default), "measured": 4}

kernel = x.tune_times(tune("cupti-kernel", "cupti-kernel", 4.5))
events = x.tune_times(tune("cuda-events", "cuda-events", 4.5))
mixed = x.tune_times(tune("cupti-kernel", "cuda-events", 4.5))
host = x.tune_times(tune(None, None))
print(kernel["tilesmith_timing"], kernel["tuned_event_us"], events["tilesmith_timing"],
      mixed["tilesmith_timing"], host["tilesmith_timing"], "tuned_event_us" in host)
for rows in ([dict(kernel, xla_time="kernel")],
             [dict(kernel, xla_time="kernel"), dict(events, xla_time="kernel")],
             [dict(host, xla_time="wall")]):
    t = g.timing_methods(rows)
    print(t["xla"], "|", t["tilesmith"], "|", t["same"], "|", g.timing_line(t))
)";
  fs::path program = dir_ / "timing.py";
  std::ofstream(program) << script;
  std::string command = "PYTHONPATH='" TILESMITH_SOURCE_DIR "/bench' python3 -S '" +
                        program.string() + "' >'" + out.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << Slurp(out);
  std::vector<std::string> lines = Lines(Slurp(out));
  ASSERT_EQ(lines.size(), 4u) << Slurp(out);
  EXPECT_EQ(lines[0],
            "cupti-kernel 4.5 cuda-events mixed (cuda-events, cupti-kernel) host-clock False");
  EXPECT_EQ(lines[1].rfind("cupti-kernel | cupti-kernel | True | Timing: XLA kernel durations "
                           "from CUPTI (cupti-kernel); tilesmith kernel durations from CUPTI "
                           "(cupti-kernel): one method on both sides.",
                           0),
            0u)
      << lines[1];
  EXPECT_EQ(lines[2].rfind("cupti-kernel | mixed (cuda-events, cupti-kernel) | False |", 0), 0u)
      << lines[2];
  EXPECT_NE(lines[2].find("the sides are timed differently"), std::string::npos) << lines[2];
  EXPECT_EQ(lines[3].rfind("wall-clock | host-clock | False |", 0), 0u) << lines[3];
}

}  // namespace
}  // namespace tilesmith
