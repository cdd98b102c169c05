#!/usr/bin/env bash
# Runs the random-program properties (tests/property/) over a range of seeds, in the Release build.
#   scripts/property.sh [--seed FIRST[-LAST]] [--property NAME] [--size MAX_INSTRS] [--depth D]
# Default: seeds 0-9999, every property (jvp_fd, vjp_jvp, policies, roundtrip, verify), programs
# of up to 8 instructions with checkpoints nested 2 deep (--size, --depth: bigger ones). A failing
# seed is printed with its program, a shrunk program that still fails, and the reason; rerun just
# it with --seed N.
set -euo pipefail
cd "$(dirname "$0")/.."

first=0 last=9999 only="" size=8 depth=2
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
    *) sed -n '2,7p' "$0" >&2; exit 2 ;;
  esac
done
case "$first$last" in *[!0-9]*) echo "property.sh: bad --seed range" >&2; exit 2 ;; esac
[ "$last" -ge "$first" ] || { echo "property.sh: empty --seed range" >&2; exit 2; }

bash scripts/build.sh test_property >/dev/null
CJAX_PROPERTY_FIRST=$first CJAX_PROPERTY_COUNT=$((last - first + 1)) CJAX_PROPERTY_ONLY=$only \
  CJAX_PROPERTY_MAX_INSTRS=$size CJAX_PROPERTY_MAX_DEPTH=$depth \
  build/tests/test_property '[.range]'
