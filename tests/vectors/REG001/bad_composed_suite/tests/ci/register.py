_SUFFIX = {"rocm": "-amd"}


def register_rocm_ci(est_time, *, stage, runner, disabled=None):
    """The suite is composed from the stage and the runner, with the backend's suffix."""
    return f"{stage}-test-{runner}{_SUFFIX['rocm']}"
