#include "tuner/cuda_measure.h"

#include <dlfcn.h>

#include <array>
#include <chrono>

#include "tuner/worker.h"

namespace tilesmith::tuner {

// The driver entry points, by their versioned symbol names (CUdeviceptr is 64-bit).
struct CudaApi {
  int (*init)(unsigned) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*primary_ctx_retain)(void**, int) = nullptr;
  int (*ctx_set_current)(void*) = nullptr;
  int (*ctx_synchronize)() = nullptr;
  int (*module_load_data)(void**, const void*) = nullptr;
  int (*module_get_function)(void**, void*, const char*) = nullptr;
  int (*module_unload)(void*) = nullptr;
  int (*mem_alloc)(uint64_t*, size_t) = nullptr;
  int (*mem_free)(uint64_t) = nullptr;
  int (*memcpy_htod)(uint64_t, const void*, size_t) = nullptr;
  int (*memcpy_dtoh)(void*, uint64_t, size_t) = nullptr;
  int (*memset_d8)(uint64_t, unsigned char, size_t) = nullptr;
  int (*memset_d8_async)(uint64_t, unsigned char, size_t, void*) = nullptr;
  int (*launch_kernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       void*, void**, void**) = nullptr;
  int (*event_create)(void**, unsigned) = nullptr;
  int (*event_record)(void*, void*) = nullptr;
  int (*event_synchronize)(void*) = nullptr;
  int (*event_elapsed_time)(float*, void*, void*) = nullptr;
  int (*event_destroy)(void*) = nullptr;
  int (*get_error_string)(int, const char**) = nullptr;
};

namespace {

template <typename F>
bool Resolve(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  return function != nullptr;
}

// The API with GPU 0's primary context current, or why not.
Expected<const CudaApi*> LoadApi() {
  static CudaApi api;
  static std::string failure = []() -> std::string {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr)
      return std::string("no CUDA driver on this machine (") + dlerror() + ")";
    bool ok = Resolve(library, "cuInit", api.init) &&
              Resolve(library, "cuDeviceGet", api.device_get) &&
              Resolve(library, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain) &&
              Resolve(library, "cuCtxSetCurrent", api.ctx_set_current) &&
              Resolve(library, "cuCtxSynchronize", api.ctx_synchronize) &&
              Resolve(library, "cuModuleLoadData", api.module_load_data) &&
              Resolve(library, "cuModuleGetFunction", api.module_get_function) &&
              Resolve(library, "cuModuleUnload", api.module_unload) &&
              Resolve(library, "cuMemAlloc_v2", api.mem_alloc) &&
              Resolve(library, "cuMemFree_v2", api.mem_free) &&
              Resolve(library, "cuMemcpyHtoD_v2", api.memcpy_htod) &&
              Resolve(library, "cuMemcpyDtoH_v2", api.memcpy_dtoh) &&
              Resolve(library, "cuMemsetD8_v2", api.memset_d8) &&
              Resolve(library, "cuMemsetD8Async", api.memset_d8_async) &&
              Resolve(library, "cuLaunchKernel", api.launch_kernel) &&
              Resolve(library, "cuEventCreate", api.event_create) &&
              Resolve(library, "cuEventRecord", api.event_record) &&
              Resolve(library, "cuEventSynchronize", api.event_synchronize) &&
              Resolve(library, "cuEventElapsedTime", api.event_elapsed_time) &&
              Resolve(library, "cuEventDestroy_v2", api.event_destroy) &&
              Resolve(library, "cuGetErrorString", api.get_error_string);
    if (!ok) return "libcuda.so.1 lacks a driver API function the measurer needs";
    int device = 0;
    void* context = nullptr;
    if (int e = api.init(0); e != 0) return "cuInit failed (CUresult " + std::to_string(e) + ")";
    if (int e = api.device_get(&device, 0); e != 0) {
      return "no GPU 0 (CUresult " + std::to_string(e) + ")";
    }
    if (int e = api.primary_ctx_retain(&context, device); e != 0) {
      return "no context on GPU 0 (CUresult " + std::to_string(e) + ")";
    }
    if (int e = api.ctx_set_current(context); e != 0) {
      return "cuCtxSetCurrent failed (CUresult " + std::to_string(e) + ")";
    }
    return "";
  }();
  if (!failure.empty()) return MakeError(ErrorCode::kFailedPrecondition, failure);
  return &api;
}

