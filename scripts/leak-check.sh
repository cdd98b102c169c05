#!/usr/bin/env bash
# Runs the CLI on every built-in example's subcommands (jaxpr, jaxpr --json, residuals, fwd-bwd,
# grad) and fails on any leak or memory error.
#   scripts/leak-check.sh              LeakSanitizer: the ASan+UBSan build's CLI (build-asan/)
#   scripts/leak-check.sh --valgrind   valgrind --leak-check=full on the Release CLI (build/)
# Set CJAX_LEAK_CHECK_SKIP to a regex of example names to leave out (default: the big ones,
# block/mlp* and scan/net_deep*, whose arrays make valgrind slow; LSan checks them too), and
# CJAX_LEAK_CHECK_CLI to an already built CLI to skip the build.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=lsan
case "${1:-}" in
  "") ;;
  --valgrind) mode=valgrind ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac

if [ "$mode" = valgrind ]; then
  command -v valgrind >/dev/null || { echo "leak-check.sh: valgrind not installed" >&2; exit 2; }
  cli=${CJAX_LEAK_CHECK_CLI:-build/tools/cjax}
  [ -n "${CJAX_LEAK_CHECK_CLI:-}" ] || bash scripts/build.sh cjax >/dev/null
  skip=${CJAX_LEAK_CHECK_SKIP:-'^(block/mlp|scan/net_deep)'}
  runner=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible
          --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99)
else
  cli=${CJAX_LEAK_CHECK_CLI:-build-asan/tools/cjax}
  [ -n "${CJAX_LEAK_CHECK_CLI:-}" ] || bash scripts/build.sh --sanitize cjax >/dev/null
  skip=${CJAX_LEAK_CHECK_SKIP:-'^$'}
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:exitcode=99
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  runner=()
fi

examples=$("$cli" examples | awk '{print $1}')
runs=0 failures=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ex in $examples; do
  if [[ "$ex" =~ $skip ]]; then continue; fi
  for args in "jaxpr" "jaxpr --json" "residuals" "fwd-bwd" "grad"; do
    runs=$((runs + 1))
    # shellcheck disable=SC2086  # args is a subcommand plus its flags
    if ! "${runner[@]}" "$cli" $args --example "$ex" >/dev/null 2>"$log"; then
      failures=$((failures + 1))
      echo "leak-check.sh: cjax $args --example $ex failed:" >&2
      tail -40 "$log" >&2
    fi
  done
done
# The error paths too: each exits non-zero on purpose; only a sanitizer or valgrind report
# (exit code 99) is a failure.
for args in "jaxpr --example no/such" "residuals --example tutorial/f --policy bogus" \
  "grad --example tutorial/f --inputs 1,2" "jaxpr fuzz/seeds/fuzz_jaxpr_parser/regress_unbalanced_brace.jaxpr"; do
  runs=$((runs + 1))
  # shellcheck disable=SC2086
  "${runner[@]}" "$cli" $args >/dev/null 2>"$log" && rc=0 || rc=$?
  if [ "$rc" -eq 99 ] || grep -q "ERROR: \(Leak\|Address\)Sanitizer\|runtime error:" "$log"; then
    failures=$((failures + 1))
    echo "leak-check.sh: cjax $args:" >&2
    tail -40 "$log" >&2
  fi
done
echo "leak-check.sh ($mode): $runs CLI runs, $failures with leaks or memory errors"
[ "$failures" -eq 0 ]
