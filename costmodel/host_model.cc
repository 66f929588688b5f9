#include "costmodel/host_model.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "costmodel/kernel_facts.h"
#include "support/thread_pool.h"

namespace tilesmith::costmodel {

namespace {

using Clock = std::chrono::steady_clock;

double MicrosecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

struct AlignedBytes {
  explicit AlignedBytes(size_t size)
      : data(static_cast<char*>(std::aligned_alloc(64, (size + 63) / 64 * 64))), size(size) {
    std::memset(data, 1, size);  // touch every page before timing
  }
  ~AlignedBytes() { std::free(data); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  char* data;
  size_t size;
};

// Best of `repetitions` parallel copies of `bytes` on `threads` threads, bytes (read + write)
// per µs.
double CopyRate(size_t bytes, int threads, int repetitions) {
  AlignedBytes from(bytes), to(bytes);
  ThreadPool& pool = ThreadPool::Default();
  int64_t tasks = static_cast<int64_t>(threads) * 4;
  double best = 1e30;
  for (int r = 0; r < repetitions; ++r) {
    auto start = Clock::now();
    pool.ParallelFor(
        tasks,
        [&](int64_t task) {
          size_t begin = bytes * task / tasks, end = bytes * (task + 1) / tasks;
          std::memcpy(to.data + begin, from.data + begin, end - begin);
        },
        threads);
    best = std::min(best, MicrosecondsSince(start));
  }
  return 2.0 * static_cast<double>(bytes) / best;
}

using Floats = float __attribute__((vector_size(32)));

// Independent FMA chains in registers: flops (2 per lane per FMA) per µs on one thread.
template <typename Vector>
double FmaChains(int64_t iterations) {
  constexpr int kChains = 8;
  Vector acc[kChains];
  Vector a, b;
  for (int lane = 0; lane < static_cast<int>(sizeof(Vector) / sizeof(float)); ++lane) {
    a[lane] = 0.999f;
    b[lane] = 0.001f;
  }
  for (int c = 0; c < kChains; ++c) acc[c] = a + static_cast<float>(c);
  auto start = Clock::now();
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
  }
  double us = MicrosecondsSince(start);
  Vector sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum += acc[c];
  volatile float sink = sum[0];
  (void)sink;
  double lanes = static_cast<double>(sizeof(Vector) / sizeof(float));
  return 2.0 * kChains * lanes * static_cast<double>(iterations) / us;
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) double FmaRateAvx2(int64_t iterations) {
  return FmaChains<Floats>(iterations);
}
#endif

double FmaRate(int64_t iterations) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return FmaRateAvx2(iterations);
  }
#endif
  return FmaChains<Floats>(iterations);
}

}  // namespace

nlohmann::json HostCalibration::ToJson() const {
  return {{"threads", threads},
          {"memory_gbs", memory_bytes_per_us / 1e3},
          {"thread_memory_gbs", thread_memory_bytes_per_us / 1e3},
          {"cache_gbs", cache_bytes_per_us / 1e3},
          {"thread_gflops", thread_flops_per_us / 1e3},
          {"dispatch_us", dispatch_us},
          {"measure_ms", measure_ms}};
}

Expected<HostCalibration> HostCalibration::FromJson(const nlohmann::json& figures) {
  auto number = [&](const char* name) -> Expected<double> {
    if (!figures.is_object() || !figures.contains(name) || !figures[name].is_number() ||
        !(figures[name].get<double>() > 0)) {
      return InvalidArgument(std::string("host calibration: '") + name +
                             "' is missing or not a positive number");
    }
    return figures[name].get<double>();
  };
  HostCalibration calibration;
  TS_ASSIGN_OR_RETURN(double threads, number("threads"));
  TS_ASSIGN_OR_RETURN(double memory, number("memory_gbs"));
  TS_ASSIGN_OR_RETURN(double thread_memory, number("thread_memory_gbs"));
  TS_ASSIGN_OR_RETURN(double cache, number("cache_gbs"));
  TS_ASSIGN_OR_RETURN(double flops, number("thread_gflops"));
  TS_ASSIGN_OR_RETURN(calibration.dispatch_us, number("dispatch_us"));
  calibration.threads = static_cast<int>(threads);
  calibration.memory_bytes_per_us = memory * 1e3;
  calibration.thread_memory_bytes_per_us = thread_memory * 1e3;
  calibration.cache_bytes_per_us = cache * 1e3;
  calibration.thread_flops_per_us = flops * 1e3;
  calibration.measure_ms = figures.value("measure_ms", 0.0);
  return calibration;
}

