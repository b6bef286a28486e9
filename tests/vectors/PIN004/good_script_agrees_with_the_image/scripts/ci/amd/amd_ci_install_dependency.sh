#!/bin/bash
docker exec ci_sglang pip install -e "python[dev_hip]" --no-deps
docker exec -w /sglang-checkout ci_sglang bash -c "pip install 'xxhash==3.5.0' 'numba==0.65.1'"
