import os


def get_bool_env_var(name, default="false"):
    value = os.getenv(name, default).lower()
    return value in ("true", "1")
