#include "tuner/cupti.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "support/exe_path.h"

namespace tilesmith::tuner {
namespace {

// CUPTI's entry points by their C signatures (CUptiResult is an int-sized enum, CUcontext a
// pointer); CUPTIAPI is empty on Linux.
using BufferRequested = void (*)(uint8_t**, size_t*, size_t*);
using BufferCompleted = void (*)(void*, uint32_t, uint8_t*, size_t, size_t);

struct CuptiApi {
  int (*register_callbacks)(BufferRequested, BufferCompleted) = nullptr;
  int (*enable)(uint32_t) = nullptr;
  int (*disable)(uint32_t) = nullptr;
  int (*flush_all)(uint32_t) = nullptr;
  int (*get_next_record)(uint8_t*, size_t, void**) = nullptr;
  int (*get_num_dropped_records)(void*, uint32_t, size_t*) = nullptr;
  int (*get_result_string)(int, const char**) = nullptr;
};

constexpr int kCuptiSuccess = 0;
constexpr int kCuptiMaxLimitReached = 12;         // cuptiActivityGetNextRecord: no more records
constexpr uint32_t kFlushForced = 1;              // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
constexpr size_t kActivityBufferBytes = 1 << 20;  // ~4800 kernel records of 216 bytes

// Offsets shared by CUpti_ActivityKernel4 … CUpti_ActivityKernel10 (cupti_activity.h).
constexpr size_t kKindOffset = 0;
constexpr size_t kStartOffset = 16;
constexpr size_t kEndOffset = 24;
constexpr size_t kCorrelationIdOffset = 92;
constexpr size_t kNameOffset = 104;
constexpr size_t kKernelRecordPrefixBytes = kNameOffset + sizeof(const char*);

template <typename T>
T ReadField(const uint8_t* record, size_t offset) {
  T value;
  std::memcpy(&value, record + offset, sizeof(T));
  return value;
}

template <typename F>
bool Resolve(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  return function != nullptr;
}

CuptiApi api;

CuptiProbe Probe(const std::vector<std::string>& candidates, CuptiApi& loaded) {
  CuptiProbe probe;
  std::string load_error;  // why a file that exists did not open
  for (const std::string& candidate : candidates) {
    bool absolute = candidate.starts_with('/');
    std::error_code error;
    if (absolute && !std::filesystem::exists(candidate, error)) continue;
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      if (absolute) {
        const char* why = dlerror();
        load_error = why ? why : candidate + " did not load";
      }
      continue;
    }
    probe.path = candidate;
    const char* missing = nullptr;
    auto need = [&](const char* name, auto& function) {
      if (missing == nullptr && !Resolve(library, name, function)) missing = name;
    };
    need("cuptiActivityRegisterCallbacks", loaded.register_callbacks);
    need("cuptiActivityEnable", loaded.enable);
    need("cuptiActivityDisable", loaded.disable);
    need("cuptiActivityFlushAll", loaded.flush_all);
    need("cuptiActivityGetNextRecord", loaded.get_next_record);
    need("cuptiActivityGetNumDroppedRecords", loaded.get_num_dropped_records);
    need("cuptiGetResultString", loaded.get_result_string);
    if (missing != nullptr) {
      loaded = CuptiApi{};
      probe.message = candidate + " lacks " + missing + ", which kernel timing needs";
      return probe;
    }
    probe.loaded = true;
    probe.message = "CUPTI from " + candidate;
    return probe;
  }
  probe.message = "no libcupti here (looked for ";
  for (size_t i = 0; i < candidates.size(); ++i) {
    probe.message += (i ? ", " : "") + candidates[i];
  }
  probe.message += ")" + (load_error.empty() ? "" : ": " + load_error);
  return probe;
}

std::string ResultText(int result) {
  const char* text = nullptr;
  if (api.get_result_string != nullptr) api.get_result_string(result, &text);
  return std::string(text ? text : "CUPTI error") + " (CUptiResult " + std::to_string(result) + ")";
}

// What the buffer callbacks collect, which CUPTI may call from a thread of its own.
struct Collector {
  std::mutex mutex;
  ActivityTally tally;
  std::string error;  // the first buffer that could not be read
};

Collector& TheCollector() {
  static Collector collector;
  return collector;
}

void OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;                            // as many as fit
}

