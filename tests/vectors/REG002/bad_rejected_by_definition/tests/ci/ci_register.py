def register_rocm_ci(est_time: float, suite: str, *, labels: list[str], nightly: bool = False,
                     disabled: str | None = None):
    """Marker for ROCm CI registration (parsed; a no-op at run time)."""
    return None