HostCalibration MeasureHostCalibration(int64_t cache_bytes) {
  auto start = Clock::now();
  HostCalibration calibration;
  ThreadPool& pool = ThreadPool::Default();
  calibration.threads = pool.size();
  size_t large = std::max<size_t>(size_t{64} << 20, static_cast<size_t>(cache_bytes) * 2);
  size_t small = std::max<size_t>(size_t{256} << 10, static_cast<size_t>(cache_bytes) / 4);
  calibration.memory_bytes_per_us = CopyRate(large, calibration.threads, 3);
  calibration.thread_memory_bytes_per_us = CopyRate(large / 2, 1, 2);
  calibration.cache_bytes_per_us = CopyRate(small, calibration.threads, 10);
  FmaRate(20000);  // warm-up: clocks up
  calibration.thread_flops_per_us = std::max(FmaRate(200000), FmaRate(200000));
  double best = 1e30;
  for (int r = 0; r < 20; ++r) {
    auto t = Clock::now();
    pool.ParallelFor(static_cast<int64_t>(calibration.threads) * 4, [](int64_t) {});
    best = std::min(best, MicrosecondsSince(t));
  }
  calibration.dispatch_us = best;
  calibration.measure_ms = MicrosecondsSince(start) / 1e3;
  return calibration;
}

const HostCalibration& CachedHostCalibration(int64_t cache_bytes) {
  static std::once_flag once;
  static HostCalibration calibration;
  std::call_once(once, [&] { calibration = MeasureHostCalibration(cache_bytes); });
  return calibration;
}

namespace {

// When the last of `threads` threads is done with a grid of `blocks` blocks of `block_us`
// each, split as HostKernel::Run splits it into min(blocks, 4 x threads) tasks, which the
// threads take in order, each as it is free (ThreadPool::ParallelFor): the calling thread
// from 0, the others from `worker_start_us` at `worker_pace` of its pace.
double PoolMakespanUs(int64_t blocks, int threads, double block_us, double worker_start_us,
                      double worker_pace) {
  int64_t tasks = std::min<int64_t>(blocks, int64_t{4} * threads);
  std::vector<double> free(static_cast<size_t>(threads), worker_start_us);
  free[0] = 0;
  double makespan = 0;
  for (int64_t task = 0; task < tasks; ++task) {
    double task_us =
        static_cast<double>(blocks * (task + 1) / tasks - blocks * task / tasks) * block_us;
    auto next = std::min_element(free.begin(), free.end());
    *next += next == free.begin() ? task_us : task_us / worker_pace;
    makespan = std::max(makespan, *next);
  }
  return makespan;
}

}  // namespace

double HostParallelEfficiency(int64_t blocks, int threads) {
  if (blocks <= 0 || threads <= 0) return 1;
  return static_cast<double>(blocks) /
         (PoolMakespanUs(blocks, threads, /*block_us=*/1, /*worker_start_us=*/0,
                         /*worker_pace=*/1) *
          threads);
}

double HostLoadBalance(int64_t blocks, int threads, double serial_us) {
  if (blocks <= 0 || threads <= 0 || !(serial_us > 0)) {
    return HostParallelEfficiency(blocks, threads);
  }
  double block_us = serial_us / static_cast<double>(blocks);
  return serial_us /
         (PoolMakespanUs(blocks, threads, block_us, kHostWorkerStartUs, kHostWorkerPace) * threads);
}

