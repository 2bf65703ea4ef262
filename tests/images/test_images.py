"""The three images' Dockerfiles and scripts/build-images, checked without building.

These tests read the Dockerfiles and run the script's dry run, so they hold on
any machine: the Dockerfiles share one base pinned by a required argument,
install only from the project's wheel without a pip cache, and end as a
non-root user with the right entrypoint; the build script builds that wheel
(with all three packages and the generator's compiled hot path), plans the four
builds for Docker and for podman, and says clearly when it cannot build.
test_containers.py builds and runs them.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from hatch_build import HOT_PATH, compiled_name

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "images" / "base.Dockerfile"
COMPONENTS = {
    "operator": (ROOT / "operator" / "Dockerfile", '["plimsoll"]'),
    "generator": (
        ROOT / "generator-image" / "Dockerfile",
        '["python", "-m", "plimsoll_generator"]',
    ),
    "mock": (
        ROOT / "mock-upstream-image" / "Dockerfile",
        '["python", "-m", "plimsoll_mock", "--host", "0.0.0.0"]',
    ),
}
SCRIPT = ROOT / "scripts" / "build-images"


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def _last(instructions: list[tuple[str, str]], word: str) -> str:
    return [rest for w, rest in instructions if w == word][-1]


def test_base_is_pinned_by_a_required_digest_argument() -> None:
    steps = _instructions(BASE)
    assert steps[0] == ("ARG", "PYTHON_IMAGE")  # no default: an unpinned build fails
    assert steps[1] == ("FROM", "${PYTHON_IMAGE}")
    installs = [rest for w, rest in steps if w == "RUN" and "pip install" in rest]
    assert len(installs) == 1
    assert "--no-cache-dir" in installs[0]
    assert "--constraint /dist/constraints.txt" in installs[0]
    assert "source=dist/images" in installs[0]  # the wheel, bind-mounted, not copied
    assert _last(steps, "USER") == "65532:65532"
    assert not [w for w, _ in steps if w in {"COPY", "ADD"}]


@pytest.mark.parametrize("name", COMPONENTS)
def test_component_images_share_the_base(name: str) -> None:
    path, entrypoint = COMPONENTS[name]
    steps = _instructions(path)
    assert steps[0] == ("ARG", "BASE_IMAGE=plimsoll-base:latest")
    assert steps[1] == ("FROM", "${BASE_IMAGE}")
    assert [w for w, _ in steps].count("FROM") == 1
    assert _last(steps, "ENTRYPOINT") == entrypoint
    users = [rest for w, rest in steps if w == "USER"]
    assert not users or users[-1] == "65532:65532"  # the base's non-root user stays
    for word, rest in steps:
        if word == "RUN" and "pip install" in rest:
            assert "--no-cache-dir" in rest
            assert "source=dist/images" in rest


def test_context_is_only_the_wheel() -> None:
    lines = (ROOT / ".dockerignore").read_text().split()
    assert [line for line in lines if not line.startswith("#")][-2:] == ["*", "!dist/images/"]


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHON": sys.executable, **env},
    )


def test_dry_run_builds_the_wheel_and_plans_the_base_and_four_images() -> None:
    result = _run("--dry-run", REGISTRY="registry.example.com/perf/", DOCKER="docker")
    assert result.returncode == 0, result.stderr
    wheels = list((ROOT / "dist" / "images").glob("plimsoll_capacity-*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    for module in (
        "plimsoll/cli/app.py",
        "plimsoll_generator/__main__.py",
        "plimsoll_mock/__main__.py",
    ):
        assert module in names
    # The generator's hot path compiled for this platform beside its sources (hatch_build.py).
    for module in HOT_PATH:
        assert f"plimsoll_generator/{compiled_name(module)}" in names
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheels[0].name.endswith(f"-{python}-{python}-{platform}.whl"), wheels[0].name
    constraints = (ROOT / "dist" / "images" / "constraints.txt").read_text()
    assert re.search(r"^pydantic==", constraints, re.MULTILINE)
    builds = [line for line in result.stdout.splitlines() if " buildx build " in line]
    assert len(builds) == 5  # the base, then the operator, generator, mock and examples
    for line in builds:
        dockerfile = line.split(" -f ")[1].split()[0]
        assert (ROOT / dockerfile).is_file()
    assert "-t registry.example.com/perf/plimsoll-operator:" in builds[1]
    assert "BASE_IMAGE=registry.example.com/perf/plimsoll-base:" in builds[3]
    # The example targets' image, from the targets copied into the only build context.
    assert (
        "-f images/examples.Dockerfile -t registry.example.com/perf/plimsoll-examples:"
        in (builds[4])
    )
    context = ROOT / "dist" / "images" / "examples" / "targets"
    assert {p.name for p in context.glob("*.py")} == {
        p.name for p in (ROOT / "examples" / "targets").glob("*.py")
    }
    assert "(dry run: no image built)" in result.stdout


def test_dry_run_with_podman_plans_the_debian_root_and_this_hosts_flags() -> None:
    result = _run("--dry-run", DOCKER="podman")
    assert result.returncode == 0, result.stderr
    builds = [
        line for line in result.stdout.splitlines() if line.startswith("== ") and " build " in line
    ]
    assert len(builds) == 5
    root_hash = hashlib.sha256((ROOT / "scripts" / "build-debian-root").read_bytes()).hexdigest()
    assert f"PYTHON_IMAGE=localhost/plimsoll-debian-root:{root_hash[:12]} " in builds[0]
    for line in builds:
        assert line.startswith("== podman --cgroup-manager=cgroupfs ")
        assert " --timestamp " in line  # SOURCE_DATE_EPOCH, podman's way
        assert re.search(r" --ulimit nofile=\d+:\d+ --ulimit nproc=\d+:\d+ ", line)
    for line in builds[:2]:  # the two steps that install the wheel
        assert " --build-arg PLIMSOLL_WHEEL_DIGEST=" in line


def test_says_clearly_without_a_docker_command() -> None:
    result = _run(DOCKER="/nonexistent/docker")
    assert result.returncode == 1
    assert "no /nonexistent/docker command on this machine; cannot build images" in result.stderr


def test_says_clearly_without_an_engine() -> None:
    result = _run(DOCKER="false")  # a client whose `info` fails, as with no daemon
    assert result.returncode == 1
    assert "no container engine answers; cannot build images" in result.stderr
