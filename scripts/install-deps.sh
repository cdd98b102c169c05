#!/usr/bin/env bash
# Installs cjax's build and test dependencies from Debian 12 packages. Idempotent: packages already
# present are left alone, so a second run costs only the apt-get update.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git clang-format pkg-config
  libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libopenblas-dev libbenchmark-dev
  llvm-19-dev libmlir-19-dev mlir-19-tools
  clang-19 libclang-rt-19-dev valgrind  # fuzz/ (libFuzzer) and scripts/leak-check.sh --valgrind
  libplplot-dev  # `cjax memory --plot` (PLplot's SVG driver)
  libopenmpi-dev openmpi-bin  # collectives between processes (runtime/distributed.h, tests/mpi)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}"