double HostBandwidth(const HostCalibration& calibration, int64_t busy, bool fits_cache) {
  double shared = fits_cache ? calibration.cache_bytes_per_us : calibration.memory_bytes_per_us;
  double per_thread = fits_cache ? calibration.cache_bytes_per_us / calibration.threads
                                 : calibration.thread_memory_bytes_per_us;
  return std::max(1e-3,
                  std::min(shared, static_cast<double>(std::max<int64_t>(1, busy)) * per_thread));
}

double SimdEfficiency(int64_t vector, int64_t element_bytes, int64_t simd_bytes) {
  if (simd_bytes <= 0) return 1;
  double lanes = std::max(1.0, static_cast<double>(simd_bytes) /
                                   static_cast<double>(std::max<int64_t>(1, element_bytes)));
  return std::min(1.0, static_cast<double>(std::max<int64_t>(1, vector)) / lanes);
}

SweepCost HostSweepCost(const ThreadSweep& sweep) {
  SweepCost cost;
  double beyond_l1 = 1 - sweep.l1_kept;
  double beyond_l2 = 1 - sweep.l2_kept;
  cost.l2_lines = sweep.neighbour_touches * std::max(0.0, beyond_l1 - beyond_l2);
  cost.l3_lines = sweep.neighbour_touches * beyond_l2;
  cost.page_walks = sweep.pages > kHostTlbPages
                        ? sweep.threads * sweep.pages * (1 - kHostTlbPages / sweep.pages)
                        : 0.0;
  cost.tlb_misses = sweep.pages > kHostL1TlbPages
                        ? sweep.line_touches * (1 - kHostL1TlbPages / sweep.pages)
                        : 0.0;
  return cost;
}

