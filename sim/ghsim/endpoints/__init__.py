"""The simulator's REST operations, one module per area; importing them fills the handler registry."""

from ghsim.endpoints.base import HANDLERS

from . import actions, app, checks, issues, repos

__all__ = ["HANDLERS", "actions", "app", "checks", "issues", "repos"]
