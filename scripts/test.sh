#!/usr/bin/env bash
# Builds cjax and runs the whole test suite: a Release build, then (with --sanitize, or by default
# in CI) the same suite under AddressSanitizer + UndefinedBehaviorSanitizer. After the Release
# suite, the tests that hold compiled code to the interpreter run again with the JIT targeting
# other CPUs (CJAX_TARGET_CPU, docs/backend.md): vector width and FMA change the last bits, and
# those tests must pass on any x86-64 host.
# Usage: scripts/test.sh [--sanitize | --release-only]
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
jobs=$(nproc)

# Under the sanitizers, the tests that only put every example through the code generator once
# more (as PTX, as GPU launch plans, cut into three-eqn segments, through mlir-opt-19, compiled
# again with cheap residuals recomputed) are left to the Release suite: they check LLVM's output,
# which the sanitizers do not instrument, and took a quarter of the sanitized suite's time (about
# 380 of 1300 s). So are the three slowest that re-run code the sanitized suite covers otherwise:
# the CLI on fuzzed jaxprs (the fuzzers run under ASan+UBSan in CI, scripts/fuzz.sh), the docs'
# commands (scripts/leak-check.sh runs the sanitized CLI on every example) and the budget solver
# on nested checkpoints (its other tests run here).
sanitized_skip='compile to PTX for sm_90|GPU program whose launches fit|cut into segments of three eqns'
sanitized_skip+='|pass mlir-opt-19.s parser|unchanged, bit for bit, with cheap residuals recomputed'
sanitized_skip+='|the CLI never fails internally|cjax commands shown in docs|nested checkpoints the budget solver'
sanitizer_env() {
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
}

run_suite() {  # run_suite BUILD_DIR [--sanitize]
  local dir=$1 start=$SECONDS skip=()
  shift
  [ "${1:-}" = --sanitize ] && skip=(-E "$sanitized_skip")
  bash scripts/build.sh "$@"
  echo "test.sh: $dir built in $((SECONDS - start)) s"
  start=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 300 "${skip[@]}")
  echo "test.sh: $dir tests ran in $((SECONDS - start)) s"
}

# The compiled-versus-interpreted tests under the x86-64 levels this CPU can run, besides the
# native one the suite used (the PTX tests compile for the GPU, not for this CPU).
run_cpu_targets() {  # run_cpu_targets BUILD_DIR
  local dir=$1 cpu
  for cpu in x86-64-v2 x86-64-v3; do
    if ! CJAX_TARGET_CPU=$cpu "$dir/tools/cjax" run --example tutorial/f >/dev/null 2>&1; then
      echo "test.sh: this CPU cannot run $cpu code; skipped"
      continue
    fi
    echo "test.sh: compiled-versus-interpreted tests with CJAX_TARGET_CPU=$cpu"
    (cd "$dir" && CJAX_TARGET_CPU=$cpu ctest --output-on-failure -j"$jobs" --timeout 300 \
      -R '^(cpu|property|memory):|compiled as interpreted' -E 'PTX|ptxas')
  done
}

case "$mode" in
  --sanitize)
    sanitizer_env
    run_suite build-asan --sanitize
    ;;
  --release-only)
    run_suite build
    run_cpu_targets build
    bash scripts/consumer.sh build  # a separate project against an installed cjax
    ;;
  "")
    run_suite build
    run_cpu_targets build
    bash scripts/consumer.sh build
    sanitizer_env
    run_suite build-asan --sanitize
    ;;
  *) echo "usage: scripts/test.sh [--sanitize | --release-only]" >&2; exit 2 ;;
esac
