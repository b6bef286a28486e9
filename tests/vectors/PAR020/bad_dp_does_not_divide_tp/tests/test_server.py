import unittest

from sglang.test.test_utils import popen_launch_server

register_rocm_ci(600, "stage-c-4-gpu-mi350")


class TestDpAttention(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process = popen_launch_server(
            MODEL, URL, timeout=600,
            other_args=["--tp", "4", "--dp", "3", "--enable-dp-attention"],  # [PAR020]
        )
