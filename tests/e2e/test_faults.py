"""Under injected 5xx and secondary rate limits, every delivery completes: one comment and one
review per PR, no duplicate write."""

from __future__ import annotations

from collections import Counter

from bot.example import TEST_TEMPLATE
from bot.publish import SUMMARY_MARKER
from tests.e2e.conftest import World

MOE = "tests/e2e/megatron/test_qwen35_moe.py"


def test_faults_do_not_lose_or_double_anything(world: World) -> None:
    faults = world.sim.faults
    faults.reseed(7)
    prs = []
    for n in range(4):
        prs.append(world.open_pr({MOE: TEST_TEMPLATE.format(disabled="", ep=4),
                                  f"docs/note{n}.md": f"{n}\n"}, branch=f"feature-{n}"))
    faults.fail(502, times=None, fraction=0.2)
    faults.secondary_rate_limit(retry_after=1, times=None, fraction=0.03)
    for pr in prs:
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "opened"))
    for pr in prs:
        before = pr.head_sha
        world.sim.state.push(pr, {"README.md": f"# miles {pr.number}\n"})
        world.deliver("pull_request", world.sim.payloads.pull_request(pr, "synchronize", before=before))
    world.settle(timeout=240)
    faults.clear()
    injected = Counter(i.kind for i in faults.injected)
    assert injected["status"] > 5, injected
    counts = world.store.counts()
    assert counts["dead"] == 0, [(d.delivery_id, d.last_error) for d in world.store.recent("dead")]
    for pr in prs:
        summaries = [c for c in world.bot_comments(pr) if c.body.startswith(SUMMARY_MARKER)]
        assert len(summaries) == 1, pr.number
        assert summaries[0].body.count("PAR002") >= 1
        assert len(world.reviews(pr)) == 1, pr.number
        assert len(world.checks(pr.head_sha)) == 1
