// The analytic host model: a host kernel's blocks are spread over the thread pool (a few
// tasks per thread, each running its blocks' threads one after another), so its time is
// bytes against the machine's copy bandwidth (cache bandwidth when the working set fits the
// last-level cache) and flops against its vector FMA throughput, scaled by how many
// threads the grid keeps busy, plus the pool's dispatch, a per-thread-step overhead (one
// thread loop per segment between warp shuffles, which the host emulates), and the cache
// and TLB misses of threads walking memory one after another (`SweepCost`).
// Where the kernel was compiled, the instructions its optimised code executes per block
// (ResourceUsage's `executed_*`) replace the estimate from flops and thread steps.
// The machine's figures come from a quick calibration, measured once per process.
#pragma once

#include <cstdint>

#include "costmodel/cost_model.h"
#include "costmodel/kernel_facts.h"

namespace tilesmith::costmodel {

/// This machine's figures (bytes and flops per microsecond).
struct HostCalibration {
  int threads = 1;                        ///< The pool's threads.
  double memory_bytes_per_us = 0;         ///< Parallel copy (read + write) from DRAM.
  double thread_memory_bytes_per_us = 0;  ///< One thread's copy from DRAM.
  double cache_bytes_per_us = 0;          ///< Parallel copy of a working set that fits the LLC.
  double thread_flops_per_us = 0;         ///< One thread's vector FMA throughput (2 per FMA).
  double dispatch_us = 0;                 ///< An empty ParallelFor over the pool.
  double measure_ms = 0;                  ///< How long calibrating took.
  nlohmann::json ToJson() const;
  /// Reads ToJson()'s form back (as the database stores it); every figure must be there
  /// and positive.
  static Expected<HostCalibration> FromJson(const nlohmann::json& figures);
};

/// Measures this machine (~0.2 s): copies of 2 x `cache_bytes` (at least 64 MiB) and of a
/// quarter of the cache, and a register-resident FMA loop.
HostCalibration MeasureHostCalibration(int64_t cache_bytes);
/// MeasureHostCalibration, once per process (later calls return the first result).
const HostCalibration& CachedHostCalibration(int64_t cache_bytes);

/// Per-step cost of one thread of a block on the host (the loop over thread ids, index
/// arithmetic), in microseconds.
inline constexpr double kHostThreadStepUs = 0.002;
/// Per-step cost of a thread in one of the extra thread loops a warp shuffle splits a loop
/// into (`HostSegmentSteps`): such a step saves one value to its thread's slot or reads its
/// partner's, without a plain step's index arithmetic. A quarter of a plain step: on 15 host
/// reductions' timings (model_bench, two runs), charging them as plain steps ranked configs
/// with many shuffle segments (wide rows, tall column tiles) far too slow.
inline constexpr double kHostSegmentStepUs = 0.0005;
/// The share of the SIMD lanes the loop vectoriser fills when it vectorises a straight-line
/// thread body across the block's threads (each lane's ids and addresses are computed
/// apart, and its loads gathered unless they happen to be contiguous). Measured on the GELU
/// fusions of model_bench: such configs run 1.8x the time the model gives explicit full
/// vectors of the same fusion (scale fitted on the other configs, two runs).
inline constexpr double kHostAcrossThreadsSimdShare = 0.55;

/// What one instruction of a block's optimised LLVM IR costs, and a division or remainder
/// on top of it, in microseconds, when the kernel was compiled and its executed code
/// counted (ResourceUsage's `executed_*`). Then the counted code replaces the estimate from
/// flops and thread steps. Fitted on model_bench's saved timing runs of 30 host fusions
/// (mean per-fusion Spearman): 0.3 ns per IR instruction and 20 ns per division, about a
/// 64-bit divide's latency on the index path that the next access waits for. The
/// instruction's price was 0.1 ns while the counts also held the arms of branches not
/// taken and the points outside a tile's shape; counted by branch probability
/// (code_counts.h), 0.3 ns ranks best on session 8's two runs (0.744 mean Spearman at
/// 0.1 ns, 0.752 at 0.15, 0.757 at 0.2, 0.760 at 0.3, 0.759 at 0.4).
inline constexpr double kHostInstructionUs = 0.0003;
/// Where the machine code was counted too (ResourceUsage's `executed_machine_instructions`):
/// 0.15 ns per machine instruction and 0.1 ns per IR instruction beside it. The machine
/// count sees what the IR hides: an f16 operation promoted lane by lane (8 lanes of one IR
/// instruction became 40 machine instructions of conversions and shuffles), register
/// spills, a shuffle per extracted lane. The IR count keeps a share because it carries what
/// the machine count misses, such as blocks the code generator split off. Fitted on
/// model_bench's saved timings of 160 generated fusions (seeds 5101-5104, 32 configs each,
/// mean Spearman per fusion 0.651 → 0.680, and 0.549 → 0.639 on the 23 whose best config
/// takes at least 100 µs); 0.12-0.18 ns and 0.05-0.15 ns are within 0.01 of the best.
inline constexpr double kHostMachineInstructionUs = 0.00015;
inline constexpr double kHostIrInstructionBesideMachineUs = 0.0001;
inline constexpr double kHostDivisionUs = 0.02;
/// An integer division or remainder by a constant, which the backend lowers to a
/// multiply-high and shifts: a few dependent cycles on the index path, not a divider's
/// tens. Priced as a division, the index arithmetic of generated slices and loops (divisions
/// by their extents, tens of thousands per kernel) came to 10-20x their measured times.
inline constexpr double kHostConstantDivisionUs = 0.0015;
/// A floating-point division or remainder (scalar or vector), beside its machine
/// instruction: the divider's throughput, a few cycles, not the wait of an integer division
/// by a variable on the index path. Priced as such (20 ns), a logistic's or a tanh's
/// divisions made up most of the predicted time of generated transposes and scatters, whose
/// configs then ranked backwards (`gen_5103_25`: -0.17). On the saved timings of seeds
/// 5101-5104 the mean Spearman is flat within 0-3 ns (0.687-0.685; 0.683 at 20 ns).
inline constexpr double kHostFloatDivisionUs = 0.001;
/// One lane of a gather or scatter (a thread loop the vectoriser made of element loads it
/// could not prove contiguous): a load of its own, though the instruction counts once.
inline constexpr double kHostGatherLaneUs = 0.004;
/// A machine instruction that moves one lane between vector, mask and general registers
/// (`vpextrw`, `vpinsrw`, mask-register operations; ResourceUsage's `executed_lane_moves`),
/// beside its price as a machine instruction: each crosses between register files and
/// waits for the transfer. Packed pairs of f16 lanes go through them: on an f16 concatenate
/// into a logistic (`gen_1302911_28`) the `vector` 2 configs execute 1.4x the machine
/// instructions of `vector` 1 per element, 10-20x its lane moves, and take 2.5x its time.
/// Fitted on the 320 training fusions of model_bench (seeds 5101-5104, 602811/2, 702811/2;
/// flat within 0.1-0.5 ns), checked on seeds never fitted on (costmodel/README.md).
inline constexpr double kHostLaneMoveUs = 0.00025;

/// The 4 KiB pages a core's second-level TLB maps (Zen 2-4: 2048-3072).
inline constexpr double kHostTlbPages = 2048;
/// What a walk's neighbour touch costs beyond a cached one when its line fell out of L1
/// (served by L2) or out of L2 too (served by L3), in microseconds. Such walks stride by a
/// page or more, which the prefetchers do not follow, so each touch pays a latency, a few
/// in flight: measured on a 2-core EPYC with 16 neighbours reading each line of a walk
/// striding 64 KiB, 3-4 ns a touch once the walk overflows L1's 8 ways and 6-7 ns once it
/// overflows L2's, against 1.2-1.7 ns when the stride does not alias. A page walk whose
/// table entries are cached (about 30 cycles) is an estimate, not measured.
inline constexpr double kHostL2LineUs = 0.002;
inline constexpr double kHostL3LineUs = 0.005;
inline constexpr double kHostPageWalkUs = 0.005;

/// The pages a thread's walk may touch before its accesses miss the first-level TLB, and
/// what such a miss costs (served by the second level, about 7 cycles), in microseconds.
/// Zen's first level maps 64 pages, but a walk shares it with everything else the thread
/// touches: fitted on `reduction_groups_two_in_same_group` (48 configs whose side output's
/// grid-stride walk crosses 14 to 308 pages, and whose times rise 2 ms to 17 ms with them),
/// 32 pages at 3 ns had the host model rank its configs at Spearman 0.76-0.77 on two timing
/// runs (64 pages: 0.62; without the term: 0.19-0.20).
inline constexpr double kHostL1TlbPages = 32;
inline constexpr double kHostTlbMissUs = 0.003;

/// The cost of a thread walk (kernel_facts.h `ThreadSweep`) beyond streaming its bytes once:
/// the neighbour touches of lines that fell out of L1 (from L2) or L2 (from L3) before the
/// next thread came, the touches of pages that fell out of the first-level TLB, and the page
/// walks of a walk whose pages the second-level TLB cannot hold (a walk of P pages over a
/// TLB of T keeps T / P).
struct SweepCost {
  double l2_lines = 0;  ///< Neighbour touches served by L2.
  double l3_lines = 0;  ///< Neighbour touches served by L3.
  double page_walks = 0;
  double tlb_misses = 0;  ///< Touches of a page the first-level TLB no longer maps.
};
SweepCost HostSweepCost(const ThreadSweep& sweep);

/// The share of `threads` pool threads a grid of `blocks` keeps busy: the grid is split
/// into min(blocks, 4 x threads) tasks of floor or ceil(blocks / tasks) blocks
/// (HostKernel::Run), which the threads take in order, each as it finishes its last
/// (ThreadPool::ParallelFor); the share is blocks / (threads x the last thread's finish).
/// 9 blocks on 2 threads: 7 tasks of 1 and one of 2, done at 5 blocks' time, 0.9. (Rounding
/// every task up to 2 blocks said 0.56, and ranked configs of few large blocks far too
/// slow: on 160 generated fusions' timings their times matched those of many blocks.) The model
/// divides work by the busy threads (min(blocks, threads)) and by this share scaled to them, their
/// load balance.
double HostParallelEfficiency(int64_t blocks, int threads);

/// When the pool's other threads take their first task, and at what pace they run, beside
/// the calling thread, which starts at once. Best-of-N timings of host kernels on this
/// project's 2-core machines fit a worker that starts 1 µs late and then does 0.7 of the
/// caller's work in the same time; why it lags was not isolated. Relative to the same
/// fusion's other configs, two-block grids of kernels under 20 µs took 1.46x the time an
/// even split predicts, one-block grids 0.85x. Fitted on the 160 development fusions of
/// model_bench --generated (mean Spearman 0.687 -> 0.706); on the 80 fusions of each of two
/// seed pairs never fitted on, 0.699 -> 0.715 and 0.686 -> 0.700.
inline constexpr double kHostWorkerStartUs = 1.0;
inline constexpr double kHostWorkerPace = 0.7;

/// The share of `threads` threads' time a grid of `blocks` keeps them working when its
/// whole work takes `serial_us` on one thread: HostParallelEfficiency's tasks taken in
/// order, each by the thread free first, the caller from 0 and the others from
/// kHostWorkerStartUs at kHostWorkerPace. Two blocks of 5 µs: the caller's done at 5, the
/// worker's at 1 + 5 / 0.7 = 8.1, a share of 10 / (2 x 8.1) = 0.62.
double HostLoadBalance(int64_t blocks, int threads, double serial_us);

/// Bandwidth in bytes per µs with `busy` of the calibration's threads: DRAM (or cache,
/// when `fits_cache`) shared by all, each thread limited to its own copy rate.
double HostBandwidth(const HostCalibration& calibration, int64_t busy, bool fits_cache);

/// Share of the SIMD width a thread's `vector` elements of `element_bytes` fill (>= 1 lane).
double SimdEfficiency(int64_t vector, int64_t element_bytes, int64_t simd_bytes);

class HostModel : public CostModel {
 public:
  explicit HostModel(HostCalibration calibration) : calibration_(calibration) {}
  std::string_view name() const override { return "analytic-host"; }
  Expected<Prediction> Predict(const emitters::KernelIR& kernel, const DeviceFigures& device,
                               const ResourceUsage* usage) const override;
  const HostCalibration& calibration() const { return calibration_; }

 private:
  HostCalibration calibration_;
};

}  // namespace tilesmith::costmodel
