import json
import subprocess

import torch.multiprocessing as mp

register_rocm_ci(600, "stage-c-4-gpu-mi350")
WORLD = 4


def _worker(rank, world):
    pass


def test_spawn():
    mp.spawn(_worker, args=(WORLD,), nprocs=WORLD, join=True)


def test_torchrun():
    layers = json.load(open("config.json"))["num_hidden_layers"]
    subprocess.run(f"torchrun --nproc-per-node {min(WORLD, layers)} tests/worker.py", shell=True)