void OnBufferCompleted(void* context, uint32_t stream, uint8_t* buffer, size_t size,
                       size_t valid_bytes) {
  size_t dropped = 0;
  api.get_num_dropped_records(context, stream, &dropped);
  Collector& collector = TheCollector();
  std::lock_guard lock(collector.mutex);
  if (buffer != nullptr) {
    auto read = ReadActivityBuffer({buffer, size}, valid_bytes, dropped, collector.tally);
    if (!read && collector.error.empty()) collector.error = read.error().message;
  } else {
    collector.tally.dropped += static_cast<int64_t>(dropped);
  }
  std::free(buffer);
}

}  // namespace

std::vector<std::string> CuptiCandidates() {
  if (const char* chosen = std::getenv("TILESMITH_CUPTI"); chosen && *chosen) return {chosen};
  std::vector<std::string> candidates;
  if (auto bundled = ExecutablePath()) {
    candidates.push_back((bundled->parent_path() / "lib/libcupti.so.13").string());
  }
  candidates.push_back("libcupti.so.13");
  candidates.push_back("libcupti.so");
  std::vector<std::string> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(variable); root && *root) roots.push_back(root);
  }
  roots.push_back("/usr/local/cuda");
  for (size_t i = 0; i < roots.size(); ++i) {
    if (std::find(roots.begin(), roots.begin() + i, roots[i]) != roots.begin() + i) continue;
    for (const char* file :
         {"/lib64/libcupti.so.13", "/lib64/libcupti.so", "/extras/CUPTI/lib64/libcupti.so"}) {
      candidates.push_back(roots[i] + file);
    }
  }
  return candidates;
}

CuptiProbe ProbeCupti() {
  static const CuptiProbe probe = Probe(CuptiCandidates(), api);
  return probe;
}

CuptiProbe ProbeCuptiAmong(const std::vector<std::string>& candidates) {
  CuptiApi unused;
  return Probe(candidates, unused);
}

Status ReadActivityBuffer(std::span<const uint8_t> buffer, size_t valid_bytes, size_t dropped,
                          ActivityTally& tally) {
  tally.dropped += static_cast<int64_t>(dropped);
  if (!ProbeCupti().loaded) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cannot read CUPTI activity records: " + ProbeCupti().message);
  }
  if (valid_bytes > buffer.size()) {
    return InvalidArgument("CUPTI reported " + std::to_string(valid_bytes) +
                           " valid bytes in a buffer of " + std::to_string(buffer.size()));
  }
  // The walker takes a mutable pointer but only reads the buffer.
  uint8_t* start = const_cast<uint8_t*>(buffer.data());
  void* record = nullptr;
  for (;;) {
    int result = api.get_next_record(start, valid_bytes, &record);
    if (result == kCuptiMaxLimitReached) return OkStatus();
    if (result != kCuptiSuccess) {
      return MakeError(ErrorCode::kInternal, "cuptiActivityGetNextRecord: " + ResultText(result));
    }
    const uint8_t* bytes = static_cast<const uint8_t*>(record);
    uint32_t kind = ReadField<uint32_t>(bytes, kKindOffset);
    if (kind != kCuptiKindKernel && kind != kCuptiKindConcurrentKernel) {
      ++tally.skipped;
      continue;
    }
    if (bytes + kKernelRecordPrefixBytes > buffer.data() + valid_bytes) {
      return MakeError(ErrorCode::kInternal, "a CUPTI kernel record runs past its buffer");
    }
    KernelActivity kernel;
    kernel.start_ns = ReadField<uint64_t>(bytes, kStartOffset);
    kernel.end_ns = ReadField<uint64_t>(bytes, kEndOffset);
    kernel.correlation_id = ReadField<uint32_t>(bytes, kCorrelationIdOffset);
    if (const char* name = ReadField<const char*>(bytes, kNameOffset)) kernel.name = name;
    if (kernel.start_ns == 0 && kernel.end_ns == 0) {
      ++tally.untimed;
      continue;
    }
    tally.kernels.push_back(std::move(kernel));
  }
}

