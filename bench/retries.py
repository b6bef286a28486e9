"""How long a GitHub failure holds the thread that made the request, with the service's
default retry settings, against the GitHub simulator on loopback.

- a read answered 502 every time: the time until the port gives up, and how many requests
  it sent (the worker then retries the delivery later, with the thread free meanwhile);
- a comment refused once with a secondary rate limit and ``Retry-After: 2``: the time until
  it is posted, against the 2 s GitHub asked for.

Run: `.venv/bin/python -m bench.retries`. Writes `bench/results/retries.json`.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from github import GithubException
from pydantic import SecretStr

from bot.github.adapter import GitHubApp
from config.settings import Settings
from ghsim import serve_simulator


def main() -> None:
    with serve_simulator() as sim:
        state = sim.state
        repo = state.add_repository("octo/miles", files={"README.md": "# miles\n"})
        state.add_installation("octo", installation_id=5)
        head = state.commit(repo, {"a.py": "x = 1\n"}, branch="feature")
        pull = state.open_pull_request(repo, head=head, head_ref="feature")
        settings = Settings(app_id=state.app.id, private_key=SecretStr(state.app.private_key_pem),
                            github_api_url=sim.url, seconds_between_writes=0)
        port = GitHubApp(settings).installation(5)
        port.pull_request("octo/miles", pull.number)  # the token, and a connection, made

        sim.faults.fail(502, times=None, method="GET", path="/repos/*/pulls/*")
        before = len(state.find_calls("GET", "/repos/*/pulls/*"))
        started = time.monotonic()
        with contextlib.suppress(GithubException):
            port.pull_request("octo/miles", pull.number)
        held_5xx = time.monotonic() - started
        requests_5xx = len(state.find_calls("GET", "/repos/*/pulls/*")) - before
        sim.faults.clear()

        sim.faults.secondary_rate_limit(retry_after=2, times=1, method="POST", path="*/comments")
        started = time.monotonic()
        port.create_comment("octo/miles", pull.number, "hello")
        held_limit = time.monotonic() - started
        port.gh.close()
    result = {"persistent_5xx": {"seconds": round(held_5xx, 2), "requests": requests_5xx},
              "retry_after_2": {"seconds": round(held_limit, 2), "over_asked": round(held_limit / 2, 2)}}
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "retries.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"a read answered 502 every time: the thread is free after {held_5xx:.2f} s, "
          f"{requests_5xx} request(s) sent")
    print(f"Retry-After: 2 on a comment: posted after {held_limit:.2f} s "
          f"({held_limit / 2:.2f}x the 2 s asked)")


if __name__ == "__main__":
    main()