Expected<Prediction> HostModel::Predict(const emitters::KernelIR& kernel,
                                        const DeviceFigures& device,
                                        const ResourceUsage* usage) const {
  const HostCalibration& c = calibration_;
  if (c.memory_bytes_per_us <= 0 || c.thread_flops_per_us <= 0) {
    return InvalidArgument("the host model has no calibration");
  }
  int64_t blocks = kernel.launch.block_count();
  int64_t busy = std::min<int64_t>(blocks, c.threads);
  double parallel = HostParallelEfficiency(blocks, c.threads);
  // The terms below are first those of `busy` threads sharing the work evenly; the share
  // of their time they work (HostLoadBalance) then divides them. Rates are already those
  // of `busy` threads, so dividing by the share of the whole pool would charge a grid with
  // fewer blocks than threads twice for the idle ones (a one-block grid on two threads at
  // twice its time).
  Traffic traffic = KernelTraffic(kernel);
  int64_t bytes = traffic.read_bytes + traffic.write_bytes;
  bool fits = device.cache_bytes > 0 && bytes <= device.cache_bytes;
  double bandwidth = HostBandwidth(c, busy, fits);
  double memory_us = static_cast<double>(bytes) / bandwidth;

  // A straight-line thread body is vectorised across the block's threads; otherwise only
  // a thread's own vector of elements fills the SIMD lanes.
  int64_t element_bytes = ComputeElementBytes(kernel);
  bool across_threads = ThreadsVectorize(kernel);
  int64_t vector =
      across_threads ? device.info.simd_bytes / element_bytes : KernelVectorWidth(kernel);
  double simd = SimdEfficiency(vector, element_bytes, device.info.simd_bytes) *
                (across_threads ? kHostAcrossThreadsSimdShare : 1.0);
  double flops = KernelFlops(kernel);
  double compute_us =
      flops / (c.thread_flops_per_us * simd * static_cast<double>(std::max<int64_t>(1, busy)));
  double per_thread = 1.0 / static_cast<double>(std::max<int64_t>(1, busy));
  // Threads vectorised together step together, as many as the lanes filled.
  double steps =
      KernelThreadSteps(kernel) /
      (across_threads ? std::max(1.0, static_cast<double>(vector) * kHostAcrossThreadsSimdShare)
                      : 1.0);
  double segment_steps = HostSegmentSteps(kernel);
  double step_us = (steps * kHostThreadStepUs + segment_steps * kHostSegmentStepUs) * per_thread;
  SweepCost sweep;
  for (const ThreadSweep& phase : KernelThreadSweeps(kernel)) {
    SweepCost cost = HostSweepCost(phase);
    sweep.l2_lines += cost.l2_lines;
    sweep.l3_lines += cost.l3_lines;
    sweep.page_walks += cost.page_walks;
    sweep.tlb_misses += cost.tlb_misses;
  }
  // Latencies the walking thread waits for.
  double miss_us = (sweep.l2_lines * kHostL2LineUs + sweep.l3_lines * kHostL3LineUs +
                    sweep.page_walks * kHostPageWalkUs + sweep.tlb_misses * kHostTlbMissUs) *
                   per_thread;
  // The compiled code's own count, where there is one, replaces the estimate of its
  // arithmetic and thread steps.
  bool counted = usage != nullptr && usage->has_host_code();
  double code_us = 0;
  if (counted) {
    double constant_divisions =
        std::min(usage->executed_constant_divisions, usage->executed_divisions);
    double float_divisions =
        std::min(usage->executed_float_divisions, usage->executed_divisions - constant_divisions);
    double instructions_us =
        usage->executed_machine_instructions > 0
            ? usage->executed_machine_instructions * kHostMachineInstructionUs +
                  usage->executed_instructions * kHostIrInstructionBesideMachineUs
            : usage->executed_instructions * kHostInstructionUs;
    code_us =
        (instructions_us +
         (usage->executed_divisions - constant_divisions - float_divisions) * kHostDivisionUs +
         constant_divisions * kHostConstantDivisionUs + float_divisions * kHostFloatDivisionUs +
         usage->executed_gather_lanes * kHostGatherLaneUs +
         usage->executed_lane_moves * kHostLaneMoveUs) *
        static_cast<double>(blocks) * per_thread;
  }
  double even_work_us = (counted ? code_us : compute_us + step_us) + miss_us;
  double balance = HostLoadBalance(blocks, static_cast<int>(busy),
                                   even_work_us * static_cast<double>(std::max<int64_t>(1, busy)));
  for (double* term : {&memory_us, &compute_us, &step_us, &miss_us, &code_us}) *term /= balance;
  double work_us = even_work_us / balance;
  double overlap = work_us + memory_us - 0.95 * std::min(work_us, memory_us);
  Prediction prediction;
  prediction.microseconds = c.dispatch_us + overlap;
  prediction.breakdown = {
      {"model", name()},
      {"memory_us", memory_us},
      {"compute_us", compute_us},
      {"thread_steps_us", step_us},
      {"sweep_miss_us", miss_us},
      {"code_us", code_us},
      {"work", counted ? "executed code" : "estimated"},
      {"machine_instructions", counted ? usage->executed_machine_instructions : 0.0},
      {"dispatch_us", c.dispatch_us},
      {"blocks", blocks},
      {"bytes", {{"read", traffic.read_bytes}, {"write", traffic.write_bytes}}},
      {"fits_cache", fits},
      {"bandwidth_gbs", bandwidth / 1e3},
      {"flops", flops},
      {"vector", vector},
      {"vectorised_across_threads", across_threads},
      {"simd_efficiency", simd},
      {"thread_steps", steps},
      {"segment_steps", segment_steps},
      {"sweep",
       {{"l2_lines", sweep.l2_lines},
        {"l3_lines", sweep.l3_lines},
        {"page_walks", sweep.page_walks},
        {"tlb_misses", sweep.tlb_misses}}},
      {"busy_threads", busy},
      {"parallel_efficiency", parallel},
      {"load_balance", balance},
      {"calibration", c.ToJson()},
  };
  return prediction;
}

}  // namespace tilesmith::costmodel
