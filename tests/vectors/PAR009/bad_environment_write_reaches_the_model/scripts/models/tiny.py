import os


def model_args():
    layers = int(os.environ.get("MODEL_ARGS_NUM_LAYERS") or 48)
    return f"--num-layers {layers} --num-attention-heads 8 "
