"""Audit speed against the parse floor, and the CLI's import cost.

Generates a git repository shaped like the target ones (1,000 test files over 20 harness
modules, model scripts, a ROCm Dockerfile and workflows), then times, in the same run:

- the floor: reading the same Python files from disk and `ast.parse`-ing each once;
- `audit` of the committed revision through the git tree (fresh caches every round), in
  one process and over the processes `rocmbot audit` uses by default (one per CPU), and in
  one process with launch resolution off (markers, imports and pins only);
- `python -c "import bot.cli"` against `python -c "pass"`, and which heavy modules
  `rocmbot analyze` imports (none is the target).

With `--repo PATH [--rev REV] [--config FILE]` it measures a real repository instead (a git
directory or a clone, at REV, default HEAD, under FILE's configuration if given): the floor
is reading and `ast.parse`-ing, once and in one process, every Python file that the audit
itself reads there (recorded on a first audit), and each measurement is taken `--rounds`
times (at least five), alternating floor and audits, and reported as min / median / max.
With `--analyze` as well it times `rocmbot analyze` of the newest commit at or before REV
that changes exactly one test file, against the floor of the distinct Python files that
analysis reads at the base and the head. With `--local` instead it times the same change as a
pull request processed through the local port (the service's `ROCMBOT_LOCAL_REPO` mode)
against `rocmbot analyze` of it: as whole commands (`rocmbot replay --dry-run --repo` of a
pull_request delivery against `rocmbot analyze --repo --base --head`), and in this process as
a worker runs it, imports done (the handlers through `local_ports`, on a fresh store, against
the analysis `analyze` runs).

Run: `.venv/bin/python -m bench.audit [--tests N] [--rounds R]` or
`.venv/bin/python -m bench.audit --repo ../miles [--rev REV] [--config FILE]`. Prints a table;
writes JSON to `bench/results/audit.json` (generated) or `bench/results/audit-<repo>.json`
(real; `audit-<repo>-<config file's stem>.json` with `--config`; `analyze-<repo>.json` and
`local-<repo>.json` with `--analyze` and `--local`).
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from bot.analysis.engine import analyze, audit
from bot.analysis.pool import default_jobs
from bot.analysis.tree import GitRepository, GitTree
from bot.cli.example import DOCKERFILE, HARNESS, MODEL, WORKFLOW
from config.repo import LoadedConfig, parse_config

TEST = '''\
"""Generated end-to-end test {n}."""

import os

from tests.e2e.group{g}._common import CaseConfig, execute, prepare

register_cuda_ci({est}, "stage-c-8-gpu-h200")
register_rocm_ci({est}, "stage-c-4-gpu-mi350"{disabled})

CASE = CaseConfig(
    num_gpus_per_node=4,
    tp_size={tp},
    pp_size={pp},
    cp_size=1,
    ep_size={ep},
    rollout_num_gpus_per_engine=4,
    sglang_ep_size=4,
    extra_args="--global-batch-size 64 --micro-batch-size 1 ",
)


EXPECTED_METRICS = {{
    "train/loss": (0.0, 12.0),
    "train/grad_norm": (0.0, 50.0),
    "rollout/response_len/mean": (16.0, 4096.0),
    "rollout/reward/mean": (-1.0, 1.0),
    "perf/tokens_per_gpu_per_sec": (10.0, 1.0e6),
}}


def _read_metrics(path: str) -> dict[str, float]:
    """Parse the last line of each metric from the job's log."""
    metrics: dict[str, float] = {{}}
    if not os.path.exists(path):
        return metrics
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if "=" not in line:
                continue
            key, _, value = line.strip().partition("=")
            try:
                metrics[key] = float(value)
            except ValueError:
                continue
    return metrics


def _check_metrics(metrics: dict[str, float]) -> list[str]:
    problems = []
    for key, (low, high) in EXPECTED_METRICS.items():
        if key not in metrics:
            problems.append(f"missing metric {{key}}")
        elif not low <= metrics[key] <= high:
            problems.append(f"{{key}}={{metrics[key]}} outside [{{low}}, {{high}}]")
    return problems


