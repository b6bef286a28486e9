from typing import Literal

import typer

register_rocm_ci(600, "stage-c-4-gpu-mi350")

app = typer.Typer()


@app.command()
def train(hardware: Literal["MI300", "MI355"] = "MI300", heads: int = typer.Option(8)):
    tp = 4 if hardware == "MI355" else 2
    execute_train(train_args=(
        "--actor-num-nodes 1 "
        "--actor-num-gpus-per-node 4 "
        "--colocate "
        f"--tensor-model-parallel-size {tp} "
        f"--num-attention-heads {heads} "
    ))


if __name__ == "__main__":
    app()
