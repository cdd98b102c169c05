#!/usr/bin/env bash
# Runs the random-program properties (tests/property/) over a range of seeds, in the Release build.
#   scripts/property.sh [--seed FIRST[-LAST]] [--property NAME] [--size MAX_INSTRS] [--depth D]
#                       [--jit]
# Default: seeds 0-9999, every property (jvp_fd, vjp_jvp, policies, roundtrip, verify, compiled), programs
# of up to 8 instructions with checkpoints nested 2 deep (--size, --depth: bigger ones; --jit: a
# quarter of the checkpoints become jit calls, see GenOptions::jit_calls). A failing
# seed is printed with its program, a shrunk program that still fails, and the reason; rerun just
# it with --seed N. CJAX_BUILD_DIR=DIR builds and runs test_property in DIR (a Release build of
# your own) instead of build/ through scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

first=0 last=9999 only="" size=8 depth=2 jit=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seed)
      [ $# -ge 2 ] || { echo "property.sh: --seed needs FIRST[-LAST]" >&2; exit 2; }
      first=${2%%-*}
      last=${2#*-}
      shift 2 ;;
    --property)
      [ $# -ge 2 ] || { echo "property.sh: --property needs a name" >&2; exit 2; }
      only=$2
      shift 2 ;;
    --size) size=${2:?}; shift 2 ;;
    --depth) depth=${2:?}; shift 2 ;;
    --jit) jit=1; shift ;;
    *) sed -n '2,11p' "$0" >&2; exit 2 ;;
  esac
done
case "$first$last" in *[!0-9]*) echo "property.sh: bad --seed range" >&2; exit 2 ;; esac
[ "$last" -ge "$first" ] || { echo "property.sh: empty --seed range" >&2; exit 2; }

build_dir=${CJAX_BUILD_DIR:-build}
if [ "$build_dir" = build ]; then
  bash scripts/build.sh test_property >/dev/null
else
  unset CCACHE_BASEDIR
  [ -f "$build_dir/build.ninja" ] || cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build_dir" test_property >/dev/null
fi
CJAX_PROPERTY_FIRST=$first CJAX_PROPERTY_COUNT=$((last - first + 1)) CJAX_PROPERTY_ONLY=$only \
  CJAX_PROPERTY_MAX_INSTRS=$size CJAX_PROPERTY_MAX_DEPTH=$depth CJAX_PROPERTY_JIT=$jit \
  "$build_dir/tests/test_property" '[.range]'
