"""Small workflows in the shape of SGLang's AMD CI and miles' ROCm CI, for the CI model's tests.

`gate.yml` fails a job without the labels its inputs ask for (SGLang's `pr-gate.yml`);
`pr-amd.yml` runs the per-PR AMD suites behind a `changes` job (`dorny/paths-filter` and a
run-mode script) and the gate; `pr-amd-extra.yml` runs the `extra-` suite only with
`run-ci-extra`; `nightly-amd.yml` runs a nightly suite on a schedule; `pr-cuda.yml` names a
CUDA suite on NVIDIA runners.
"""

from __future__ import annotations

GATE = """\
on:
  workflow_call:
    inputs:
      require-run-ci: {type: boolean, default: true}
      require-run-ci-extra: {type: boolean, default: false}
jobs:
  pr-gate:
    runs-on: ubuntu-latest
    steps:
      - id: pr
        if: github.event_name == 'pull_request'
        uses: actions/github-script@v8
      - name: Require run-ci label
        if: github.event_name == 'pull_request' && inputs.require-run-ci == true
        run: |
          if [[ "${{ contains(fromJson(steps.pr.outputs.labels), 'run-ci') }}" == "false" ]]; then
            exit 1
          fi
      - name: Require run-ci-extra label
        if: github.event_name == 'pull_request' && inputs.require-run-ci-extra == true
        run: |
          if [[ "${{ contains(fromJson(steps.pr.outputs.labels), 'run-ci-extra') }}" == "false" ]]; then
            exit 1
          fi
"""

PR_AMD = """\
name: PR Test (AMD)
on:
  schedule:
    - cron: '0 */12 * * *'
  pull_request:
    paths: ["python/**", "test/**", ".github/workflows/pr-amd.yml", "docker/rocm.Dockerfile"]
  workflow_dispatch:
    inputs:
      target_stage: {type: string, default: ''}
      run_all_tests: {type: boolean, default: false}
jobs:
  call-gate:
    if: github.event_name != 'schedule'
    uses: ./.github/workflows/gate.yml
  check-changes:
    needs: [call-gate]
    if: always()
    runs-on: ubuntu-latest
    outputs:
      main_package: ${{ steps.filter.outputs.main_package || steps.run-mode.outputs.run_all_tests }}
      jit_kernel: ${{ steps.filter.outputs.jit_kernel || steps.run-mode.outputs.run_all_tests }}
    steps:
      - name: Determine run mode
        id: run-mode
        run: |
          if [[ "${{ inputs.run_all_tests }}" == "true" || "${{ github.event_name }}" == "schedule" ]]; then
            echo "run_all_tests=true" >> $GITHUB_OUTPUT
          else
            echo "run_all_tests=false" >> $GITHUB_OUTPUT
          fi
      - name: Detect file changes
        id: filter
        uses: dorny/paths-filter@v3
        if: steps.run-mode.outputs.run_all_tests != 'true'
        with:
          filters: |
            main_package:
              - "python/sglang/!(kernels)/**/!(*.md)"
              - "test/**/!(*.md)"
            jit_kernel:
              - "python/sglang/kernels/**"
              - "test/registered/kernels/**"
  stage-a-test-1-gpu-small-amd:
    needs: [check-changes, call-gate]
    if: |
      always() && !cancelled() &&
      (
        (contains(format(',{0},', inputs.target_stage), ',stage-a-test-1-gpu-small-amd,')) ||
        (
          !inputs.target_stage &&
          (needs.call-gate.result == 'success' || needs.call-gate.result == 'skipped') &&
          needs.check-changes.outputs.main_package == 'true'
        )
      )
    runs-on: ${{ format('linux-{0}-1gpu-sglang', inputs.runner_arch || 'mi300') }}
    steps:
      - run: bash scripts/ci/amd/exec.sh python3 run_suite.py --hw amd --suite stage-a-test-1-gpu-small-amd
  stage-b-test-1-gpu-small-amd:
    needs: [check-changes, stage-a-test-1-gpu-small-amd]
    if: |
      always() &&
      (
        !inputs.target_stage &&
        ((github.event_name == 'schedule') || (!failure() && !cancelled())) &&
        needs.check-changes.outputs.main_package == 'true'
      )
    runs-on: [linux-mi35x-gpu-8.fabric]
    steps:
      - run: python3 run_suite.py --hw amd --suite stage-b-test-1-gpu-small-amd
  jit-kernel-unit-test-amd:
    needs: [check-changes, call-gate]
    if: |
      always() && !cancelled() &&
      (needs.call-gate.result == 'success' || needs.call-gate.result == 'skipped') &&
      needs.check-changes.outputs.jit_kernel == 'true'
    runs-on: linux-mi300-1gpu-sglang
    steps:
      - run: python3 run_suite.py --hw amd --suite jit-kernel-unit-test-amd
"""

PR_AMD_EXTRA = """\
name: PR Test Extra (AMD)
on:
  pull_request:
    types: [opened, synchronize, reopened, labeled]
jobs:
  call-gate:
    if: github.event.action != 'labeled' || github.event.label.name == 'run-ci-extra'
    uses: ./.github/workflows/gate.yml
    with:
      require-run-ci: true
      require-run-ci-extra: true
  extra-a-test-1-gpu-small-amd:
    needs: [call-gate]
    if: ${{ !cancelled() && needs.call-gate.result == 'success' }}
    runs-on: linux-mi300-1gpu-sglang
    steps:
      - run: python3 run_suite.py --hw amd --suite extra-a-test-1-gpu-small-amd
"""

NIGHTLY_AMD = """\
on:
  schedule:
    - cron: '0 0 * * *'
jobs:
  nightly-amd-1-gpu:
    runs-on: linux-mi300-1gpu-sglang
    steps:
      - run: python3 run_suite.py --hw amd --suite nightly-amd-1-gpu
"""

PR_CUDA = """\
on:
  pull_request:
jobs:
  base-b-test-1-gpu-small:
    runs-on: 1-gpu-runner
    steps:
      - run: python3 run_suite.py --hw cuda --suite base-b-test-1-gpu-small
"""

SGLANG_WORKFLOWS = {
    ".github/workflows/gate.yml": GATE,
    ".github/workflows/pr-amd.yml": PR_AMD,
    ".github/workflows/pr-amd-extra.yml": PR_AMD_EXTRA,
    ".github/workflows/nightly-amd.yml": NIGHTLY_AMD,
    ".github/workflows/pr-cuda.yml": PR_CUDA,
}

RUN_SUITE = """\
from sglang.test.ci.ci_register import HWBackend

PER_COMMIT_SUITES = {
    HWBackend.AMD: [
        "stage-a-test-1-gpu-small-amd",
        "stage-b-test-1-gpu-small-amd",
        "jit-kernel-unit-test-amd",
        "extra-a-test-1-gpu-small-amd",
    ],
    HWBackend.CUDA: ["base-b-test-1-gpu-small"],
}
NIGHTLY_SUITES = {
    HWBackend.AMD: ["nightly-amd-1-gpu"],
}
"""
