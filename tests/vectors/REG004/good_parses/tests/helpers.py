def ok() -> None:
    pass
