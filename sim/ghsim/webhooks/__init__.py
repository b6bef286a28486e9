"""Webhooks for the simulator: octokit's examples and schemas, payload builders, signing, delivery."""

from ghsim.webhooks.delivery import deliver, encode, record_delivery, sign, webhook_headers
from ghsim.webhooks.payloads import Payloads, example, validate_payload, webhook_schema

__all__ = [
    "Payloads",
    "deliver",
    "encode",
    "example",
    "record_delivery",
    "sign",
    "validate_payload",
    "webhook_headers",
    "webhook_schema",
]
