"""The four images, built with podman and run as the operator's pod specs run them.

The mock and the generator containers come from the pods `plimsoll.kube.manifests`
builds (their commands, env and security contexts, translated by
tests/images/engine.py): uid 65532, read-only root filesystem, `/tmp` as a
tmpfs, every capability dropped, no privilege escalation. They share a podman
network of the test's own, each at a fixed address standing in for its pod IP;
this host reaches them on that network's bridge. The operator image is run the
same way (the chart's security context) for `--version`, `crd`, and an import of
every module the operator runs in a pod; the generator's, for its compiled hot path; the
examples', for an example target started as the examples' `command` starts it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import time
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest

from hatch_build import HOT_PATH, compiled_name
from plimsoll import DISTRIBUTION
from plimsoll.api.spec import Generators, PodShape
from plimsoll.api.trial import CONTROL_TOKEN_HEADER, TrialResult, TrialState
from plimsoll.api.upstream import Latency, Route, Upstream
from plimsoll.kube import manifests
from plimsoll.kube.names import GENERATOR_PORT, MOCK_CONFIG_MAP, RunIdentity
from tests.images.conftest import SIZE_GOAL, Images, image_sizes
from tests.images.engine import (
    ROOT,
    Network,
    flags,
    logs,
    pod_container,
    podman,
    podman_command,
    wait_healthy,
)

pytestmark = pytest.mark.slow

RUN = RunIdentity(
    namespace="plimsoll-images-test",
    run_id="images",
    owner_uid="0000",
    owner_name="images",
    owner_namespace="default",
)
UPSTREAM = Upstream(routes=[Route(name="hello", path="/hello", latency=Latency(fixed=0.002))])
CONFIG_MAPS = {MOCK_CONFIG_MAP: manifests.mock_config_map(RUN, UPSTREAM)}
# The chart's operator container, as podman flags (charts/plimsoll: uid 65532,
# read-only root, an emptyDir on /tmp, all capabilities dropped).
OPERATOR_POD_FLAGS = [
    "--user", "65532:65532", "--read-only", "--tmpfs", "/tmp:rw,size=64m,mode=1777",
    "--cap-drop=all", "--security-opt", "no-new-privileges",
]  # fmt: skip


def _in_operator_image(
    images: Images, *command: str, entrypoint: str | None = None
) -> subprocess.CompletedProcess[str]:
    return _in_image(images.operator, *command, entrypoint=entrypoint)


def _in_image(
    image: str, *command: str, entrypoint: str | None = None
) -> subprocess.CompletedProcess[str]:
    prefix = podman_command()
    assert prefix is not None
    override = ["--entrypoint", entrypoint] if entrypoint else []
    return subprocess.run(
        [
            *prefix, "run", "--rm", "--network", "none",
            *flags("podman_run_flags"), *OPERATOR_POD_FLAGS, *override,
            image, *command,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def test_the_mock_serves_the_config_from_its_env(images: Images, network: Network) -> None:
    pod = manifests.mock_pod(RUN, 0, UPSTREAM, images.mock)
    with pod_container(pod, images.mock, network, 10, CONFIG_MAPS) as address:
        base = f"http://{address}:{UPSTREAM.port}"
        assert wait_healthy(f"{base}/healthz").json() == {"status": "ok"}
        answer = httpx.get(f"{base}/hello", timeout=5)
        assert answer.status_code == 200
        assert len(answer.content) == 1024  # the route's default size, from the env's config
        assert "upstream;dur=" in answer.headers["server-timing"]
        assert httpx.get(f"{base}/unconfigured", timeout=5).status_code == 404
        user = podman("exec", f"mock-0-{network.name}", "id", "-u").strip()
        assert user == "65532"


def test_the_generator_runs_a_trial_against_the_mock(images: Images, network: Network) -> None:
    mock = manifests.mock_pod(RUN, 0, UPSTREAM, images.mock)
    generators = Generators(processes=1, resources=PodShape(cpu=1, memory=256 * 2**20))
    generator = manifests.generator_pod(RUN, 0, generators, images.generator)
    secret = manifests.control_token_secret(RUN, "image-test-token")
    secrets = {secret["metadata"]["name"]: secret}
    headers = {CONTROL_TOKEN_HEADER: "image-test-token"}
    with (
        pod_container(mock, images.mock, network, 10, CONFIG_MAPS) as mock_address,
        pod_container(generator, images.generator, network, 11, secrets) as generator_address,
    ):
        mock_url = f"http://{mock_address}:{UPSTREAM.port}"
        control = f"http://{generator_address}:{GENERATOR_PORT}"
        wait_healthy(f"{mock_url}/healthz")
        wait_healthy(f"{control}/healthz")
        trial = {
            "level": 50,
            "duration": 3,
            "targetUrl": mock_url,
            "workload": {"mix": [{"name": "hello", "path": "/hello"}], "arrival": "uniform"},
        }
        refused = httpx.post(f"{control}/trials", json=trial, timeout=10)
        assert refused.status_code == 401, refused.text  # the token is required in the image too
        answer = httpx.post(f"{control}/trials", json=trial, timeout=10, headers=headers)
        assert answer.status_code == 202, answer.text
        url = f"{control}/trials/{answer.json()['id']}"
        result = _wait_for_result(url, deadline_s=30, headers=headers)
        assert result.state is TrialState.DONE, logs(generator, network)
        outcomes = result.operations["hello"].outcomes
        # 50/s for 3 s, paced uniformly: every call answered, none failed.
        assert 140 <= outcomes.ok <= 160, outcomes
        assert outcomes.total == outcomes.ok


def _wait_for_result(url: str, deadline_s: float, headers: dict[str, str]) -> TrialResult:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        result = TrialResult.model_validate(httpx.get(url, timeout=5, headers=headers).json())
        if result.state is not TrialState.RUNNING:
            return result
        time.sleep(0.25)
    raise AssertionError(f"the trial at {url} did not end in {deadline_s} s")


def test_the_operator_image_prints_its_version(images: Images) -> None:
    done = _in_operator_image(images, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"plimsoll {version(DISTRIBUTION)}\n"


def test_the_operator_image_prints_the_checked_in_crd(images: Images) -> None:
    done = _in_operator_image(images, "crd")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "crds" / "capacitytest.yaml").read_text()


def test_the_operator_image_imports_everything_a_pod_runs(images: Images) -> None:
    """Every module but the chart modules (`plimsoll.report.charts` and each
    `plimsoll.report.*_chart`: a workstation's report, matplotlib or plotly; imported
    only when drawing): nothing missing from the image's smaller extra, `operator-image`,
    and kopf without the kubernetes client."""
    script = (
        "import importlib, pkgutil, plimsoll; "
        "names = [m.name for m in pkgutil.walk_packages(plimsoll.__path__, 'plimsoll.') "
        "if not (m.name == 'plimsoll.report.charts' or m.name.startswith('plimsoll.report.') "
        "and m.name.endswith('_chart'))]; "
        "[importlib.import_module(n) for n in names]; print(len(names))"
    )
    done = _in_operator_image(images, "-c", script, entrypoint="python")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 50


def test_the_generator_image_runs_its_hot_path_compiled(images: Images) -> None:
    """The wheel the images install carries the Cython-compiled hot path (hatch_build.py)
    for the image's own Python, so the generator in a pod spends what the bench measured."""
    modules = ", ".join(repr(f"plimsoll_generator.{m}") for m in HOT_PATH)
    script = f"import importlib; print([importlib.import_module(m).__file__ for m in ({modules})])"
    done = _in_image(images.generator, "-c", script, entrypoint="python")
    assert done.returncode == 0, done.stderr
    files = ast.literal_eval(done.stdout)
    # The image's Python is the build host's Debian python3 (images/base.Dockerfile).
    assert [Path(file).name for file in files] == [compiled_name(m) for m in HOT_PATH]


