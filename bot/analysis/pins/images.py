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
    """The images a `container:` job may run in: its literal image, or the values an
    `${{ inputs.X }}` image takes (from the callers' `with:`, else the input's default);
    None when the image cannot be followed."""
    text = (job.container or "").strip()
    if not text:
        return None
    if not expression_spans(text):
        return [text]
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
