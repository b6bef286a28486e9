#!/bin/bash
set -euo pipefail
install_with_retry() {
  for attempt in 1 2 3; do "$@" && return 0; sleep 5; done
  return 1
}
docker exec ci_sglang pip install --upgrade pip
install_with_retry docker exec ci_sglang pip install --cache-dir=/sgl-data/pip-cache -e "python[dev_hip]"
docker exec ci_sglang pip install "numba==0.65.1"
docker exec -w /sglang-checkout ci_sglang bash -c "pip install 'xxhash==3.5.0' polars"  # [PIN004]
