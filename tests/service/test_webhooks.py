"""Signature verification and payload parsing, without a server."""

from __future__ import annotations

import json

import pytest

from bot.core.events import Event
from bot.service.webhooks import WebhookError, parse_delivery, sign, verify_signature

# The example in GitHub's documentation ("Validating webhook deliveries").
DOC_SECRET = b"It's a Secret to Everybody"
DOC_PAYLOAD = b"Hello, World!"
DOC_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_githubs_documented_example_verifies() -> None:
    assert sign(DOC_SECRET, DOC_PAYLOAD) == DOC_SIGNATURE
    verify_signature([DOC_SECRET], DOC_PAYLOAD, DOC_SIGNATURE)


@pytest.mark.parametrize(
    ("secrets", "signature", "reason"),
    [
        ([DOC_SECRET], None, "missing X-Hub-Signature-256"),
        ([DOC_SECRET], "", "missing X-Hub-Signature-256"),
        ([DOC_SECRET], "sha1=757107ea", "must start with sha256="),
        ([], DOC_SIGNATURE, "no webhook secret"),
        ([b"other"], DOC_SIGNATURE, "does not match"),
        ([DOC_SECRET], DOC_SIGNATURE[:-1] + "0", "does not match"),
    ],
)
def test_bad_signatures_are_401(secrets: list[bytes], signature: str | None, reason: str) -> None:
    with pytest.raises(WebhookError, match=reason) as exc:
        verify_signature(secrets, DOC_PAYLOAD, signature)
    assert exc.value.status == 401


def test_any_configured_secret_verifies_during_rotation() -> None:
    verify_signature([b"new", DOC_SECRET], DOC_PAYLOAD, DOC_SIGNATURE)
    verify_signature([DOC_SECRET, b"new"], DOC_PAYLOAD, DOC_SIGNATURE)


def _headers(body: bytes, **extra: str) -> dict[str, str]:
    return {"x-github-event": "issue_comment", "x-github-delivery": "d1",
            "x-hub-signature-256": sign(b"s", body), "content-type": "application/json", **extra}


def test_json_and_form_encoded_payloads_parse() -> None:
    body = json.dumps({"action": "created", "x": 1}).encode()
    assert parse_delivery(_headers(body), body, [b"s"]).payload == {"action": "created", "x": 1}
    form = b"payload=" + json.dumps({"action": "created"}).replace(" ", "+").encode()
    form = form.replace(b"{", b"%7B").replace(b"}", b"%7D").replace(b'"', b"%22").replace(b":", b"%3A")
    parsed = parse_delivery(_headers(form, **{"content-type": "application/x-www-form-urlencoded"}), form,
                            [b"s"])
    assert parsed.payload == {"action": "created"} and parsed.event == "issue_comment"


@pytest.mark.parametrize(
    ("body", "headers", "status", "reason"),
    [
        (b"{}", {"x-github-event": ""}, 400, "missing X-GitHub-Event"),
        (b"{}", {"x-github-delivery": ""}, 400, "missing X-GitHub-Delivery"),
        (b"{}", {"x-github-delivery": "d" * 101}, 400, "too long"),
        (b"{}", {"content-type": "text/plain"}, 415, "unsupported content type"),
        (b"{nope", {}, 400, "not valid JSON"),
        (b"[1, 2]", {}, 400, "must be a JSON object"),
        (b"\xff", {}, 400, "not valid JSON"),
        (b"a=1", {"content-type": "application/x-www-form-urlencoded"}, 400, "no single `payload`"),
        (b"%%%", {"content-type": "application/x-www-form-urlencoded"}, 400, "form body does not parse"),
    ],
)
def test_malformed_deliveries_are_rejected_with_a_reason(
    body: bytes, headers: dict[str, str], status: int, reason: str
) -> None:
    with pytest.raises(WebhookError, match=reason) as exc:
        parse_delivery(_headers(body, **headers), body, [b"s"])
    assert exc.value.status == status


def test_event_fields_come_from_each_payload_shape() -> None:
    pr = Event.from_payload("pull_request", "d", {
        "action": "opened", "number": 3, "pull_request": {"number": 3, "head": {"sha": "abc"}},
        "repository": {"full_name": "o/r"}, "installation": {"id": 9}, "sender": {"login": "u"}})
    assert (pr.pr_key, pr.head_sha, pr.installation_id, pr.sender) == ("o/r#3", "abc", 9, "u")
    comment = Event.from_payload("issue_comment", "d", {
        "issue": {"number": 4, "pull_request": {}}, "repository": {"full_name": "o/r"}})
    assert comment.pr_key == "o/r#4" and comment.head_sha is None
    issue = Event.from_payload("issue_comment", "d", {"issue": {"number": 4},
                                                      "repository": {"full_name": "o/r"}})
    assert issue.pr_key is None
    run = Event.from_payload("workflow_run", "d", {
        "workflow_run": {"head_sha": "def", "pull_requests": [{"number": 8}]},
        "repository": {"full_name": "o/r"}})
    assert (run.pr_number, run.head_sha) == (8, "def")
    odd = Event.from_payload("pull_request", "d", {"number": True, "pull_request": "x", "repository": []})
    assert (odd.pr_number, odd.repository, odd.action) == (None, None, None)
