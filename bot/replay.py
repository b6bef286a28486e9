"""`rocmbot replay`: post a payload, signed, to a running service, or process it in-process."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path

from bot.webhooks import WebhookError, parse_delivery, sign
from config.settings import Settings


def replay_to_url(settings: Settings, url: str, event: str, body: bytes) -> tuple[int, str]:
    """POST the body as GitHub would, signed with the first configured secret."""
    import httpx

    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "User-Agent": "rocmbot-replay",
    }
    if settings.secrets:
        headers["X-Hub-Signature-256"] = sign(settings.secrets[0], body)
    answer = httpx.post(url, content=body, headers=headers, timeout=30)
    return answer.status_code, answer.text


def replay_dry_run(settings: Settings, event: str, body: bytes) -> str:
    """Process the payload with this process's handlers on a scratch store, in dry-run, and
    describe what they would have done."""
    from bot.context import context_factory
    from bot.events import Event
    from bot.store.store import Store
    from handlers import build_router

    try:
        delivery = parse_delivery({"x-github-event": event, "x-github-delivery": "replay"}, body, [],
                                  verify=False)
    except WebhookError as exc:
        return f"not a valid delivery: {exc.reason}\n"
    dry = settings.model_copy(update={"dry_run": True})
    with tempfile.TemporaryDirectory(prefix="rocmbot-replay-") as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'replay.db'}")
        try:
            store.upgrade()
            ev = Event.from_payload(delivery.event, f"replay-{uuid.uuid4()}", delivery.payload)
            router = build_router()
            handlers = router.handlers(ev)
            outcomes = router.dispatch(ev, context_factory(dry, store)(ev)) if handlers else []
            planned = [{"kind": e.kind, "target": e.target, "status": e.status, "result": e.result}
                       for e in store.effects()]
        finally:
            store.close()
    lines = [f"event {ev.name}.{ev.action or '-'} repository={ev.repository} pr={ev.pr_number}",
             f"handlers: {', '.join(o.handler for o in outcomes) or 'none for this event'}",
             "planned effects:" if planned else "planned effects: none"]
    lines.extend("  " + json.dumps(p, default=str) for p in planned)
    return "\n".join(lines) + "\n"
