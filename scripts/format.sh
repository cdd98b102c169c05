#!/usr/bin/env bash
# Formats every C++ file git tracks, or would track (new files not yet added, ignored ones aside),
# with the repo's .clang-format; with --check, lists the files that differ and fails instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --style=file --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -ne 0 ]; then
    printf 'not formatted (run scripts/format.sh):\n'
    printf '  %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files clean"
else
  clang-format --style=file -i "${files[@]}"
fi
