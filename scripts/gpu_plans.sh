#!/usr/bin/env bash
# Writes a GPU program (`cjax lower --target cuda --emit plan --reference`) for every built-in
# example: the function itself, and the forward and backward programs of its training step as
# compiled code runs them. cjax-gpu-run runs them on a machine with a GPU (docs/gpu.md).
# Usage: scripts/gpu_plans.sh OUT_DIR [EXAMPLE...]   (default: every example)
# With CJAX_POLICY set (e.g. offload_dot_with_no_batch_dims), the training step's programs are
# those of the function in checkpoint with that policy, and the files are named after it.
set -euo pipefail
out=${1:?usage: scripts/gpu_plans.sh OUT_DIR [EXAMPLE...]}
shift
cjax=$(realpath "${CJAX:-build/tools/cjax}")
mkdir -p "$out"
examples=("$@")
if [ ${#examples[@]} -eq 0 ]; then
  mapfile -t examples < <("$cjax" examples | awk '{print $1}')
fi
status=0
for e in "${examples[@]}"; do
  base=${e//\//_}${CJAX_POLICY:+_$CJAX_POLICY}
  policy=(${CJAX_POLICY:+--policy "$CJAX_POLICY"})
  tmp=$(mktemp -d)
  for part in f fwd bwd; do
    src=("--example" "$e")
    if [ "$part" != f ]; then
      # Named after the example: the file's name is the program's name in cjax-gpu-run's report.
      "$cjax" fwd-bwd --example "$e" "${policy[@]}" --only "$part" --compiled > "$tmp/${base}_$part.jaxpr"
      src=("${base}_$part.jaxpr")
    fi
    if (cd "$tmp" && "$cjax" lower "${src[@]}" --target cuda --emit plan --reference) > "$out/${base}_$part.plan" 2> "$tmp/err"; then
      echo "$e $part: $(grep -c '^launch' "$out/${base}_$part.plan") launches, $(grep -c '^call' "$out/${base}_$part.plan") calls"
    else
      echo "$e $part: not compiled for the GPU: $(head -c 300 "$tmp/err")"
      rm -f "$out/${base}_$part.plan"
    fi
  done
  rm -rf "$tmp"
done
exit $status
