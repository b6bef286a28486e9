"""The images a `container:` job may run in, as the pins read them (bot/analysis/pins/images.py)."""

from __future__ import annotations

from bot.analysis.pins.images import job_images
from bot.analysis.workflows import Job, Trigger, Workflow


def _job(container: str | None, params: tuple[tuple[str, str], ...] = ()) -> Job:
    return Job("j", "j", 1, None, (), container=container, params=params)


def _workflow(job: Job, default: str | None = None) -> Workflow:
    return Workflow(".github/workflows/w.yml", (job,), frozenset({"workflow_call"}),
                    (Trigger("workflow_call", inputs=(("image", default, None),)),))


def test_literal_images_and_none() -> None:
    assert job_images(_workflow(_job("rocm/sglang:v1")), _job("rocm/sglang:v1"), []) == ["rocm/sglang:v1"]
    assert job_images(_workflow(_job(None)), _job(None), []) is None
    assert job_images(_workflow(_job("  ")), _job("  "), []) is None
    weird = _job("${{ github.event.inputs.x }}")
    assert job_images(_workflow(weird), weird, []) is None  # neither an input nor a job's output


def test_an_input_image_takes_its_callers_values_or_its_default() -> None:
    job = _job("${{ inputs.image }}")
    flow = _workflow(job, "rocm/base:1")
    assert job_images(flow, job, []) == ["rocm/base:1"]
    callers = [("a.yml", _job(None, (("image", "rocm/a:2"),))),
               ("b.yml", _job(None, (("image", " rocm/b:3 "),)))]
    assert job_images(flow, job, callers) == ["rocm/a:2", "rocm/b:3"]
    assert job_images(flow, job, [("c.yml", _job(None, (("image", "${{ matrix.i }}"),)))]) is None
    assert job_images(flow, job, [("d.yml", _job(None))]) is None  # the caller passes none
    assert job_images(_workflow(job, None), job, []) is None  # no default
    assert job_images(_workflow(job, "${{ vars.IMAGE }}"), job, []) is None
