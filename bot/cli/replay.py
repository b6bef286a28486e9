"""`rocmbot replay`: post a payload, signed, to a running service, or process it in-process."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path

from bot.service.router import Router
from bot.service.webhooks import WebhookError, parse_delivery, sign
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


def replay_dry_run(settings: Settings, router: Router, event: str, body: bytes,
                   repo_path: str | None = None) -> str:
    """Process the payload with ``router``'s handlers on a scratch store and describe what
    they would have done (ValueError: the body is not a delivery). With ``repo_path`` (a
    local clone) GitHub is the local port: reads come from the clone, and writes are
    recorded and listed instead of sent."""
    from bot.cli.demo import describe_writes
    from bot.core.events import Event
    from bot.github.context import context_factory
    from bot.github.local import LocalPort
    from bot.store.store import Store

    try:
        delivery = parse_delivery({"x-github-event": event, "x-github-delivery": "replay"}, body, [],
                                  verify=False)
    except WebhookError as exc:
        raise ValueError(f"not a valid delivery: {exc.reason}") from exc
    ev = Event.from_payload(delivery.event, f"replay-{uuid.uuid4()}", delivery.payload)
    port: LocalPort | None = None
    if repo_path is not None:
        pr = delivery.payload.get("pull_request") or {}
        base = (pr.get("base") or {}).get("sha") or "HEAD"
        head = (pr.get("head") or {}).get("sha") or "HEAD"
        author = str((pr.get("user") or {}).get("login") or "contributor")
        port = LocalPort(repo_path, repo=ev.repository or "local/repo",
                         prs={ev.pr_number: (base, head)} if ev.pr_number is not None else {},
                         default_ref=base, author=author)
    run_settings = settings.model_copy(update={"dry_run": port is None})
    with tempfile.TemporaryDirectory(prefix="rocmbot-replay-") as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'replay.db'}")
        try:
            store.upgrade()
            factory = context_factory(run_settings, store, (lambda e: port) if port is not None else None)
            handlers = router.handlers(ev)
            outcomes = router.dispatch(ev, factory(ev)) if handlers else []
            planned = [{"kind": e.kind, "target": e.target, "status": e.status, "result": e.result}
                       for e in store.effects()]
        finally:
            store.close()
            if port is not None:
                port.close()
    lines = [f"event {ev.name}.{ev.action or '-'} repository={ev.repository} pr={ev.pr_number}",
             f"handlers: {', '.join(o.handler for o in outcomes) or 'none for this event'}"]
    if port is not None:
        lines.append("would post:")
        lines.append(describe_writes(port.writes))
    else:
        lines.append("planned effects:" if planned else
                     "planned effects: none (without --repo and App credentials, GitHub cannot be read)")
        lines.extend("  " + json.dumps(p, default=str) for p in planned)
    return "\n".join(lines) + "\n"
