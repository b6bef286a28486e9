#!/bin/bash
set -euo pipefail
UV_PIP_INSTALL="uv pip install"
TORCHAUDIO_VERSION="2.8.0"
${UV_PIP_INSTALL} "torchaudio==${TORCHAUDIO_VERSION}"  # [PIN001]