constexpr unsigned char kGuardByte = 0xA5;

}  // namespace

Status CudaCandidate::Check(int result, const char* what) {
  if (result == 0) return OkStatus();
  const char* text = nullptr;
  api_->get_error_string(result, &text);
  return MakeError(ErrorCode::kInternal, std::string(what) + ": " + (text ? text : "error") +
                                             " (CUresult " + std::to_string(result) + ")");
}

CudaCandidate::~CudaCandidate() {
  if (api_ == nullptr) return;
  for (uint64_t allocation : allocations_) api_->mem_free(allocation);
  if (flush_ != 0) api_->mem_free(flush_);
  if (module_ != nullptr) api_->module_unload(module_);
}

Expected<std::unique_ptr<CudaCandidate>> CudaCandidate::Load(
    const codegen::NvptxKernel& kernel, std::span<const std::vector<uint8_t>> initial,
    std::span<const int64_t> sizes) {
  TS_ASSIGN_OR_RETURN(const CudaApi* api, LoadApi());
  std::unique_ptr<CudaCandidate> candidate(new CudaCandidate);
  candidate->api_ = api;
  TS_RETURN_IF_ERROR(candidate->Check(
      api->module_load_data(&candidate->module_, kernel.cubin.bytes.data()), "cuModuleLoadData"));
  TS_RETURN_IF_ERROR(candidate->Check(
      api->module_get_function(&candidate->function_, candidate->module_, kernel.entry.c_str()),
      "cuModuleGetFunction"));
  candidate->entry_ = kernel.entry;
  for (int i = 0; i < 3; ++i) {
    candidate->grid_[i] = static_cast<unsigned>(kernel.launch.blocks[i]);
    candidate->block_[i] = static_cast<unsigned>(kernel.launch.threads[i]);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    uint64_t allocation = 0;
    size_t total = static_cast<size_t>(sizes[i] + 2 * kRedZoneBytes);
    TS_RETURN_IF_ERROR(candidate->Check(api->mem_alloc(&allocation, total), "cuMemAlloc"));
    candidate->allocations_.push_back(allocation);
    TS_RETURN_IF_ERROR(
        candidate->Check(api->memset_d8(allocation, kGuardByte, total), "cuMemsetD8"));
    uint64_t data = allocation + kRedZoneBytes;
    candidate->data_.push_back(data);
    candidate->sizes_.push_back(sizes[i]);
    if (i < initial.size() && !initial[i].empty()) {
      TS_RETURN_IF_ERROR(candidate->Check(
          api->memcpy_htod(data, initial[i].data(), initial[i].size()), "cuMemcpyHtoD"));
    }
  }
  return candidate;
}

Status CudaCandidate::Run() {
  std::vector<void*> parameters;
  for (uint64_t& data : data_) parameters.push_back(&data);
  TS_RETURN_IF_ERROR(
      Check(api_->launch_kernel(function_, grid_[0], grid_[1], grid_[2], block_[0], block_[1],
                                block_[2], 0, nullptr, parameters.data(), nullptr),
            "cuLaunchKernel"));
  return Check(api_->ctx_synchronize(), "kernel execution");
}

Expected<bool> CudaCandidate::RedZonesIntact() {
  std::vector<uint8_t> zone(kRedZoneBytes);
  for (size_t i = 0; i < allocations_.size(); ++i) {
    for (uint64_t start : {allocations_[i], data_[i] + static_cast<uint64_t>(sizes_[i])}) {
      TS_RETURN_IF_ERROR(Check(api_->memcpy_dtoh(zone.data(), start, zone.size()), "cuMemcpyDtoH"));
      for (uint8_t byte : zone) {
        if (byte != kGuardByte) return false;
      }
    }
  }
  return true;
}

Expected<std::vector<uint8_t>> CudaCandidate::Read(int64_t index) {
  std::vector<uint8_t> bytes(sizes_.at(index));
  TS_RETURN_IF_ERROR(
      Check(api_->memcpy_dtoh(bytes.data(), data_[index], bytes.size()), "cuMemcpyDtoH"));
  return bytes;
}

