"""The simulator's parts on their own: git hashing, diffs and review positions, the description's matcher,
regeneration being deterministic, and the analysis path not importing the simulator."""

from __future__ import annotations

import json
import subprocess
import sys

from ghsim.diff import diff_commits
from ghsim.objects import ObjectStore, blob_sha
from ghsim.openapi import regenerate as openapi_regenerate
from ghsim.spec import SPEC_PATH, load_spec
from ghsim.webhooks import regenerate as webhooks_regenerate
from tests.gitrepo import GitRepo


def test_blob_tree_and_commit_hashing_match_git(git_repo: GitRepo) -> None:
    files = {
        "a.txt": "alpha\n",
        "dir/b.txt": "beta\n",
        "dir/sub/c.txt": "gamma\n",
        "dir-x": "sorts after dir\n",
    }
    git_repo.write_all(files)
    sha = git_repo.commit("one")
    store = ObjectStore()
    made = store.commit(files)
    assert made.tree == git_repo.git("rev-parse", f"{sha}^{{tree}}")
    assert blob_sha(b"alpha\n") == git_repo.git("rev-parse", f"{sha}:a.txt")


def test_diff_lines_positions_and_hunks() -> None:
    store = ObjectStore()
    lines = [f"{i}\n" for i in range(1, 31)]
    old = "".join(lines)
    lines[4], lines[24] = "five\n", "twenty-five\n"
    new = "".join(lines)
    base = store.commit({"f.py": old, "gone.py": "x\n", "same.py": "s\n"})
    head = store.commit({"f.py": new, "moved.py": "x\n", "gone.py": None}, base=base.sha, parents=[base.sha])
    head = store.commit({"same.py": None}, base=head.sha, parents=[head.sha])
    diffs = {d.filename: d for d in diff_commits(store, base, head)}
    assert {k: d.status for k, d in diffs.items()} == {
        "f.py": "modified",
        "moved.py": "renamed",
        "same.py": "removed",
    }
    assert diffs["moved.py"].previous_filename == "gone.py"
    changed = diffs["f.py"]
    assert changed.commentable("RIGHT") == set(range(2, 9)) | set(range(22, 29))
    assert 5 in changed.commentable("LEFT") and 15 not in changed.commentable("RIGHT")
    assert changed.hunk_of("RIGHT", 2) != changed.hunk_of("RIGHT", 22)
    position = changed.position_of("RIGHT", 5)
    assert position is not None
    assert changed.diff_hunk(position).splitlines()[-1] == "+five"
    assert store.merge_base(base.sha, head.sha) == base.sha


def test_operations_are_matched_by_the_most_specific_template() -> None:
    spec = load_spec()
    cases = {
        ("GET", "/repos/o/r/issues/comments/5"): "issues/get-comment",
        ("GET", "/repos/o/r/issues/5/comments"): "issues/list-comments",
        ("GET", "/repos/o/r/commits/abc/check-runs"): "checks/list-for-ref",
        ("GET", "/repos/o/r/commits/abc"): "repos/get-commit",
        ("GET", "/repos/o/r/contents/a/b/c.py"): "repos/get-content",
        ("POST", "/repos/o/r/actions/workflows/rocm.yml/dispatches"): "actions/create-workflow-dispatch",
    }
    for (method, path), operation in cases.items():
        found = spec.match(method, path)
        assert found is not None and found[0].operation_id == operation, path
    assert spec.match("DELETE", "/repos/o/r") is None


def test_regenerating_the_openapi_subset_from_itself_is_a_fixed_point() -> None:
    vendored = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    again = openapi_regenerate.trim(vendored, openapi_regenerate.VERSION)
    assert again["paths"] == vendored["paths"]
    assert again["components"] == vendored["components"]


def test_regenerating_the_webhook_schema_from_itself_is_a_fixed_point() -> None:
    vendored = json.loads((webhooks_regenerate.HERE / "schema.json").read_text(encoding="utf-8"))
    again = webhooks_regenerate.trim_schema(vendored)
    assert again["definitions"] == vendored["definitions"]
    examples = json.loads((webhooks_regenerate.HERE / "examples.json").read_text(encoding="utf-8"))
    index = [
        {"name": event, "examples": [examples[k] for k in examples if k.partition(".")[0] == event]}
        for event in webhooks_regenerate.EVENTS
    ]
    picked = webhooks_regenerate.trim_examples(index, vendored)
    assert picked == {k: v for k, v in examples.items() if k != "_source"}


def test_vendored_files_are_small_and_licensed() -> None:
    for folder in (SPEC_PATH.parent, webhooks_regenerate.HERE):
        assert "MIT" in (folder / "LICENSE").read_text(encoding="utf-8")
        for data in folder.glob("*.json"):
            assert data.stat().st_size < 1_000_000, data


def test_the_analysis_command_path_does_not_import_the_simulator() -> None:
    code = (
        "import sys, bot.cli; print(sorted(m for m in sys.modules if m.startswith(('ghsim', 'fastapi'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
