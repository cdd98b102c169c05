#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-19 with ASan + UBSan) into build-fuzz/ and runs them.
#   scripts/fuzz.sh TARGET SECONDS   fuzz one target for SECONDS (corpus kept in build-fuzz/corpus/)
#   scripts/fuzz.sh --all SECONDS    every target, SECONDS each
#   scripts/fuzz.sh --smoke          every target for 60 s (CJAX_FUZZ_SMOKE_SECONDS), as CI runs it
#   scripts/fuzz.sh --list           the targets
# Fails on any crash, leak, timeout (hang), out-of-memory or sanitizer report; the offending input
# is left in build-fuzz/artifacts/ and printed. Corpora start from the seeds in fuzz/seeds/<target>
# (regression inputs, checked in) plus every jaxpr in ../shared/reference and tests/golden.
# CJAX_FUZZ_TIMEOUT (seconds, default 10) is the wall-clock time one input may take before it
# counts as a hang: raise it when fuzzing at low priority on a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,6p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage

build_dir=build-fuzz
cxx=${CJAX_FUZZ_CXX:-clang++-19}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz.sh: $cxx not found (apt-get install clang-19 libclang-rt-19-dev)" >&2
  exit 2
fi
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1  # as scripts/build.sh
cmake -S fuzz -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
ninja -C "$build_dir" >/dev/null
targets=()
for t in "$build_dir"/fuzz_*; do
  [ -x "$t" ] && [ -f "$t" ] && targets+=("$(basename "$t")")
done

# seed_corpus TARGET DIR: fills DIR with the target's starting inputs.
seed_corpus() {
  local target=$1 dir=$2
  mkdir -p "$dir"
  [ -d "fuzz/seeds/$target" ] && cp -n "fuzz/seeds/$target"/* "$dir"/ 2>/dev/null || true
  if [ "$target" = fuzz_jaxpr_parser ]; then
    cp -n tests/golden/*.jaxpr "$dir"/ 2>/dev/null || true
    local ref=../shared/reference
    if [ -d "$ref" ]; then
      for f in "$ref"/wild-jaxprs/*.jaxpr; do cp -n "$f" "$dir/wild_$(basename "$f")"; done
      # Every fenced block of the reference documents that holds a jaxpr.
      for md in "$ref"/*.md "$ref"/*/*.md; do
        [ -f "$md" ] || continue
        awk -v out="$dir/ref_$(basename "$md" .md)_" '
          /^```/ { if (inside) { if (block ~ /lambda/) { n++; printf "%s", block > (out n ".jaxpr");
                                   close(out n ".jaxpr") } inside = 0 }
                   else { inside = 1; block = "" } next }
          inside { block = block $0 "\n" }' "$md"
      done
    fi
  fi
}

# run_target TARGET SECONDS: fuzzes; prints "TARGET: N runs in S s" and fails on any finding.
run_target() {
  local target=$1 seconds=$2
  local corpus=$build_dir/corpus/$target art=$build_dir/artifacts/$target/
  seed_corpus "$target" "$corpus"
  mkdir -p "$art"
  local log=$build_dir/$target.log
  local dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  echo "fuzz.sh: $target for ${seconds}s (corpus $(ls "$corpus" | wc -l) inputs)"
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build_dir/$target" "${dict[@]}" -max_total_time="$seconds" -timeout="${CJAX_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art" "$corpus" >"$log" 2>&1; then
    echo "fuzz.sh: $target FOUND A BUG; last lines of $log:" >&2
    tail -60 "$log" >&2
    ls -l "$art" >&2
    return 1
  fi
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz.sh: $target: $runs executions in ${seconds}s, no findings (corpus $(ls "$corpus" | wc -l))"
}

case "$1" in
  --list) printf '%s\n' "${targets[@]}" ;;
  --smoke)
    for t in "${targets[@]}"; do run_target "$t" "${CJAX_FUZZ_SMOKE_SECONDS:-60}"; done ;;
  --all)
    [ $# -eq 2 ] || usage
    for t in "${targets[@]}"; do run_target "$t" "$2"; done ;;
  -*) usage ;;
  *)
    [ $# -eq 2 ] || usage
    [ -x "$build_dir/$1" ] || { echo "fuzz.sh: no target $1 (have: ${targets[*]})" >&2; exit 2; }
    run_target "$1" "$2" ;;
esac
