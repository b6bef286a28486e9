"""The composition root: the one module that puts the whole product together.

The service runs whatever router and sweeps it is handed; the handlers, the pending-effects
sweep and the re-enable sweep sit above it and are wired in here, by the commands that run it
(`serve`, `worker`, `demo`, `replay`, `sandbox`), and so are what a worker does when it gives a
delivery up and when it starts live. Imports are lazy: `rocmbot audit` loads none of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from bot.service.router import Router
    from bot.service.worker import Clock, DeadLetter, GoLive, Reenable, Sweep
    from bot.store.store import Store
    from config.settings import Settings


def build_router() -> Router:
    """Every handler, in the order they run."""
    from handlers import build_router as handlers_router

    return handlers_router()


def pending_sweep() -> Sweep:
    """What a worker runs on a timer to complete effects left pending."""
    from bot.rocm.pending import sweep

    return sweep


def dead_letter() -> DeadLetter:
    """What a worker runs when it gives a delivery up: the PR's analysis check says so."""
    from bot.github.notice import analysis_failed

    return analysis_failed


def go_live() -> GoLive:
    """What a worker starting live runs once: make what dry-run recorded for current heads."""
    from bot.rocm.pending import go_live as make_live

    return make_live


def reenable_sweep() -> Reenable:
    """What a worker runs on a timer to sweep the parked tests of the repositories that are due."""
    from bot.rocm.reenable import sweep_due

    return sweep_due


def service_app(settings: Settings, *, run_worker: bool = False, store: Store | None = None,
                router: Router | None = None, clock: Clock | None = None) -> FastAPI:
    """The web service with the product's handlers (or ``router``'s), sweeps and handler
    contexts (GitHub through the App, or the local clone); ``clock``: the time the re-enable
    sweep's schedule follows (the system's by default)."""
    from bot.github.context import context_factory, no_app_notice
    from bot.service.app import create_app

    return create_app(settings, store=store, router=router or build_router(), sweep=pending_sweep(),
                      dead_letter=dead_letter(), go_live=go_live(), run_worker=run_worker,
                      reenable=reenable_sweep(), clock=clock,
                      contexts=lambda db: context_factory(settings, db),
                      notice=no_app_notice(settings))