Expected<std::vector<double>> KernelDurationsUs(const ActivityTally& tally, std::string_view entry,
                                                int64_t launches) {
  std::vector<const KernelActivity*> ours;
  for (const KernelActivity& kernel : tally.kernels) {
    if (kernel.name == entry) ours.push_back(&kernel);
  }
  auto mismatch = [&](const std::string& what) {
    return MakeError(ErrorCode::kFailedPrecondition, "CUPTI timed " + std::to_string(ours.size()) +
                                                         " of " + std::to_string(launches) +
                                                         " launches of " + std::string(entry) +
                                                         " (" + what + ")");
  };
  if (tally.dropped > 0) return mismatch(std::to_string(tally.dropped) + " records dropped");
  if (static_cast<int64_t>(ours.size()) != launches) {
    return mismatch(std::to_string(tally.kernels.size()) + " kernel records, " +
                    std::to_string(tally.untimed) + " without timestamps");
  }
  std::sort(ours.begin(), ours.end(), [](const KernelActivity* a, const KernelActivity* b) {
    return a->correlation_id < b->correlation_id;
  });
  std::vector<double> durations;
  for (const KernelActivity* kernel : ours) {
    if (kernel->end_ns < kernel->start_ns) {
      return mismatch("a record ends before it starts");
    }
    durations.push_back(kernel->duration_us());
  }
  return durations;
}

Expected<std::unique_ptr<KernelActivityRecorder>> KernelActivityRecorder::Create() {
  CuptiProbe probe = ProbeCupti();
  if (!probe.loaded) return MakeError(ErrorCode::kFailedPrecondition, probe.message);
  // CUPTI keeps one pair of buffer callbacks per process: registered once, for every recorder.
  static const int registered = api.register_callbacks(OnBufferRequested, OnBufferCompleted);
  if (registered != kCuptiSuccess) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cuptiActivityRegisterCallbacks: " + ResultText(registered));
  }
  return std::unique_ptr<KernelActivityRecorder>(new KernelActivityRecorder);
}

KernelActivityRecorder::~KernelActivityRecorder() {
  if (enabled_) api.disable(kCuptiKindConcurrentKernel);
}

Status KernelActivityRecorder::Begin() {
  {
    Collector& collector = TheCollector();
    std::lock_guard lock(collector.mutex);
    collector.tally = ActivityTally{};
    collector.error.clear();
  }
  if (int result = api.enable(kCuptiKindConcurrentKernel); result != kCuptiSuccess) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cuptiActivityEnable(CONCURRENT_KERNEL): " + ResultText(result));
  }
  enabled_ = true;
  return OkStatus();
}

Expected<ActivityTally> KernelActivityRecorder::End() {
  if (!enabled_) return MakeError(ErrorCode::kInternal, "KernelActivityRecorder::End before Begin");
  enabled_ = false;
  int disabled = api.disable(kCuptiKindConcurrentKernel);
  int flushed = api.flush_all(kFlushForced);
  if (disabled != kCuptiSuccess) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cuptiActivityDisable(CONCURRENT_KERNEL): " + ResultText(disabled));
  }
  if (flushed != kCuptiSuccess) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cuptiActivityFlushAll: " + ResultText(flushed));
  }
  Collector& collector = TheCollector();
  std::lock_guard lock(collector.mutex);
  if (!collector.error.empty()) return MakeError(ErrorCode::kInternal, collector.error);
  ActivityTally tally = std::move(collector.tally);
  collector.tally = ActivityTally{};
  return tally;
}

}  // namespace tilesmith::tuner
