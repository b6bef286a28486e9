"""A stateful GitHub simulator for tests and the demo, checked against GitHub's OpenAPI description."""

from ghsim.app import SimulatorApp, create_simulator
from ghsim.faults import FaultPlan, RateLimiter
from ghsim.server import Simulator, serve_simulator
from ghsim.state import SimulatorState
from ghsim.webhooks import Payloads, sign, validate_payload

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
