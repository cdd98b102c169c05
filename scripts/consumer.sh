#!/usr/bin/env bash
# Proves docs/getting-started.md: installs cjax from a build into a fresh prefix, builds the
# separate project examples/consumer/ against it (CMake package, and pkg-config), runs its program,
# and asks the installed CLI about the project's own function through the plugin.
# Usage: scripts/consumer.sh [BUILD_DIR]   (default: build; it must already be built)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" >/dev/null

# The public headers must not reach MLIR or LLVM (the back end installs only its MLIR-free ones).
if grep -rlE '#include [<"](mlir|llvm)/' "$prefix/include" ||
  [ -e "$prefix/include/cjax/compiler/cpu/lowering.h" ]; then
  echo "consumer.sh: installed headers include MLIR/LLVM or the back end's internals" >&2
  exit 1
fi

# The package links the shared libraries of MLIR and LLVM by path: it loads no LLVM or MLIR CMake
# package (whose LLVMConfig looks for LibEdit, zstd, CURL, ... and reports each one it misses).
if grep -rqE 'find_dependency\((MLIR|LLVM)|find_package\((MLIR|LLVM)' "$prefix/lib/cmake/cjax"; then
  echo "consumer.sh: the installed CMake package loads MLIR's or LLVM's package" >&2
  exit 1
fi

unset CCACHE_BASEDIR
if ! configure_log=$(cmake -S examples/consumer -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then
  echo "$configure_log" >&2
  exit 1
fi
if grep -iE 'could not find|warning|error' <<<"$configure_log"; then
  echo "consumer.sh: configuring the consumer project printed the lines above" >&2
  exit 1
fi
ninja -C "$work/build" >/dev/null  # $work plays the doc's mymodel/, with its build/

expect() {  # expect NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    echo "consumer.sh: $1 differs from what docs/getting-started.md shows:" >&2
    diff <(echo "$2") <(echo "$3") >&2 || true
    exit 1
  fi
}

# What docs/getting-started.md shows after `$ COMMAND` (up to the next `$ ` line or the block's
# end), with the doc's example directory mapped to this copy of the project.
doc=$PWD/docs/getting-started.md
shown() {
  awk -v cmd="\$ $1" '$0 == cmd {on = 1; next} on && (/^\$ / || /^```/) {exit} on {print}' "$doc" |
    sed 's|/home/me/mymodel/|examples/consumer/|g'
}
check() {  # check COMMAND: runs it in the consumer's directory and compares with the doc
  local want
  want=$(shown "$1")
  [ -n "$want" ] || { echo "consumer.sh: docs/getting-started.md does not show \`$1\`" >&2; exit 1; }
  expect "\`$1\`" "$want" "$(cd "$work" && eval "$1")"
}

export PATH=$prefix/bin:$PATH
check "cjax --version"
check "./build/app"
check "cjax examples --plugin ./build/libmymodel.so"
check "cjax residuals --plugin ./build/libmymodel.so --function loss"
check "cjax residuals --plugin ./build/libmymodel.so --function loss --policy save_only_these_names --names hidden"
app_out=$("$work/build/app")
cjax=$prefix/bin/cjax
plugin=$work/build/libmymodel.so
"$cjax" grad --plugin "$plugin" --function loss --seed 0 --out "$work/grads" >/dev/null
[ -s "$work/grads/grad_W1.npy" ] || { echo "consumer.sh: no grad_W1.npy" >&2; exit 1; }

# pkg-config finds the same installation.
if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  # shellcheck disable=SC2046
  g++ -o "$work/app-pc" examples/consumer/main.cc examples/consumer/model.cc \
    $(pkg-config --cflags --libs cjax)
  expect "the pkg-config build" "$app_out" "$("$work/app-pc")"
fi
echo "consumer.sh: the consumer project builds and runs against an installed cjax"