def _cleanup(paths: list[str]) -> None:
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def test_case() -> None:
    if os.environ.get("CI_SKIP"):
        return
    prepare(CASE)
    try:
        execute(CASE)
    finally:
        _cleanup(["/tmp/ckpt/latest", "/tmp/rollout.jsonl"])
    problems = _check_metrics(_read_metrics("/tmp/metrics.log"))
    assert not problems, "; ".join(problems)


if __name__ == "__main__":
    test_case()
'''

CUDA_WORKFLOW = "on: [pull_request]\njobs:\n  t:\n    steps:\n      - run: run --suite stage-c-8-gpu-h200\n"


def generate(root: Path, tests: int, groups: int = 20) -> list[str]:
    """Write and commit the repository; return the Python files the audit parses."""
    files: dict[str, str] = {
        "tests/__init__.py": "",
        "tests/e2e/__init__.py": "",
        "scripts/models/qwen3.5-35B-A3B.py": MODEL,
        "docker/Dockerfile.rocm": DOCKERFILE,
        ".github/workflows/_run-ci-rocm.yml": WORKFLOW,
        ".github/workflows/pr-test.yml": CUDA_WORKFLOW,
    }
    for g in range(groups):
        files[f"tests/e2e/group{g}/__init__.py"] = ""
        files[f"tests/e2e/group{g}/_common.py"] = HARNESS
    for n in range(tests):
        disabled = ', disabled="FIXME: flaky"' if n % 10 == 0 else ""
        files[f"tests/e2e/group{n % groups}/test_case_{n:04d}.py"] = TEST.format(
            n=n, g=n % groups, est=600 + n, disabled=disabled,
            tp=(1, 2)[n % 2], pp=(1, 2)[n % 3 == 0], ep=(1, 2, 4)[n % 3],
        )
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "GIT_CONFIG_GLOBAL": os.devnull}
    # packed, as a clone leaves a repository (a fresh commit's loose objects cost a file and
    # an inflate each to list with their sizes, eight times what a pack does)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"],
                 ["repack", "-adq"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return sorted(p for p in files if p.endswith(".py") and p.startswith("tests/"))


def best(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def fresh() -> None:
    """Forget what earlier rounds worked out in this process (the shell scripts and
    requirement lines read), as a new `rocmbot` process would not have it."""
    from bot.analysis import requirements, shell

    for cached in (shell._commands, shell._installs_of, requirements.parse_spec):
        cached.cache_clear()


def floor(root: Path, paths: list[str]) -> None:
    for p in paths:
        ast.parse((root / p).read_text(encoding="utf-8"), filename=p)


def run_audit(root: Path, jobs: int = 1, loaded: LoadedConfig | None = None) -> int:
    fresh()
    with GitRepository(root) as repo:
        report = audit(repo.tree("HEAD"), jobs=jobs, loaded=loaded)
    return len(report.tests)


MARKERS_ONLY = parse_config("launch: {enabled: false}\n", ".github/rocmbot.yml")


def import_cost(rounds: int) -> dict[str, float | list[str]]:
    # as an installed copy runs: with its modules' bytecode cached (written by the first run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    codes = {"bare": "pass", "cli": "import bot.cli",
             "analysis": "import bot.cli, bot.analysis.engine, bot.formats"}
    times: dict[str, list[float]] = {name: [] for name in codes}
    for code in codes.values():
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
    for _ in range(max(rounds, 9)):  # alternate, so that a busy moment costs every row alike
        for name, code in codes.items():
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            times[name].append(time.perf_counter() - start)
    bare, cli, analysis = (min(times[name]) for name in codes)
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys; from bot.cli import main; import io, contextlib\n"
         "with contextlib.redirect_stdout(io.StringIO()): main(['demo', '--format', 'json'])\n"
         "print(sorted({'fastapi','uvicorn','sqlalchemy','github','starlette','httpx'} & set(sys.modules)))"],
        capture_output=True, text=True, check=True,
    )
    return {
        "python_startup_s": bare,
        "import_cli_s": cli,
        "import_analysis_s": analysis,
        "analysis_import_over_startup": analysis / bare,
        "analysis_import_over_startup_median":
            statistics.median(times["analysis"]) / statistics.median(times["bare"]),
        "web_modules_imported_by_analyze": json.loads(probe.stdout.strip().replace("'", '"')),
    }


class _RecordingTree(GitTree):
    """A git tree that remembers every path the analysis read."""

    def __init__(self, repo: GitRepository, sha: str) -> None:
        super().__init__(repo, sha)
        self.read_paths: set[str] = set()

    def read(self, path: str) -> bytes | None:
        data = super().read(path)
        if data is not None:
            self.read_paths.add(path)
        return data

    def stream(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        for path, data in super().stream(paths):
            self.read_paths.add(path)
            yield path, data


def python_files_read(root: Path, rev: str, loaded: LoadedConfig | None = None) -> dict[str, bytes]:
    """The Python files a one-process audit of ``rev`` reads, with their bytes."""
    with GitRepository(root) as repo:
        tree = _RecordingTree(repo, repo.resolve(rev))
        audit(tree, loaded=loaded, jobs=1)
        return {p: data for p in sorted(tree.read_paths) if p.endswith(".py")
                if (data := tree.read(p)) is not None}


def spread(fn: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def cpu(fn: Callable[[], object]) -> tuple[float, float, float]:
    """Wall time, this process's CPU time and its children's (forked workers, git) of one
    call. On a machine others share, CPU time is what the call itself cost: the wall time
    of work split over processes is, on idle cores, the larger of the two CPU times."""
    start, mine, theirs = time.perf_counter(), time.process_time(), _children()
    fn()
    return time.perf_counter() - start, time.process_time() - mine, _children() - theirs


def _children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def real(root: Path, rev: str, rounds: int, config: Path | None = None) -> None:
    """Measure the audit of a real repository against the parse floor of the files it reads
    (with ``config``, under that configuration file instead of the repository's)."""
    loaded = parse_config(config.read_text(), str(config)) if config is not None else None
    with GitRepository(root) as repo:
        sha = repo.resolve(rev)
    sources = python_files_read(root, sha, loaded)
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        for path, data in sources.items():  # the floor reads from disk, as a checkout has them
            (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / path).write_bytes(data)
        paths = sorted(sources)
        jobs = default_jobs()
        markers = 0

        def one(jobs: int) -> None:
            nonlocal markers
            fresh()
            with GitRepository(root) as repo:
                markers = len(audit(repo.tree(sha), loaded=loaded, jobs=jobs).tests)

        rounds = max(5, rounds)
        floor_t: list[float] = []
        one_t: list[float] = []
        par_t: list[float] = []
        floor_cpu: list[float] = []
        one_cpu: list[float] = []
        par_cpu: list[float] = []  # the larger of the parent's and the workers' CPU time
        for _ in range(rounds):  # alternate, so that a busy moment costs every row alike
            wall, mine, _ = cpu(lambda: floor(Path(tmp), paths))
            floor_t.append(wall)
            floor_cpu.append(mine)
            wall, mine, _ = cpu(lambda: one(1))
            one_t.append(wall)
            one_cpu.append(mine)
            wall, mine, theirs = cpu(lambda: one(jobs))
            par_t.append(wall)
            par_cpu.append(max(mine, theirs / max(1, jobs - 1)))
    imports = import_cost(rounds)
    med = statistics.median
    result = {
        "repository": str(root),
        "rev": sha,
        "config": None if config is None else str(config),
        "python_files_read": len(paths),
        "markers": markers,
        "jobs": jobs,
        "floor_s": floor_t,
        "audit_s": one_t,
        "audit_parallel_s": par_t,
        "audit_over_floor_median": med(one_t) / med(floor_t),
        "audit_parallel_over_floor_median": med(par_t) / med(floor_t),
        "floor_cpu_s": floor_cpu,
        "audit_cpu_s": one_cpu,
        "audit_parallel_critical_cpu_s": par_cpu,
        "audit_over_floor_cpu_median": med(one_cpu) / med(floor_cpu),
        "audit_parallel_over_floor_cpu_median": med(par_cpu) / med(floor_cpu),
        "load_average": os.getloadavg(),
        **imports,
    }
    rows = [
        ("repository", f"{root} at {sha[:10]}" + (f", configuration {config}" if config else "")),
        ("python files the audit reads", f"{len(paths)}"),
        ("markers", f"{markers}"),
        ("floor: read + ast.parse (min/median/max)", _mmm(floor_t)),
        ("rocmbot audit, 1 process", _mmm(one_t)),
        (f"rocmbot audit, {jobs} processes", _mmm(par_t)),
        ("audit / floor (medians), 1 process", f"{med(one_t) / med(floor_t):.2f}x (target <= 2)"),
        (f"audit / floor (medians), {jobs} processes", f"{med(par_t) / med(floor_t):.2f}x (target <= 1.3)"),
        ("CPU time: floor / audit 1 process", f"{_mmm(floor_cpu)} / {_mmm(one_cpu)}"),
        (f"CPU time: audit {jobs} processes, the busier one", _mmm(par_cpu)),
        ("audit / floor (CPU medians), 1 process", f"{med(one_cpu) / med(floor_cpu):.2f}x"),
        (f"audit / floor (CPU medians), {jobs} processes, busier one",
         f"{med(par_cpu) / med(floor_cpu):.2f}x"),
        ("import analysis / python startup (mins, medians)",
         f"{imports['analysis_import_over_startup']:.2f}x, "
         f"{imports['analysis_import_over_startup_median']:.2f}x"),
        ("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())),
    ]
    suffix = "" if config is None else f"-{config.stem}"
    _write(f"audit-{_name(root)}{suffix}.json", result, rows)


def one_test_change(root: Path, rev: str) -> str:
    """The newest commit at or before REV that changes exactly one file, a test's Python file
    (under `tests/` or `test/`): the shape of the commonest PR."""
    log = subprocess.run(
        ["git", f"--git-dir={root}" if (root / "HEAD").is_file() else f"--git-dir={root / '.git'}",
         "log", "--no-merges", "--format=@%H", "--name-only", "-n", "2000", rev],
        check=True, capture_output=True, text=True,
    ).stdout
    for block in log.split("@")[1:]:
        sha, *files = [line for line in block.splitlines() if line]
        if len(files) == 1 and files[0].endswith(".py") and files[0].split("/")[0] in ("tests", "test"):
            return sha
    raise SystemExit(f"no commit of the 2,000 before {rev} changes exactly one test file")


def real_analyze(root: Path, rev: str, rounds: int) -> None:
    """Measure `analyze` of a one-test-file change against the parse floor of what it reads."""
    with GitRepository(root) as repo:
        sha = one_test_change(root, repo.resolve(rev))
        parent = repo.resolve(f"{sha}~1")
        base_tree, head_tree = _RecordingTree(repo, parent), _RecordingTree(repo, sha)
        analyze(base_tree, head_tree)
        blobs: dict[bytes, str] = {}  # each distinct Python file read, at base or head, once
        for tree in (base_tree, head_tree):
            for path in sorted(tree.read_paths):
                data = tree.read(path)
                if path.endswith(".py") and data is not None:
                    blobs.setdefault(data, path)
    changed = subprocess.run(
        ["git", f"--git-dir={root}" if (root / "HEAD").is_file() else f"--git-dir={root / '.git'}",
         "diff", "--name-only", parent, sha], check=True, capture_output=True, text=True,
    ).stdout.split()

    def one() -> None:
        fresh()
        with GitRepository(root) as repo:
            analyze(repo.tree(parent), repo.tree(sha))

    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        paths = []
        for n, (data, path) in enumerate(blobs.items()):
            (Path(tmp) / str(n) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / str(n) / path).write_bytes(data)
            paths.append(f"{n}/{path}")
        floor_t: list[float] = []
        analyze_t: list[float] = []
        floor_cpu: list[float] = []
        analyze_cpu: list[float] = []
        for _ in range(max(5, rounds)):  # alternate, so that a busy moment costs both alike
            wall, mine, _ = cpu(lambda: floor(Path(tmp), paths))
            floor_t.append(wall)
            floor_cpu.append(mine)
            wall, mine, _ = cpu(one)
            analyze_t.append(wall)
            analyze_cpu.append(mine)
    med = statistics.median
    result = {
        "repository": str(root),
        "rev": sha,
        "changed": changed,
        "python_files_read": len(paths),
        "floor_s": floor_t,
        "analyze_s": analyze_t,
        "analyze_over_floor_median": med(analyze_t) / med(floor_t),
        "floor_cpu_s": floor_cpu,
        "analyze_cpu_s": analyze_cpu,
        "analyze_over_floor_cpu_median": med(analyze_cpu) / med(floor_cpu),
        "load_average": os.getloadavg(),
    }
    rows = [
        ("repository", f"{root}, change {sha[:10]}"),
        ("files it changes", ", ".join(changed)),
        ("distinct python files analyze reads", f"{len(paths)}"),
        ("floor: read + ast.parse (min/median/max)", _mmm(floor_t)),
        ("rocmbot analyze (min/median/max)", _mmm(analyze_t)),
        ("analyze / floor (medians)", f"{med(analyze_t) / med(floor_t):.2f}x (target <= 2)"),
        ("CPU time: floor / analyze", f"{_mmm(floor_cpu)} / {_mmm(analyze_cpu)}"),
        ("analyze / floor (CPU medians)", f"{med(analyze_cpu) / med(floor_cpu):.2f}x"),
        ("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())),
    ]
    _write(f"analyze-{_name(root)}.json", result, rows)


def _git_dir(root: Path) -> str:
    return f"--git-dir={root}" if (root / "HEAD").is_file() else f"--git-dir={root / '.git'}"


def _delivery(repo: str, base: str, head: str, changed: int) -> dict[str, object]:
    """A pull_request delivery for the PR from ``base`` to ``head``, as GitHub sends one."""
    return {
        "action": "synchronize", "number": 1,
        "pull_request": {"number": 1, "state": "open", "draft": False, "changed_files": changed,
                         "head": {"sha": head, "ref": "change"}, "base": {"sha": base, "ref": "main"},
                         "user": {"login": "contributor"}, "labels": []},
        "repository": {"full_name": repo, "default_branch": "main"},
    }


def git_processes(cmd: list[str], env: Mapping[str, str]) -> int:
    """How many git processes a command starts: a `git` first on PATH logs each, then runs git."""
    real_git = shutil.which("git")
    assert real_git is not None
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-git-") as tmp:
        log = Path(tmp) / "log"
        (Path(tmp) / "git").write_text(f'#!/bin/sh\necho >> "{log}"\nexec "{real_git}" "$@"\n')
        (Path(tmp) / "git").chmod(0o755)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                       env={**env, "PATH": f"{tmp}{os.pathsep}{env.get('PATH', '')}"})
        return len(log.read_text().splitlines()) if log.exists() else 0


def real_local(root: Path, rev: str, rounds: int) -> None:
    """Measure a one-test-file change processed through the local port against `rocmbot
    analyze` of it, as whole commands and in one process."""
    from bot.cli.wiring import build_router
    from bot.core.events import Event
    from bot.github.context import HandlerContext, local_ports
    from bot.github.local import LocalPort
    from bot.store.store import Store
    from config.settings import Settings

    with GitRepository(root) as repo:
        sha = one_test_change(root, repo.resolve(rev))
        parent = repo.resolve(f"{sha}~1")
    changed = subprocess.run(["git", _git_dir(root), "diff", "--name-only", parent, sha],
                             check=True, capture_output=True, text=True).stdout.split()
    payload = _delivery(f"local/{_name(root)}", parent, sha, len(changed))
    router = build_router()
    command = [sys.executable, "-m", "bot.cli"]
    analyze_cmd = [*command, "analyze", "--repo", str(root), "--base", parent, "--head", sha]

    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        body = Path(tmp) / "pull_request.json"
        body.write_text(json.dumps(payload))
        replay_cmd = [*command, "replay", str(body), "--event", "pull_request", "--dry-run",
                      "--repo", str(root)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROCMBOT_")}

        def run(cmd: list[str]) -> None:
            subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)

        def in_process_analyze() -> None:
            fresh()
            with GitRepository(root) as repo:
                analyze(repo.tree(parent), repo.tree(sha))

        def in_process_changed() -> None:  # what the handler analyses, straight from the trees
            fresh()
            with GitRepository(root) as repo:
                analyze(repo.tree(parent), repo.tree(sha), changed=changed, full=False)

        stores: list[Store] = []

        def in_process_local() -> None:
            fresh()
            event = Event.from_payload("pull_request", f"bench-{len(stores)}", payload)
            port = local_ports(str(root))(event)  # a new worker thread's port: nothing listed yet
            assert isinstance(port, LocalPort)
            try:
                router.dispatch(event, HandlerContext(Settings(dry_run=False), stores[-1], event, port))
            finally:
                port.close()

        # bytecode written, objects in the page cache; and the git processes each starts
        processes = {key: git_processes(cmd, env) for key, cmd in (("analyze", analyze_cmd),
                                                                   ("replay", replay_cmd))}
        times: dict[str, list[float]] = {
            k: [] for k in ("analyze", "replay", "in_analyze", "in_changed", "in_local")}
        cpus: dict[str, list[float]] = {k: [] for k in times}
        for n in range(max(5, rounds)):  # alternate, so that a busy moment costs both alike
            for key, cmd in (("analyze", analyze_cmd), ("replay", replay_cmd)):
                wall, _, theirs = cpu(functools.partial(run, cmd))
                times[key].append(wall)
                cpus[key].append(theirs)
            store = Store(f"sqlite:///{Path(tmp) / f'local-{n}.db'}")
            store.upgrade()  # a worker's store exists before its deliveries
            stores.append(store)
            for key, fn in (("in_analyze", in_process_analyze), ("in_changed", in_process_changed),
                            ("in_local", in_process_local)):
                wall, mine, theirs = cpu(fn)
                times[key].append(wall)
                cpus[key].append(mine + theirs)
            store.close()
    med = statistics.median

    def ratio(measured: str, baseline: str, of: dict[str, list[float]]) -> float:
        return med(of[measured]) / med(of[baseline])

    result = {
        "repository": str(root),
        "rev": sha,
        "base": parent,
        "changed": changed,
        "analyze_command": analyze_cmd[2:],
        "replay_command": replay_cmd[2:],
        **{f"{k}_s": v for k, v in times.items()},
        **{f"{k}_cpu_s": v for k, v in cpus.items()},
        "replay_over_analyze_median": ratio("replay", "analyze", times),
        "replay_over_analyze_cpu_median": ratio("replay", "analyze", cpus),
        "local_over_analyze_in_process_median": ratio("in_local", "in_analyze", times),
        "local_over_analyze_in_process_cpu_median": ratio("in_local", "in_analyze", cpus),
        "local_over_changed_only_in_process_median": ratio("in_local", "in_changed", times),
        "local_over_changed_only_in_process_cpu_median": ratio("in_local", "in_changed", cpus),
        "git_processes": processes,
        "load_average": os.getloadavg(),
    }
    rows = [
        ("repository", f"{root}, change {sha[:10]} (base {parent[:10]})"),
        ("files it changes", ", ".join(changed)),
        ("rocmbot analyze (min/median/max)", _mmm(times["analyze"])),
        ("rocmbot replay --repo (min/median/max)", _mmm(times["replay"])),
        ("replay / analyze (medians)",
         f"{ratio('replay', 'analyze', times):.2f}x wall, {ratio('replay', 'analyze', cpus):.2f}x CPU "
         "(target <= 1.2)"),
        ("CPU time: analyze / replay", f"{_mmm(cpus['analyze'])} / {_mmm(cpus['replay'])}"),
        ("git processes: analyze / replay", f"{processes['analyze']} / {processes['replay']}"),
        ("in one process: analyze's analysis", _mmm(times["in_analyze"])),
        ("in one process: the handler's, from git trees", _mmm(times["in_changed"])),
        ("in one process: the handler through the local port", _mmm(times["in_local"])),
        ("local port / analyze's analysis (medians)",
         f"{ratio('in_local', 'in_analyze', times):.2f}x wall, "
         f"{ratio('in_local', 'in_analyze', cpus):.2f}x CPU (target <= 1.2)"),
        ("local port / the handler's analysis from git trees (medians)",
         f"{ratio('in_local', 'in_changed', times):.2f}x wall, "
         f"{ratio('in_local', 'in_changed', cpus):.2f}x CPU"),
        ("load average (1, 5, 15 min)", " ".join(f"{x:.1f}" for x in os.getloadavg())),
    ]
    _write(f"local-{_name(root)}.json", result, rows)


def _write(name: str, result: Mapping[str, object], rows: list[tuple[str, str]]) -> None:
    """The result as JSON under `bench/results/`, and the rows as a table on stdout."""
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / name).write_text(json.dumps(result, indent=2) + "\n")
    width = max(len(r[0]) for r in rows)
    sys.stdout.write("\n".join(f"{k.ljust(width)}  {v}" for k, v in rows) + "\n")


def _name(root: Path) -> str:
    return root.resolve().name if root.resolve().name not in ("repo", ".git") else root.resolve().parent.name


def _mmm(ts: list[float]) -> str:
    med = statistics.median
    return f"{min(ts) * 1000:.0f} / {med(ts) * 1000:.0f} / {max(ts) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="measure this real repository (a git directory or clone)")
    parser.add_argument("--rev", default="HEAD", help="the revision of --repo to audit (default HEAD)")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="with --repo: audit under this configuration file instead of the repository's")
    parser.add_argument("--analyze", action="store_true",
                        help="with --repo: time `analyze` of the newest commit that changes one test file")
    parser.add_argument("--local", action="store_true",
                        help="with --repo: time that change through the local port against `analyze`")
    args = parser.parse_args()
    if args.repo is not None and args.local:
        real_local(args.repo, args.rev, args.rounds)
        return
    if args.repo is not None and args.analyze:
        real_analyze(args.repo, args.rev, args.rounds)
        return
    if args.repo is not None:
        real(args.repo, args.rev, args.rounds, args.config)
        return
    with tempfile.TemporaryDirectory(prefix="rocmbot-bench-") as tmp:
        root = Path(tmp) / "repo"
        paths = generate(root, args.tests)
        markers = run_audit(root)  # warm the page cache and git's object store
        floor_s = best(lambda: floor(root, paths), args.rounds)
        audit_s = best(lambda: run_audit(root), args.rounds)
        jobs = default_jobs()
        parallel_s = best(lambda: run_audit(root, jobs), args.rounds)
        markers_s = best(lambda: run_audit(root, 1, MARKERS_ONLY), args.rounds)
    imports = import_cost(args.rounds)
    startup, analysis = imports["python_startup_s"], imports["import_analysis_s"]
    assert isinstance(startup, float) and isinstance(analysis, float)
    result = {
        "test_files": args.tests,
        "python_files_parsed": len(paths),
        "markers": markers,
        "floor_parse_s": floor_s,
        "audit_s": audit_s,
        "audit_over_floor": audit_s / floor_s,
        "jobs": jobs,
        "audit_markers_only_s": markers_s,
        "audit_markers_only_over_floor": markers_s / floor_s,
        "audit_parallel_s": parallel_s,
        "audit_parallel_over_floor": parallel_s / floor_s,
        **imports,
    }
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "audit.json").write_text(json.dumps(result, indent=2) + "\n")
    rows = [
        ("python files parsed", f"{len(paths)}"),
        ("markers", f"{markers}"),
        ("floor: read + ast.parse", f"{floor_s * 1000:.0f} ms"),
        ("rocmbot audit (git tree), 1 process", f"{audit_s * 1000:.0f} ms"),
        ("audit / floor, 1 process", f"{audit_s / floor_s:.2f}x (target <= 1.5)"),
        (f"rocmbot audit, {jobs} processes", f"{parallel_s * 1000:.0f} ms"),
        (f"audit / floor, {jobs} processes", f"{parallel_s / floor_s:.2f}x (target <= 1.5)"),
        ("audit / floor, markers only, 1 process", f"{markers_s / floor_s:.2f}x"),
        ("import analysis / python startup",
         f"{analysis / startup:.2f}x ({analysis * 1000:.0f} ms vs {startup * 1000:.0f} ms)"),
        ("web modules imported by analyze", f"{imports['web_modules_imported_by_analyze']}"),
    ]
    width = max(len(r[0]) for r in rows)
    sys.stdout.write("\n".join(f"{k.ljust(width)}  {v}" for k, v in rows) + "\n")


if __name__ == "__main__":
    main()
