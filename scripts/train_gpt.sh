#!/usr/bin/env bash
# Builds models/gpt's training program and runs it: the default run trains the character-level
# GPT on the generated prose for 600 steps (a few minutes on 2 cores) and writes its training
# curve to gpt_curve.svg. Arguments go to gpt_train (`--help` lists them; docs/models.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh gpt_train >/dev/null
if [ $# -eq 0 ]; then set -- --plot gpt_curve.svg; fi
exec ./build/examples/gpt_train "$@"
