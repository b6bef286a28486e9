#!/bin/bash
set -euo pipefail
if [ "${ROCM_VERSION}" = "7.2" ]; then
    pip install "torch==2.11.0"
else
    pip install "torch==2.10.0"
fi
