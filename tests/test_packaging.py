"""What ships: the rocmbot distribution and its images hold the product, not the simulator."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = {"bot", "handlers", "config"}


def test_the_distributions_hold_the_product_and_the_simulator_apart() -> None:
    """As the build backend made them when they were installed (bin/test installs both)."""
    def top_level(name: str) -> set[str]:
        return set((importlib.metadata.distribution(name).read_text("top_level.txt") or "").split())

    assert top_level("rocmbot") == PRODUCT
    assert top_level("rocmbot-ghsim") == {"ghsim"}


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.rocm"])
def test_the_images_copy_no_part_of_the_simulator(dockerfile: str) -> None:
    copied: list[str] = []
    for line in (ROOT / dockerfile).read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"]:
            copied += [w for w in words[1:-1] if not w.startswith("--")]
    assert copied and set(copied) <= {"pyproject.toml", "README.md", "requirements.lock", *PRODUCT}, copied


def test_the_service_image_installs_the_locked_dependencies_then_rocmbot_alone() -> None:
    """requirements.lock, every file checked against its hash (tests/test_lock.py holds the lock to
    pyproject.toml); then rocmbot without dependencies, so that nothing unlocked comes in."""
    runs = [line.removeprefix("RUN ") for line in (ROOT / "Dockerfile").read_text().splitlines()
            if line.startswith("RUN ")]
    assert [run for run in runs if "pip install" in run] == [
        "pip install --no-cache-dir --require-hashes -r requirements.lock",
        "pip install --no-cache-dir --no-deps .",
    ]
