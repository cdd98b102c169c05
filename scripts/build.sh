#!/usr/bin/env bash
# Configures and builds cjax into build/ (or build-asan/ with --sanitize). Installs the Debian
# packages it needs first (idempotent). Usage: scripts/build.sh [--sanitize|--bench] [targets...]
# (--bench also configures the Google Benchmark programs of bench/ into build/).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  build_dir=build-asan
  # -O1 with line tables only: sanitizer reports keep file:line, and the build stays quick.
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DCJAX_SANITIZE=ON)
elif [ "${1:-}" = "--bench" ]; then
  shift
  cmake_args+=(-DCJAX_BUILD_BENCH=ON)
fi

bash scripts/install-deps.sh
# No CCACHE_BASEDIR: it makes ccache hand the compiler relative source paths, which would change
# the file names std::source_location records (and so every residual report).
unset CCACHE_BASEDIR
cmake -S . -B "$build_dir" -G Ninja "${cmake_args[@]}" >/dev/null
ninja -C "$build_dir" "$@"