Expected<CudaTimes> CudaCandidate::Time(double warmup_ms, double budget_ms, int64_t min_reps,
                                        int64_t max_reps, int64_t flush_bytes,
                                        KernelActivityRecorder* recorder) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  if (flush_bytes > flush_size_) {
    if (flush_ != 0) api_->mem_free(flush_);
    flush_ = 0;
    TS_RETURN_IF_ERROR(Check(api_->mem_alloc(&flush_, flush_bytes), "cuMemAlloc (L2 flush)"));
    flush_size_ = flush_bytes;
  }
  auto warmup_start = Clock::now();
  do {
    TS_RETURN_IF_ERROR(Run());
  } while (since(warmup_start) < warmup_ms);
  void* start = nullptr;
  void* stop = nullptr;
  TS_RETURN_IF_ERROR(Check(api_->event_create(&start, 0), "cuEventCreate"));
  TS_RETURN_IF_ERROR(Check(api_->event_create(&stop, 0), "cuEventCreate"));
  CudaTimes times;
  // Recording starts after the warm-up, so that CUPTI's buffers hold the timed launches only.
  if (recorder != nullptr) {
    if (auto began = recorder->Begin(); !began) {
      times.kernel_error = began.error().message;
      recorder = nullptr;
    }
  }
  Status status = OkStatus();
  std::vector<void*> parameters;
  for (uint64_t& data : data_) parameters.push_back(&data);
  auto budget_start = Clock::now();
  for (int64_t rep = 0; rep < max_reps && status; ++rep) {
    if (rep >= min_reps && since(budget_start) >= budget_ms) break;
    // Asynchronous, so that the start event and the launch are queued while the flush
    // still runs. On an H100 a kernel the profiler (CUPTI) puts at 1.3 us still measures
    // 3.5 us between the events, with this or the synchronous memset alike: the launch's
    // own cost on the GPU falls between them. CUPTI's record of the same launch does not
    // count it. The memset is no kernel record (CUPTI files it as a memset, not recorded).
    if (flush_bytes > 0)
      status = Check(api_->memset_d8_async(flush_, rep & 0xff, flush_bytes, nullptr), "L2 flush");
    if (!status) break;
    api_->event_record(start, nullptr);
    status =
        Check(api_->launch_kernel(function_, grid_[0], grid_[1], grid_[2], block_[0], block_[1],
                                  block_[2], 0, nullptr, parameters.data(), nullptr),
              "cuLaunchKernel");
    api_->event_record(stop, nullptr);
    if (status) status = Check(api_->event_synchronize(stop), "kernel execution");
    float milliseconds = 0;
    if (status) status = Check(api_->event_elapsed_time(&milliseconds, start, stop), "events");
    if (status) times.event_us.push_back(milliseconds * 1000.0);
  }
  api_->event_destroy(start);
  api_->event_destroy(stop);
  if (recorder != nullptr) {
    // Every timed launch finished (its stop event was waited for); a context-wide wait as
    // well, so that CUPTI has every record's timestamps before the flush.
    if (status) status = Check(api_->ctx_synchronize(), "kernel execution");
    auto tally = recorder->End();
    auto durations =
        tally ? KernelDurationsUs(*tally, entry_, static_cast<int64_t>(times.event_us.size()))
              : std::unexpected(tally.error());
    if (durations) {
      times.kernel_us = std::move(*durations);
    } else {
      times.kernel_error = durations.error().message;
    }
  }
  if (!status) return std::unexpected(status.error());
  return times;
}

CudaTiming ChooseCudaTiming(bool kernel_time) {
  CudaTiming timing;
  if (!kernel_time) return timing;
  auto recorder = KernelActivityRecorder::Create();
  if (!recorder) {
    timing.fallback = recorder.error().message;
    return timing;
  }
  // Enabling kernel activity is what fails where CUPTI cannot work (no driver, a driver
  // older than this CUPTI, a profiler already attached): found out once, before any timing.
  if (auto began = (*recorder)->Begin(); !began) {
    timing.fallback = began.error().message;
    return timing;
  }
  if (auto ended = (*recorder)->End(); !ended) {
    timing.fallback = ended.error().message;
    return timing;
  }
  timing.recorder = std::move(*recorder);
  return timing;
}

}  // namespace tilesmith::tuner
