#!/bin/bash
# Branches of one `if`/`case` are alternatives; a conflict inside one branch, or with a
# pin outside the construct, still counts.
set -euo pipefail
if [ "${BUILD_TYPE}" = "all" ]; then
    pip install "numba==0.65.1"
    pip install "numba==0.64.0"  # [PIN001]
else
    pip install "numba==0.63.0"
fi
case "${ARCH}" in
    a) pip install "xxhash==3.4.0" ;;  # [PIN001]
    *) pip install "xxhash==3.5.0" ;;
esac
