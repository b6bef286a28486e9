import subprocess

import sglang as sgl

register_rocm_ci(600, "stage-c-4-gpu-mi350")
TP = 8


def test_engine():
    engine = sgl.Engine(model_path=MODEL, tp_size=TP)  # [PAR003]
    engine.shutdown()


def test_command_line():
    command = ["python3", "-m", "sglang.launch_server", "--model-path", MODEL,
               "--tensor-parallel-size", str(TP)]  # [PAR003]
    subprocess.Popen(command)
