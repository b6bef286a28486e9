from dataclasses import dataclass
from typing import Optional


@dataclass
class CIRegistry:
    est_time: float
    stage: Optional[str] = None
    runner_config: Optional[str] = None
    suite: Optional[str] = None

    @property
    def effective_suite(self) -> Optional[str]:
        if self.stage is not None and self.runner_config is not None:
            return f"{self.stage}-test-{self.runner_config}"
        return self.suite


def register_amd_ci(
    est_time: float,
    suite: Optional[str] = None,
    nightly: bool = False,
    disabled: Optional[str] = None,
    *,
    stage: Optional[str] = None,
    runner_config: Optional[str] = None,
):
    """Marker for AMD CI registration (parsed; a no-op at run time)."""
    return None
