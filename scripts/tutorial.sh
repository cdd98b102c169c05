#!/usr/bin/env bash
# The main job: builds the cjax CLI and runs the gradient-checkpointing tutorial's example through
# it (the traced jaxpr of f, as JAX's make_jaxpr prints it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh cjax >/dev/null
./build/tools/cjax jaxpr --example tutorial/f
