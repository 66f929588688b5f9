#!/usr/bin/env bash
# The cost models against real GPU timings, in one command on a lent GPU machine
# (docs/gpu.md, "The cost models on a GPU"): unpack the bundle, time a random sample of
# every fusion's space on GPU 0 (the sample measured whole, so each fusion's order is
# known), score the analytic and the learned model on those timings by cross-validation
# over fusions (`tilesmith model eval --folds`), train and store the learned model, and
# tune through the service with the GPU as a target. Leaves log.txt, the database, its
# export and each evaluation's JSON in OUT_DIR.
#
#   bench/gpu_model_run.sh BUNDLE.tar.xz OUT_DIR [CORPUS_DIR]
#
# The fusions, in this order (a run cut short keeps a spread): bench/gpu_fusions and the
# GELU examples (50-800 MB), bench/corpus (real JAX fusions, 1-17 MB), then the shared XLA
# corpus fusions that bench/model_bench.cc times on the host (CORPUS_DIR/xla/...).
# GPU_MODEL_SECONDS (default 330) is when no new tune starts; SAMPLE (48) configs per fusion.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: bench/gpu_model_run.sh BUNDLE.tar.xz OUT_DIR [CORPUS_DIR]" >&2
  exit 2
fi
bundle="$(realpath "$1")"
out="$(mkdir -p "$2" && realpath "$2")"
corpus="${3:+$(realpath "$3")}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log="$out/log.txt"
sample="${SAMPLE:-48}"
stop_tuning=$((SECONDS + ${GPU_MODEL_SECONDS:-330}))

work="$(mktemp -d)"
tar -xJf "$bundle" -C "$work" || exit 1
cd "$work"/tilesmith-* || exit 1
db="$PWD/gpu.db"
capability="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')"
gpu="cuda:sm_$capability"  # model commands name the architecture; tune also takes cuda:0
say() { echo "=== $(date -u +%H:%M:%S) $*" | tee -a "$log"; }

say "gpu: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm --format=csv,noheader)"
./tilesmith --version >>"$log" 2>&1

# add_f32_64m (805 MB) last: verifying and timing its 48 configs takes over 90 s.
fusions=("$repo"/bench/gpu_fusions/{reduce,transpose}*.hlo configs/examples/gelu.hlo
  "$repo"/tests/data/tuner/gelu_f32.hlo "$repo"/bench/corpus/*.hlo)
if [ -n "$corpus" ]; then
  for name in transpose/fused_transpose_021 reduce_column/horizontal_fusion_two_groups \
    concatenate/vectorization reduce_row/reduction_groups_two_in_same_group \
    transpose/epilogue transpose/fused_transpose_210 transpose/side_outputs_inplace \
    transpose/packed_transpose_multiple_heroes transpose/transpose_021 \
    reduce_column/vectorize_x2_f32 reduce_row/minor_and_major reduce_multirow/f16_v4 \
    reduce_multirow/pred_mof_x2_v4 transpose/multiple_roots_mixed_rank \
    transpose/side_output_and_hero_indexing_match transpose/mixed_indexing \
    transpose/transpose_102 transpose/packed_transpose_s16 reduce_row/epilogue \
    reduce_row/side_output reduce_row/small_s32 reduce_row/layout \
    reduce_column/mof_heteorgeneous_input_shapes reduce_column/vectorize_x4_s16 \
    reduce_column/vectorize_x1_c64 reduce_multirow/f32_x8 reduce_multirow/maximum_vector_size \
    concatenate/concat_1d; do
    fusions+=("$corpus/xla/$name.hlo")
  done
fi
fusions+=("$repo"/bench/gpu_fusions/add_f32_64m.hlo)

tuned=0
for fusion in "${fusions[@]}"; do
  if [ "$SECONDS" -ge "$stop_tuning" ]; then
    say "time spent: $tuned of ${#fusions[@]} fusions tuned"
    break
  fi
  start=$SECONDS
  # A random sample is a fair one of the whole space; `exhaustive` would take its first N.
  result="$(timeout --kill-after=5 90 ./tilesmith tune "$fusion" --target cuda:0 --db "$db" \
    --strategy random --seed 0 --budget "$sample" --batch 16 --warmup-ms 5 --rep-ms 20 \
    --quiet --json 2>>"$log")"
  rc=$?
  summary="$(printf '%s' "$result" | python3 -c 'import json,sys
j = json.load(sys.stdin)
print(j["emitter"], "measured", j["measured"], "failed", j["failed"],
      "best %.2f us default %.2f us" % (j["best"]["median_us"], j["default"]["median_us"]))' 2>&1)"
  say "tune $(basename "$fusion") exit $rc after $((SECONDS - start)) s: $summary"
  tuned=$((tuned + 1))
done

for objective in log-time pairwise; do
  say "model eval --folds 5 --objective $objective"
  timeout 60 ./tilesmith model eval --db "$db" --target "$gpu" --folds 5 --objective "$objective" \
    --json >"$out/eval-$objective.json" 2>>"$log"
  say "exit $?"
done
timeout 60 ./tilesmith model eval --db "$db" --target "$gpu" --folds 5 >>"$log" 2>&1
timeout 60 ./tilesmith model train --db "$db" --target "$gpu" >>"$log" 2>&1
say "model train exit $?"
timeout 30 ./tilesmith predict configs/examples/gelu.hlo --target "$gpu" --db "$db" --top 3 \
  >>"$log" 2>&1
say "predict exit $?"

# The service with the GPU as a target, as scripts/run starts it on a GPU host.
if [ -z "${SKIP_SERVE:-}" ]; then
  say "serve-and-tune"
  TILESMITH_PORT=0 timeout 120 "$repo/examples/serve-and-tune.sh" ./tilesmith \
    configs/examples/gelu.hlo >>"$log" 2>&1
  say "serve-and-tune exit $?"
fi
# Compressed: a device run brings back files of at most 16 MiB.
timeout 30 ./tilesmith db vacuum --db "$db" >>"$log" 2>&1
python3 -c 'import lzma, shutil, sys
with open(sys.argv[1], "rb") as src, lzma.open(sys.argv[2], "wb") as dst: shutil.copyfileobj(src, dst)' \
  "$db" "$out/gpu.db.xz"
say "done"
