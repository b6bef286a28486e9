from sglang.srt.server_args import ServerArgs

register_rocm_ci(600, "stage-c-4-gpu-mi350")


def test_server_args():
    ServerArgs(model_path=MODEL, tp_size=2,
               ep_size=4)  # [PAR005]