def test_the_examples_image_runs_an_example_target_as_its_command_does_locally(
    images: Images,
) -> None:
    """The examples' `command` (python examples/targets/X.py) finds the target in the
    image's working directory, under the restricted pod's user and read-only root."""
    served = _in_image(
        images.examples,
        "-c",
        "import os, subprocess, sys, time, urllib.request\n"
        "env = dict(os.environ, PORT='8097', WORK_MS='1')\n"
        "target = subprocess.Popen([sys.executable, 'examples/targets/cpu_bound.py'], env=env)\n"
        "for _ in range(100):\n"
        "    try:\n"
        "        print(urllib.request.urlopen('http://127.0.0.1:8097/work').status); break\n"
        "    except OSError:\n"
        "        time.sleep(0.1)\n"
        "target.terminate()\n"
        "print(os.getuid(), os.getcwd())\n",
        entrypoint="python",
    )
    assert served.returncode == 0, served.stderr
    assert served.stdout.split() == ["200", "65532", "/app"], served.stdout


def test_each_image_is_under_the_size_goal(images: Images) -> None:
    sizes = image_sizes()
    assert set(sizes) == {images.operator, images.generator, images.mock, images.examples}
    assert all(size < SIZE_GOAL for size in sizes.values()), json.dumps(sizes)


def test_the_images_carry_the_debian_versions_of_the_lock(images: Images) -> None:
    """The root's package versions travel in the labels, and match images/debian-base.lock."""
    labels = json.loads(podman("image", "inspect", images.mock))[0]["Labels"]
    in_labels = dict(item.split("=", 1) for item in labels["dev.plimsoll.debian.packages"].split())
    lock = (ROOT / "images" / "debian-base.lock").read_text().splitlines()
    in_lock = dict(line.split() for line in lock if line and not line.startswith("#"))
    assert in_labels == in_lock
    assert {"python3", "python3.11-minimal", "ca-certificates"} <= in_labels.keys()
    assert "apt" not in in_labels  # the images never install packages at run time
    assert len(labels["dev.plimsoll.debian.root-sha256"]) == 64
