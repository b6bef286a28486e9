"""Webhook handlers, one concern per module; their routers are combined here and only here, and
the CLI's composition root (bot/cli/wiring.py) hands the result to the service."""

from __future__ import annotations

from bot.service.router import Router


def build_router() -> Router:
    """Every handler module's router. The order is not load-bearing: the review hands its
    selection to the ROCm dispatch as a value within the same delivery."""
    from handlers import commands, rerun, review, rocm_runs

    return Router(review.router, rocm_runs.router, commands.router, rerun.router)
