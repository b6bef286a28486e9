import unittest

from sglang.test.test_utils import is_in_ci, popen_launch_server

register_rocm_ci(600, "stage-c-4-gpu-mi350")


@unittest.skipIf(is_in_ci(), "too large for CI")
class TestLarge(unittest.TestCase):
    def test_large(self):
        popen_launch_server(MODEL, URL, timeout=600, other_args=["--tp", "8"])


class TestNightly(unittest.TestCase):
    def test_large(self):
        if is_in_ci():
            return
        popen_launch_server(MODEL, URL, timeout=600, other_args=["--tp", "8"])

    def test_small(self):
        popen_launch_server(MODEL, URL, timeout=600, other_args=["--tp=4", "--dp", "2"])
