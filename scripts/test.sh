#!/usr/bin/env bash
# Builds cjax and runs the whole test suite: a Release build, then (with --sanitize, or by default
# in CI) the same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
# Usage: scripts/test.sh [--sanitize | --release-only]
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
jobs=$(nproc)

run_suite() {  # run_suite BUILD_DIR [--sanitize]
  local dir=$1
  shift
  bash scripts/build.sh "$@"
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 300)
}

case "$mode" in
  --sanitize)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run_suite build-asan --sanitize
    ;;
  --release-only)
    run_suite build
    bash scripts/consumer.sh build  # a separate project against an installed cjax
    ;;
  "")
    run_suite build
    bash scripts/consumer.sh build
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run_suite build-asan --sanitize
    ;;
  *) echo "usage: scripts/test.sh [--sanitize | --release-only]" >&2; exit 2 ;;
esac
