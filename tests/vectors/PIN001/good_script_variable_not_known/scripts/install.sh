#!/bin/bash
# A version the shell computes, or that only one branch sets, is not known: never guessed.
set -euo pipefail
TORCHAUDIO_VERSION="$(python3 -c 'print("2.8.0")')"
pip install "torchaudio==${TORCHAUDIO_VERSION:-2.8.0}"
if [ -n "${OLD:-}" ]; then AUDIO="2.7.0"; fi
pip install "torchaudio==${AUDIO:-2.10.0}"
