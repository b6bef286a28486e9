import subprocess
import sys

import torch.multiprocessing as mp

register_rocm_ci(600, "stage-c-4-gpu-mi350")
WORLD = 8  # [PAR003]


def _worker(rank, world):
    pass


def test_spawn():
    mp.spawn(_worker, args=(WORLD,), nprocs=WORLD, join=True)


def test_torchrun():
    subprocess.run([sys.executable, "-m", "torch.distributed.run",
                    "--nproc-per-node=16", "tests/worker.py"], check=True)  # [PAR003]
