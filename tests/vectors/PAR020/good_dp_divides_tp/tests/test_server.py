import unittest

from sglang.test.test_utils import popen_launch_server

register_rocm_ci(600, "stage-c-4-gpu-mi350")

OTHER_ARGS = ["--tp-size", "4", "--dp-size", "2"]


class TestDpAttention(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        other_args = OTHER_ARGS + ["--enable-dp-attention"]
        cls.process = popen_launch_server(MODEL, URL, timeout=600, other_args=other_args)
