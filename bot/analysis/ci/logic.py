"""Three-valued logic (true, false, None for not known), as conditions of a CI are decided."""

from __future__ import annotations


def and3(a: bool | None, b: bool | None) -> bool | None:
    """False if either is; else not known if either is not."""
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def or3(a: bool | None, b: bool | None) -> bool | None:
    """True if either is; else not known if either is not."""
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def not3(a: bool | None) -> bool | None:
    return None if a is None else not a
