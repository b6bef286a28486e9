import unittest

from sglang.test.test_utils import popen_launch_server

register_rocm_ci(600, "stage-c-4-gpu-mi350")


class TestServer(unittest.TestCase):
    def test_server(self):
        popen_launch_server(MODEL, URL, timeout=600,
                            other_args=["--tp", get_tp()])  # [PAR019]

    @unittest.skipIf(has_big_gpus(), "reason")
    def test_guarded(self):
        popen_launch_server(MODEL, URL, timeout=600, other_args=["--tp", "2"])  # [PAR019]
