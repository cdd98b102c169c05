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
# One compiler cache serves every clone on this machine (CI builds a fresh clone in another
# folder): with CCACHE_BASEDIR at the checkout, ccache hands the compiler paths relative to the
# build directory, so the same sources hit the same entries wherever they are checked out, and
# with CCACHE_NOHASHDIR the sanitizer build's line tables do not key entries by directory.
# std::source_location then records `../examples/tutorial.cc`, which reports print as
# `examples/tutorial.cc` (ir/source_info.cc).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B "$build_dir" -G Ninja "${cmake_args[@]}" >/dev/null
ninja -C "$build_dir" "$@"
