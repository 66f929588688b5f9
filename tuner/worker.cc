#include "tuner/worker.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>

#include "compiler/codegen/host_backend.h"
#include "compiler/codegen/nvptx_backend.h"
#include "compiler/emitters/emitter_registry.h"
#include "compiler/emitters/reduction_emitter.h"
#include "compiler/hlo/buffer.h"
#include "compiler/hlo/evaluator.h"
#include "compiler/hlo/npy.h"
#include "compiler/hlo/tiling.h"
#include "support/cache_eviction.h"
#include "tuner/cuda_measure.h"
#include "tuner/layouts.h"
#include "tuner/verify.h"

namespace tilesmith::tuner {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr uint8_t kGuardByte = 0xA5;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One kernel buffer with a red zone on each side, placed at BufferPageOffset(position).
class GuardedBuffer {
 public:
  GuardedBuffer(int64_t size, int64_t position)
      : size_(size), start_(kRedZoneBytes + BufferPageOffset(position)) {
    static_assert(kRedZoneBytes % kBufferPageBytes == 0, "a red zone spans whole pages");
    total_ = RoundUpToPages(start_ + size + kRedZoneBytes);
    memory_ = static_cast<uint8_t*>(std::aligned_alloc(kBufferPageBytes, total_));
    if (memory_ == nullptr) throw std::bad_alloc();
    std::memset(memory_, kGuardByte, total_);
  }
  ~GuardedBuffer() { std::free(memory_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  uint8_t* data() const { return memory_ + start_; }
  int64_t size() const { return size_; }
  /// Both red zones still hold the guard pattern (the bytes before the data and after it,
  /// to the end of its last page).
  bool Intact() const {
    for (int64_t i = 0; i < start_; ++i) {
      if (memory_[i] != kGuardByte) return false;
    }
    for (int64_t i = start_ + size_; i < total_; ++i) {
      if (memory_[i] != kGuardByte) return false;
    }
    return true;
  }

 private:
  int64_t size_;
  int64_t start_;  // where the data begins
  int64_t total_ = 0;
  uint8_t* memory_ = nullptr;
};

// The fault the test hook assigns to `config`, or "".
std::string InjectedFault(const nlohmann::json& config) {
  const char* text = std::getenv("TILESMITH_WORKER_FAULT");
  if (text == nullptr || *text == '\0') return "";
  nlohmann::json faults = nlohmann::json::parse(text, nullptr, false);
  if (!faults.is_object()) return "";
  for (const auto& [fault, subset] : faults.items()) {
    bool matches = subset.is_object();
    for (const auto& [field, value] : subset.items()) {
      matches = matches && config.contains(field) && config[field] == value;
    }
    if (matches) return fault;
  }
  return "";
}

class Worker {
 public:
  Worker(const hlo::HloModule& module, const emitters::Target& target,
         const emitters::DeviceInfo& device, std::ostream& out)
      : module_(module),
        target_(target),
        fusion_(*module.fusion()),
        device_(device),
        analysis_(analysis::AnalyzeFusion(fusion_)),
        out_(out) {}

  /// Answers one request; false when the worker must exit (a broken CUDA context).
  bool Serve(const nlohmann::json& request) {
    nlohmann::json answer = Measure(request);
    answer["id"] = request.value("id", 0);
    Send(answer);
    return !answer.value("exit", false);
  }

 private:
  void Send(const nlohmann::json& line) { out_ << line.dump() << std::endl; }

  static nlohmann::json Failure(const std::string& status, const std::string& message) {
    return {{"status", status}, {"message", message}};
  }

  // The analysis of the fusion under `layouts` (null: as given), made once per choice.
  Expected<const analysis::FusionAnalysis*> AnalysisFor(const nlohmann::json& layouts) {
    if (layouts.is_null()) return &analysis_;
    auto& variant = variants_[layouts.dump()];
    if (!variant.first) {
      TS_ASSIGN_OR_RETURN(variant.first, WithLayouts(module_, layouts));
      variant.second = std::make_unique<analysis::FusionAnalysis>(
          analysis::AnalyzeFusion(*variant.first->fusion()));
    }
    return variant.second.get();
  }

  // An input buffer's bytes: its argument laid out as the kernel expects.
  Expected<std::vector<uint8_t>> InputBytes(const emitters::KernelBuffer& buffer) {
    std::vector<const hlo::Literal*> leaves = FlattenOutputs((*arguments_)[buffer.index]);
    const hlo::Literal& argument = *leaves[buffer.leaf < 0 ? 0 : buffer.leaf];
    hlo::Literal relaid(buffer.shape);
    std::memcpy(relaid.bytes().data(), argument.bytes().data(), argument.bytes().size());
    return hlo::ToPhysicalBuffer(relaid);
  }

  Status PrepareInputs() {
    if (arguments_) return OkStatus();
    TS_ASSIGN_OR_RETURN(arguments_, hlo::MakeRandomArguments(fusion_, /*seed=*/0));
    return OkStatus();
  }

  // The expected outputs: the evaluator's, or the reference candidate's from `dir`.
  // Sets *become_reference when `dir` has none yet.
  Expected<std::vector<const hlo::Literal*>> Reference(const std::string& source,
                                                       const std::vector<hlo::Literal>& outputs,
                                                       bool* become_reference) {
    *become_reference = false;
    if (source == "evaluator") {
      if (!evaluated_) {
        TS_ASSIGN_OR_RETURN(evaluated_, hlo::Evaluate(fusion_, *arguments_));
      }
      return FlattenOutputs(*evaluated_);
    }
    if (stored_.empty()) {
      for (size_t i = 0; i < outputs.size(); ++i) {
        std::string path = source + "/out" + std::to_string(i) + ".npy";
        if (!fs::exists(path)) break;
        TS_ASSIGN_OR_RETURN(hlo::Literal value, hlo::ReadNpy(path, outputs[i].shape()));
        stored_.push_back(std::move(value));
      }
      if (stored_.size() != outputs.size()) {
        stored_.clear();
        *become_reference = true;
        return std::vector<const hlo::Literal*>{};
      }
    }
    std::vector<const hlo::Literal*> pointers;
    for (const hlo::Literal& value : stored_) pointers.push_back(&value);
    return pointers;
  }

  // Written to a temporary name and renamed, so a crash never leaves half a reference.
  Status StoreReference(const std::string& dir, const std::vector<hlo::Literal>& outputs) {
    std::error_code error;
    fs::create_directories(dir, error);
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string path = dir + "/out" + std::to_string(i) + ".npy";
      TS_RETURN_IF_ERROR(hlo::WriteNpy(path + ".tmp", outputs[i]));
      fs::rename(path + ".tmp", path, error);
      if (error) return MakeError(ErrorCode::kIo, path + ": " + error.message());
    }
    return OkStatus();
  }

  nlohmann::json Measure(const nlohmann::json& request) {
    const nlohmann::json config = request.value("config", nlohmann::json::object());
    std::string fault = InjectedFault(config);
    // A worker killed from outside while compiling: always, or once (the first worker to
    // get the candidate leaves the marker file and dies; the next one goes on).
    if (fault == "killed") std::raise(SIGKILL);
    if (const char* marker = std::getenv("TILESMITH_WORKER_FAULT_MARKER");
        fault == "killed_once" && marker != nullptr && access(marker, F_OK) != 0) {
      std::ofstream(marker) << "killed\n";
      std::raise(SIGKILL);
    }
    auto compile_start = Clock::now();
    auto analysis = AnalysisFor(ConfigLayouts(config));
    if (!analysis) return Failure("compile", analysis.error().message);
    auto kernel = emitters::EmitKernel(**analysis, EmitterConfig(config), device_);
    if (!kernel) return Failure("compile", kernel.error().message);
    if (target_.is_cuda()) return MeasureCuda(*kernel, request, fault, compile_start);
    auto compiled = codegen::CompileForHost(std::move(*kernel));
    if (!compiled) return Failure("compile", compiled.error().message);
    double compile_ms = MillisecondsSince(compile_start);
    const codegen::HostKernel& host = **compiled;
    if (auto inputs = PrepareInputs(); !inputs) return Failure("launch", inputs.error().message);

    std::vector<std::unique_ptr<GuardedBuffer>> buffers;
    std::vector<void*> pointers;
    for (const emitters::KernelBuffer& buffer : host.kernel().buffers) {
      auto physical = hlo::PhysicalLayout::Create(buffer.shape);
      if (!physical) return Failure("launch", physical.error().message);
      std::unique_ptr<GuardedBuffer> guarded;
      try {
        guarded = std::make_unique<GuardedBuffer>(physical->byte_size(),
                                                  static_cast<int64_t>(buffers.size()));
      } catch (const std::bad_alloc&) {
        return Failure("launch", "out of memory allocating a " +
                                     std::to_string(physical->byte_size()) + "-byte buffer");
      }
      if (buffer.is_parameter()) {
        auto bytes = InputBytes(buffer);
        if (!bytes) return Failure("launch", bytes.error().message);
        std::memcpy(guarded->data(), bytes->data(), bytes->size());
      } else if (buffer.aliases >= 0) {
        // Updated in place: the output starts as the input it aliases, and every run
        // writes the same part of it again.
        const GuardedBuffer& input = *buffers.at(buffer.aliases);
        std::memcpy(guarded->data(), input.data(), std::min(input.size(), guarded->size()));
      } else if (buffer.fill) {
        // A split reduction's atomics accumulate into it; timed reruns accumulate further,
        // which changes values but not the work, and only the first run is verified.
        auto bytes = hlo::FilledPhysicalBuffer(buffer.shape, *buffer.fill);
        if (!bytes) return Failure("launch", bytes.error().message);
        std::memcpy(guarded->data(), bytes->data(),
                    std::min<size_t>(bytes->size(), static_cast<size_t>(guarded->size())));
      }
      pointers.push_back(guarded->data());
      buffers.push_back(std::move(guarded));
    }
    auto intact = [&] {
      for (const auto& buffer : buffers) {
        if (!buffer->Intact()) return false;
      }
      return true;
    };
    auto run = [&] {
      host.Run(pointers);
      if (fault == "red_zone") buffers.back()->data()[buffers.back()->size() + 3] = 0;
    };
    auto evict = [&] {
      for (const auto& buffer : buffers) EvictFromCaches(buffer->data(), buffer->size());
    };

    // Everything before this line may take long (compiling, evaluating the reference on the
    // first request); the measurer's execution timeout starts only now.
    Send({{"id", request.value("id", 0)}, {"event", "running"}});
    if (fault == "crash") std::raise(SIGSEGV);
    if (fault == "hang") {
      for (;;) pause();
    }

    run();
    if (!intact()) return Failure("red_zone", "the kernel wrote outside its buffers");
    if (fault == "wrong_result") {
      for (size_t i = 0; i < host.kernel().buffers.size(); ++i) {
        if (host.kernel().buffers[i].is_output) {
          std::memset(buffers[i]->data(), 0x40, std::min<int64_t>(8, buffers[i]->size()));
          break;
        }
      }
    }
    std::vector<hlo::Literal> outputs;
    for (size_t i = 0; i < host.kernel().buffers.size(); ++i) {
      const emitters::KernelBuffer& buffer = host.kernel().buffers[i];
      if (!buffer.is_output) continue;
      std::span<const uint8_t> bytes(buffers[i]->data(), buffers[i]->size());
      auto output = hlo::FromPhysicalBuffer(buffer.shape, bytes);
      if (!output) return Failure("launch", output.error().message);
      outputs.push_back(std::move(*output));
    }
    nlohmann::json answer = Verify(outputs, request, compile_ms, TermsOf(host.kernel()));
    if (answer["status"] != "ok") return answer;
    answer["times_us"] = Time(request, run, intact, evict);
    if (answer["times_us"].is_null()) {
      return Failure("red_zone", "the kernel wrote outside its buffers during a timed run");
    }
    return answer;
  }

  // Compares `outputs` with the reference: {"status": "ok", compile_ms,
  // verification_error} or the failure.
  // Values each output combines in another order than the reference (reductions, scatters).
  int64_t TermsOf(const emitters::KernelIR& kernel) const {
    return emitters::ReassociatedTerms(analysis_, kernel);
  }

  nlohmann::json Verify(const std::vector<hlo::Literal>& outputs, const nlohmann::json& request,
                        double compile_ms, int64_t reassociated_terms) {
    std::string source = request.value("reference", std::string("evaluator"));
    bool become_reference = false;
    auto expected = Reference(source, outputs, &become_reference);
    if (!expected) return Failure("wrong_result", "no reference: " + expected.error().message);
    nlohmann::json answer = {{"status", "ok"}, {"compile_ms", compile_ms}};
    if (become_reference) {
      if (auto stored = StoreReference(source, outputs); !stored) {
        return Failure("launch", stored.error().message);
      }
      answer["reference"] = true;
      answer["verification_error"] = 0.0;
    } else {
      OutputComparison comparison =
          CompareOutputs(outputs, *expected, reassociated_terms, OutputPrecisions(fusion_));
      if (!comparison.matches) {
        nlohmann::json failure =
            Failure("wrong_result", std::to_string(comparison.mismatches) +
                                        " elements differ from the reference; " +
                                        comparison.first_mismatch);
        failure["verification_error"] = comparison.largest_error;
        return failure;
      }
      answer["verification_error"] = comparison.largest_error;
    }
    return answer;
  }

  // The CUDA path: the cubin run through the driver (cuda_measure.h). A failed launch may
  // leave the context unusable, so those answers ask the measurer to restart the worker.
  nlohmann::json MeasureCuda(const emitters::KernelIR& kernel, const nlohmann::json& request,
                             const std::string& fault, Clock::time_point compile_start) {
    auto compiled = codegen::CompileForNvptx(kernel, target_, codegen::NvptxStage::kCubin);
    if (!compiled) return Failure("compile", compiled.error().message);
    double compile_ms = MillisecondsSince(compile_start);
    if (auto inputs = PrepareInputs(); !inputs) return Failure("launch", inputs.error().message);
    std::vector<std::vector<uint8_t>> initial;
    std::vector<int64_t> sizes;
    for (const emitters::KernelBuffer& buffer : compiled->buffers) {
      auto physical = hlo::PhysicalLayout::Create(buffer.shape);
      if (!physical) return Failure("launch", physical.error().message);
      sizes.push_back(physical->byte_size());
      initial.emplace_back();
      if (buffer.is_parameter()) {
        auto bytes = InputBytes(buffer);
        if (!bytes) return Failure("launch", bytes.error().message);
        initial.back() = std::move(*bytes);
      } else if (buffer.aliases >= 0) {
        initial.back() = initial.at(buffer.aliases);
      } else if (buffer.fill) {
        auto bytes = hlo::FilledPhysicalBuffer(buffer.shape, *buffer.fill);
        if (!bytes) return Failure("launch", bytes.error().message);
        initial.back() = std::move(*bytes);
      }
    }
    Send({{"id", request.value("id", 0)}, {"event", "running"}});
    if (fault == "crash") std::raise(SIGSEGV);
    if (fault == "hang") {
      for (;;) pause();
    }
    auto exiting = [&](nlohmann::json answer) {
      answer["exit"] = true;
      answer["compile_ms"] = compile_ms;
      return answer;
    };
    auto candidate = CudaCandidate::Load(*compiled, initial, sizes);
    if (!candidate) return exiting(Failure("launch", candidate.error().message));
    if (auto ran = (*candidate)->Run(); !ran)
      return exiting(Failure("launch", ran.error().message));
    auto intact = (*candidate)->RedZonesIntact();
    if (!intact) return exiting(Failure("launch", intact.error().message));
    if (!*intact) return Failure("red_zone", "the kernel wrote outside its buffers");
    std::vector<hlo::Literal> outputs;
    for (size_t i = 0; i < compiled->buffers.size(); ++i) {
      if (!compiled->buffers[i].is_output) continue;
      auto bytes = (*candidate)->Read(static_cast<int64_t>(i));
      if (!bytes) return exiting(Failure("launch", bytes.error().message));
      auto output = hlo::FromPhysicalBuffer(compiled->buffers[i].shape, *bytes);
      if (!output) return Failure("launch", output.error().message);
      outputs.push_back(std::move(*output));
    }
    nlohmann::json answer = Verify(outputs, request, compile_ms, TermsOf(kernel));
    if (answer["status"] != "ok") return answer;
    bool kernel_time = request.value("timing", std::string("kernel")) != "events";
    if (kernel_time && !cuda_timing_) cuda_timing_ = ChooseCudaTiming(true);
    KernelActivityRecorder* recorder = kernel_time ? cuda_timing_->recorder.get() : nullptr;
    auto times =
        (*candidate)
            ->Time(request.value("warmup_ms", 10.0), request.value("budget_ms", 50.0),
                   request.value("min_reps", int64_t{3}), request.value("max_reps", int64_t{1000}),
                   request.value("flush_bytes", int64_t{0}), recorder);
    if (!times) return exiting(Failure("launch", times.error().message));
    intact = (*candidate)->RedZonesIntact();
    if (!intact || !*intact) return Failure("red_zone", "the kernel wrote outside its buffers");
    AddCudaTimes(*times, kernel_time ? cuda_timing_->fallback : "", answer);
    return answer;
  }

  // The answer's times: `times_us` are CUPTI's kernel durations when it recorded them (what
  // ranks candidates), else the event times; both series are kept, and the method is named.
  static void AddCudaTimes(const CudaTimes& times, const std::string& fallback,
                           nlohmann::json& answer) {
    bool by_kernel = !times.kernel_us.empty();
    answer["times_us"] = by_kernel ? times.kernel_us : times.event_us;
    answer["event_times_us"] = times.event_us;
    if (by_kernel) answer["kernel_times_us"] = times.kernel_us;
    answer["timing_method"] = std::string(by_kernel ? kTimedByCuptiKernel : kTimedByCudaEvents);
    std::string why = !fallback.empty() ? fallback : times.kernel_error;
    if (!by_kernel && !why.empty()) answer["timing_fallback"] = why;
  }

  // Time-budgeted warm-up, then time-budgeted repetitions, each from memory: with "flush":
  // "buffers" after the kernel's own buffers were evicted from every cache level, with
  // "cache" after the last-level cache was overwritten with `flush_bytes` (also where this
  // CPU cannot evict lines); no flush when `flush_bytes` is 0. Null when a run broke a red
  // zone.
  template <typename Run, typename Intact, typename Evict>
  nlohmann::json Time(const nlohmann::json& request, Run&& run, Intact&& intact, Evict&& evict) {
    double warmup_ms = request.value("warmup_ms", 10.0);
    double budget_ms = request.value("budget_ms", 50.0);
    int64_t min_reps = request.value("min_reps", int64_t{3});
    int64_t max_reps = request.value("max_reps", int64_t{1000});
    int64_t flush_bytes = request.value("flush_bytes", int64_t{0});
    bool evict_buffers = flush_bytes > 0 && CanEvictFromCaches() &&
                         request.value("flush", std::string("buffers")) == "buffers";
    if (evict_buffers) flush_bytes = 0;
    if (static_cast<int64_t>(flush_.size()) < flush_bytes) flush_.resize(flush_bytes);
    auto warmup_start = Clock::now();
    do {
      run();
    } while (MillisecondsSince(warmup_start) < warmup_ms);
    if (!intact()) return nullptr;
    nlohmann::json times = nlohmann::json::array();
    auto budget_start = Clock::now();
    for (int64_t rep = 0; rep < max_reps; ++rep) {
      if (rep >= min_reps && MillisecondsSince(budget_start) >= budget_ms) break;
      if (evict_buffers) {
        evict();
      } else if (flush_bytes > 0) {
        ++flush_value_;
        std::memset(flush_.data(), flush_value_, flush_bytes);
      }
      auto start = Clock::now();
      run();
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    if (!intact()) return nullptr;
    return times;
  }

  const hlo::HloModule& module_;
  emitters::Target target_;
  const hlo::HloComputation& fusion_;
  const emitters::DeviceInfo& device_;
  analysis::FusionAnalysis analysis_;
  std::map<std::string,
           std::pair<std::unique_ptr<hlo::HloModule>, std::unique_ptr<analysis::FusionAnalysis>>>
      variants_;
  std::ostream& out_;
  std::optional<std::vector<hlo::Literal>> arguments_;
  std::optional<hlo::Literal> evaluated_;
  std::vector<hlo::Literal> stored_;
  std::vector<uint8_t> flush_;
  uint8_t flush_value_ = 0;
  std::optional<CudaTiming> cuda_timing_;  // chosen when a CUDA candidate is first timed
};

}  // namespace

int RunWorker(const hlo::HloModule& module, const emitters::Target& target,
              const emitters::DeviceInfo& device, std::istream& in, std::ostream& out) {
  Worker worker(module, target, device, out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    if (!request.is_object()) {
      out << nlohmann::json{{"status", "launch"}, {"message", "malformed request"}}.dump()
          << std::endl;
      continue;
    }
    if (!worker.Serve(request)) return 3;
  }
  return 0;
}

}  // namespace tilesmith::tuner
