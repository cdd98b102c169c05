#!/usr/bin/env bash
# models/gpt's training step beside the same model in PyTorch eager, in one run on this machine
# (issue 24's table): step times and cjax's peak bytes (its allocator counts every buffer) with
# each framework's best malloc settings, then PyTorch's peak bytes with freed blocks returned to
# the system, so that its resident high-water mark follows what is live (bench/torch_gpt.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --bench bench_gpt
fast=(env MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296)
lean=(env MALLOC_MMAP_THRESHOLD_=65536 MALLOC_TRIM_THRESHOLD_=0)
echo "== step time (and cjax's peak bytes)"
"${fast[@]}" build/bench/bench_gpt --benchmark_counters_tabular=true
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  "${fast[@]}" /usr/bin/python3 bench/torch_gpt.py time 10
else
  echo "PyTorch eager: skipped (install Debian's python3-torch to compare)"
fi
echo "== PyTorch's peak bytes"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  "${lean[@]}" /usr/bin/python3 bench/torch_gpt.py memory
fi
