"""Which Dockerfile builds the image a job's `container:` names.

A workflow that builds an image says which Dockerfile and which names: a
`docker/build-push-action` step (`file:`, `context:`, `tags:`) or a `docker build -f FILE -t
NAME` command. A job's container image is matched against those names; an image given by an
expression is followed to the `with:` values of the callers of its workflow (`inputs.X`) or to
the input's default, and an expression that cannot be followed leaves the image unknown.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass

from bot.analysis.pins.files import Files
from bot.analysis.shell import commands
from bot.analysis.workflows import Job, Workflow, expression_spans

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}|\$\{[^}]*\}|\$[A-Za-z_]\w*")
_INPUT = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")
_NEEDS_OUTPUT = re.compile(r"\$\{\{\s*needs\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}")
_STEP_OUTPUT = re.compile(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}")
_INPUT_NAME = re.compile(r"(?:inputs|github\.event\.inputs)\.([\w-]+)")


@dataclass(frozen=True, slots=True)
class Built:
    """A Dockerfile some workflow builds, and a name it pushes (a glob: `*` where the
    workflow computes a part)."""

    dockerfile: str
    pattern: str
    workflow: str


def built_images(files: Files, workflows: list[str], dockerfiles: set[str]) -> list[Built]:
    """The images the workflows build from the repository's Dockerfiles, with their names."""
    out: list[Built] = []
    for path in workflows:
        workflow = files.workflow(path)
        if workflow is None:
            continue
        for job in workflow.jobs:
            for step in job.steps:
                if step.uses and step.uses.split("@", 1)[0].lower().endswith("build-push-action"):
                    context = (step.param("context") or ".").strip()
                    file = step.param("file") or posixpath.join(context, "Dockerfile")
                    found = _dockerfile(file, dockerfiles)
                    tags = re.split(r"[\s,]+", step.param("tags") or "")
                    out.extend(Built(found, _pattern(t), path) for t in tags if found and t)
                if step.run and "docker" in step.run and "build" in step.run:
                    out.extend(Built(found, _pattern(tag), path)
                               for found, tag in _docker_builds(step.run, dockerfiles))
    return [b for b in out if _named(b.pattern)]


def _docker_builds(script: str, dockerfiles: set[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for words in commands(script):
        texts = [w.text for w in words]
        if "docker" not in texts or "build" not in texts:
            continue
        file: str | None = None
        tags: list[str] = []
        for i, text in enumerate(texts[:-1]):
            if text in ("-f", "--file"):
                file = texts[i + 1]
            elif text in ("-t", "--tag"):
                tags.append(texts[i + 1])
        for text in texts:
            if text.startswith("--file="):
                file = text.partition("=")[2]
            elif text.startswith("--tag="):
                tags.append(text.partition("=")[2])
        found = _dockerfile(file or "Dockerfile", dockerfiles)
        out.extend((found, tag) for tag in tags if found)
    return out


def _dockerfile(file: str, dockerfiles: set[str]) -> str:
    path = posixpath.normpath(file.strip().removeprefix("./"))
    return path if path in dockerfiles else ""


def _pattern(tag: str) -> str:
    """A pushed name as a glob: what the workflow computes is `*`."""
    return _EXPRESSION.sub("*", tag.strip().strip("'\"")).lower()


def _named(pattern: str) -> bool:
    """A glob that names something: its repository part has letters of its own."""
    repository = pattern.rsplit(":", 1)[0] if ":" in pattern.rsplit("/", 1)[-1] else pattern
    return re.search(r"[a-z0-9]", repository.replace("*", "")) is not None and \
        "/" in repository.replace("*", "")


def job_images(workflow: Workflow, job: Job, callers: list[tuple[str, Job]]) -> list[str] | None:
    """The images a `container:` job may run in: its literal image, the values an
    `${{ inputs.X }}` image takes (from the callers' `with:`, else the input's default), or
    those a `${{ needs.J.outputs.K }}` image takes; None when the image cannot be followed."""
    text = (job.container or "").strip()
    if not text:
        return None
    if not expression_spans(text):
        return [text]
    output = _NEEDS_OUTPUT.fullmatch(text)
    if output is not None:
        return _job_output(workflow, output.group(1), output.group(2))
    found = _INPUT.fullmatch(text)
    if found is None:
        return None
    name = found.group(1)
    values: list[str] = []
    for _, caller in callers:
        value = next((v for k, v in caller.params if k == name), None)
        if value is None or expression_spans(value):
            return None
        values.append(value.strip())
    if not callers:
        default = next((d for t in workflow.on for n, d, _ in t.inputs if n == name), None)
        if default is None or expression_spans(default):
            return None
        values.append(default.strip())
    return values or None


def built_by(image: str, built: list[Built]) -> list[str]:
    """The Dockerfiles whose pushed names match an image (`registry/name:tag`)."""
    wanted = image.strip().lower()
    bare = wanted if ":" in wanted.rsplit("/", 1)[-1] else wanted + ":latest"
    found = [b.dockerfile for b in built
             if fnmatch.fnmatchcase(wanted, b.pattern) or fnmatch.fnmatchcase(bare, b.pattern)]
    return list(dict.fromkeys(found))


def _job_output(workflow: Workflow, job_id: str, name: str) -> list[str] | None:
    """The values a job's output may take when a step's script writes it to
    `$GITHUB_OUTPUT` (read with the CI model): with the inputs' defaults when run by hand,
    and empty when another event starts the workflow; None when one cannot be known."""
    from bot.analysis.ci.outputs import step_outputs

    job = next((j for j in workflow.jobs if j.id == job_id), None)
    expression = dict(job.outputs).get(name) if job is not None else None
    found = _STEP_OUTPUT.fullmatch(expression.strip()) if expression else None
    if job is None or found is None:
        return None
    step = next((st for st in job.steps if st.id == found.group(1)), None)
    if step is None or step.run is None:
        return None
    if "workflow_call" in workflow.triggers:
        return None  # its callers' inputs are not followed here
    defaults = {n: d or "" for t in workflow.on for n, d, _ in t.inputs}
    cases = [defaults] if "workflow_dispatch" in workflow.triggers else []
    if workflow.triggers - {"workflow_dispatch"}:
        cases.append({n: "" for n in defaults})
    values: list[str] = []
    for inputs in cases:
        def expression_value(text: str, inputs: dict[str, str] = inputs) -> str | None:
            named = _INPUT_NAME.fullmatch(text.strip())
            return inputs.get(named.group(1)) if named else None

        value = step_outputs(step.run, expression_value, env=dict(step.env)).get(found.group(2))
        if value is None:
            return None
        values.append(value)
    return list(dict.fromkeys(values)) or None
