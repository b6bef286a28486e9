"""Webhook handlers, one concern per module; their routers are combined here and only here."""

from __future__ import annotations

from bot.router import Router


def build_router() -> Router:
    """Every handler module's router, in the order their handlers run."""
    return Router()
