#!/usr/bin/env bash
# block/mlp's training step side by side, in one run on this machine: cjax's compiled step (and
# its checkpointed twin), the OpenBLAS floor (the step's five matrix products), and PyTorch eager.
# The paired benchmark gives the ratios the targets name (step/floor, the twin's extra cost in x@W1s).
# Runs each with OpenBLAS choosing its kernels (0.3.21 picks SSE3 "Prescott" on Sapphire Rapids),
# with OPENBLAS_CORETYPE=SkylakeX (AVX-512) and with OPENBLAS_CORETYPE=Haswell (AVX2),
# since an inherited Haswell setting halves OpenBLAS's speed on AVX-512 machines.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --bench bench_step cjax
for core in auto SkylakeX Haswell; do
  if [[ $core == auto ]]; then envs=(env -u OPENBLAS_CORETYPE); else envs=(env OPENBLAS_CORETYPE=$core); fi
  echo "== OpenBLAS kernels: $core"
  "${envs[@]}" build/bench/bench_step --benchmark_filter='floor|cjax_step|paired'
  "${envs[@]}" build/tools/cjax bench --example block/mlp --wrt W1,W2
  "${envs[@]}" build/tools/cjax bench --example block/mlp_checkpoint --wrt W1,W2
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    "${envs[@]}" MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 \
      /usr/bin/python3 bench/torch_mlp.py
  else
    echo "PyTorch eager: skipped (install Debian's python3-torch to compare)"
  fi
done
echo "== trace + differentiate + compile of a tanh MLP chain"
build/bench/bench_step --benchmark_filter=chain
