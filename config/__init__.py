"""Settings, the per-repository configuration model and its defaults."""
