"""ROCm runs: which tests to dispatch, who may ask, and tracking the runs GitHub reports."""
