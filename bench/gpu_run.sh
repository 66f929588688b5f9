#!/usr/bin/env bash
# One GPU session in one command (docs/gpu.md): unpack the bundle, tune a few fusions on
# GPU 0, run bench/gpu_compare.py against XLA's GPU kernels, and leave every log, the
# exported database and the comparison's JSON and Markdown in OUT_DIR. Both sides are timed
# by CUPTI's kernel durations where CUPTI is there (tilesmith: its activity API, libcupti
# from the bundle's lib/; XLA: JAX's profiler); the log and each comparison name the method.
#
#   bench/gpu_run.sh BUNDLE.tar.xz OUT_DIR [CORPUS_DIR]
#
# CORPUS_DIR holds xla/<kind>/*.hlo (the shared XLA corpus); without it only the bundle's
# examples and bench/corpus are used. Each step has its own time limit and a failed step
# does not stop the later ones, so one run on a lent machine says as much as it can.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: bench/gpu_run.sh BUNDLE.tar.xz OUT_DIR [CORPUS_DIR]" >&2
  exit 2
fi
bundle="$(realpath "$1")"
out="$(mkdir -p "$2" && realpath "$2")"
corpus="${3:+$(realpath "$3")}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
log="$out/log.txt"

# The whole run stops by GPU_RUN_SECONDS (default 600): each step's limit is cut to what is
# left, keeping 20 s for the database export at the end.
deadline=$((SECONDS + ${GPU_RUN_SECONDS:-600}))
step() {  # step NAME SECONDS COMMAND...: run with a limit, log the outcome
  local name="$1" limit="$2"
  shift 2
  local left=$((deadline - SECONDS - 20))
  [ "$name" = db-export ] && left=$((deadline - SECONDS))
  if [ "$left" -lt 5 ]; then
    echo "=== $name: skipped, the run's time is spent" | tee -a "$log"
    return 124
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "=== $(date -u +%H:%M:%S) $name (limit ${limit}s): $*" | tee -a "$log"
  local start=$SECONDS
  timeout --kill-after=5 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - start)) s" | tee -a "$log"
  return $rc
}

work="$(mktemp -d)"
tar -xJf "$bundle" -C "$work" || exit 1
cd "$work"/tilesmith-* || exit 1
mkdir -p bench && cp -r "$repo/bench/gpu_compare.py" "$repo/bench/xla_compare.py" "$repo/bench/xla_hlo_text.py" \
  "$repo/bench/corpus" bench/
db="$out/gpu.db"

step gpu-info 20 nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
step version 20 ./tilesmith --version
step jax-info 60 "$python" -c "import jax, jaxlib; print(jax.__version__, jaxlib.__version__, jax.devices())"

step tune-gelu 120 ./tilesmith tune configs/examples/gelu.hlo --target cuda:0 --db "$db" \
  --strategy best-first --budget 24 --json
export PYTHONUNBUFFERED=1
step compare-quick 240 "$python" bench/gpu_compare.py --quick --json "$out/compare-quick.json"
# Fusions of 64-512 MiB, where launch costs vanish beside the bytes moved.
cp -r "$repo/bench/gpu_fusions" bench/
step compare-large 300 "$python" bench/gpu_compare.py --budget 12 --json "$out/compare-large.json" \
  bench/gpu_fusions/*.hlo configs/examples/gelu.hlo
if [ -n "$corpus" ]; then
  for file in transpose/transpose_021.hlo transpose/fused_transpose_021.hlo \
    reduce_row/epilogue.hlo reduce_column/vectorize_x2_f32.hlo; do
    step "tune-${file//\//-}" 60 ./tilesmith tune "$corpus/xla/$file" --target cuda:0 \
      --db "$db" --strategy best-first --budget 24 --json
  done
fi

if [ -n "$corpus" ]; then
  # A sample of the shared corpus by name (the full list of gpu_compare.py is ~40 fusions).
  step compare-corpus 300 "$python" bench/gpu_compare.py --budget 8 \
    --json "$out/compare-corpus.json" \
    "$corpus"/xla/transpose/{transpose_021,fused_transpose_021,fused_transpose_210}.hlo \
    "$corpus"/xla/reduce_row/{epilogue,side_output}.hlo \
    "$corpus"/xla/reduce_column/{small,vectorize_x2_f32}.hlo "$corpus"/xla/loop/{acos_f32,minimum_maximum}.hlo
fi

step db-stats 30 ./tilesmith db stats --db "$db"
step db-export 30 ./tilesmith db export "$out/gpu-export.json" --db "$db"
# How tilesmith's trials were timed: cupti-kernel (CUPTI's kernel durations, what XLA's
# profiler reports and what the comparisons' XLA side uses) or cuda-events (where CUPTI could
# not record; the tunes' warning in this log says why). Each comparison names both sides.
{
  echo "=== timing methods of the stored trials (count, method):"
  grep -o '"timing_method": *"[a-z-]*"' "$out/gpu-export.json" 2>/dev/null | sort | uniq -c
  grep -h "not CUPTI's kernel durations" "$log" | sort -u | head -3
} | tee -a "$log"
echo "=== $(date -u +%H:%M:%S) done" | tee -a "$log"
