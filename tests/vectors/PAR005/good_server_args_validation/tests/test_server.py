import unittest

from sglang.srt.server_args import ServerArgs

register_rocm_ci(600, "stage-c-4-gpu-mi350")


class TestValidation(unittest.TestCase):
    def test_rejects(self):
        with self.assertRaises(ValueError):
            ServerArgs(model_path=MODEL, tp_size=2, ep_size=4)
        ServerArgs(model_path=MODEL, tp_size=8, ep_size=4)
