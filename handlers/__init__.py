"""Webhook handlers, one concern per module; their routers are combined here and only here."""

from __future__ import annotations

ROUTERS: tuple[object, ...] = ()
