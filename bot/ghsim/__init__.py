"""A stateful GitHub simulator for tests and the demo, checked against GitHub's OpenAPI description."""

from bot.ghsim.app import SimulatorApp, create_simulator
from bot.ghsim.faults import FaultPlan, RateLimiter
from bot.ghsim.server import Simulator, serve_simulator
from bot.ghsim.state import SimulatorState
from bot.ghsim.webhooks import Payloads, sign, validate_payload

__all__ = [
    "FaultPlan",
    "Payloads",
    "RateLimiter",
    "Simulator",
    "SimulatorApp",
    "SimulatorState",
    "create_simulator",
    "serve_simulator",
    "sign",
    "validate_payload",
]
