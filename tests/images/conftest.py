"""Fixtures for the image tests: the images built once per session, a podman network.

`images` asks for the session's one build (tests/built_images.py: the same
`scripts/build-images` that `make images` runs, saving the archives too), so the
first session on a machine builds the Debian root (about a minute) and later
ones reuse it and podman's layer cache (seconds). On a machine without podman,
or not as root, the container tests are skipped with the reason said; under CI
(`CI=true`) that skip is a failure instead, because `make test` installs podman
there.

The images' sizes are printed at the end of the session, beside the tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version

import pytest

from plimsoll import DISTRIBUTION
from tests.built_images import build_seconds, saved_images
from tests.images.engine import Network, network_of, podman, podman_command

# Each image under 260 MB. The operator image holds the official kubernetes client since
# it makes every API call through it (57 MB installed, its asyncio twin removed): 253 MB
# measured on 2026-12-01, the Debian root 132 MB of it. The goal was 200 MB before that.
SIZE_GOAL = 260 * 10**6
_sizes: dict[str, int] = {}
_build_seconds: list[float] = []


@dataclass(frozen=True)
class Images:
    operator: str
    generator: str
    mock: str
    examples: str  # the example targets on the shared base (images/examples.Dockerfile)


@pytest.fixture(scope="session")
def images(tmp_path_factory: pytest.TempPathFactory) -> Images:
    reason = None
    if podman_command() is None:
        reason = (
            "no podman on this machine: the images cannot be built or run (make debian installs it)"
        )
    elif os.geteuid() != 0:
        # mmdebstrap --mode=root builds the root; rootless podman would need uidmap and
        # slirp4netns, which make debian does not install.
        reason = "the image tests run as root (mmdebstrap --mode=root, podman's CNI networks)"
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI the image tests must run")
        pytest.skip(reason)
    _build_seconds.append(build_seconds(saved_images(tmp_path_factory)))
    tag = version(DISTRIBUTION)
    built = Images(
        *(
            f"localhost/plimsoll-{name}:{tag}"
            for name in ("operator", "generator", "mock", "examples")
        )
    )
    for name in (built.operator, built.generator, built.mock, built.examples):
        _sizes[name] = int(podman("image", "inspect", "--format", "{{.Size}}", name))
    return built


@pytest.fixture
def network(images: Images) -> Iterator[Network]:
    """A podman network of this test's own; containers get fixed addresses on it."""
    name = f"plimsoll-test-{uuid.uuid4().hex[:8]}"
    podman("network", "create", name)
    try:
        yield network_of(name)
    finally:
        podman("network", "rm", "--force", name)


def image_sizes() -> dict[str, int]:
    return dict(_sizes)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _sizes:
        return
    terminalreporter.section("Plimsoll images")
    terminalreporter.write_line(f"built (or found cached) and saved in {_build_seconds[0]:.1f} s")
    for name, size in _sizes.items():
        verdict = "under" if size < SIZE_GOAL else "OVER"
        terminalreporter.write_line(
            f"{name}: {size / 1e6:.1f} MB ({verdict} the {SIZE_GOAL // 10**6} MB goal)"
        )
