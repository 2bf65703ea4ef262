"""The images a real node runs, as archives for `ctr images import`.

`scripts/build-images --save` builds the operator, generator and mock images once a
session (tests/built_images.py) and writes their OCI archives; the example targets
(`examples/targets/*.py`, standard library only) go into one more image on the same
base, since the examples' own Containerfile starts from a registry's Python image
and there is no registry here. Archive names are those a pod spec uses:
`plimsoll-examples:0.1.0` means `docker.io/library/plimsoll-examples:0.1.0`.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.built_images import saved_images

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
TARGETS_IMAGE = f"plimsoll-examples:{VERSION}"
PODMAN = ["podman", "--cgroup-manager=cgroupfs", "--runtime", "runc"]

TARGETS_CONTAINERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
COPY examples/targets/ /app/examples/targets/
WORKDIR /app
USER 65532:65532
"""


def build_all(factory: pytest.TempPathFactory, home: Path) -> list[Path]:
    """The session's images (built once, tests/built_images.py) and the example targets'
    image, saved in `home`: every archive to import."""
    folder = saved_images(factory)
    python = ROOT / ".venv" / "bin" / "python"
    archives = [
        folder / f"plimsoll-{image}-{VERSION}.tar" for image in ("operator", "generator", "mock")
    ]
    home.mkdir(parents=True, exist_ok=True)
    archives.append(_targets(home, python))
    return archives


def _targets(folder: Path, python: Path) -> Path:
    context = folder / "targets-context"
    shutil.rmtree(context, ignore_errors=True)
    shutil.copytree(ROOT / "examples" / "targets", context / "examples" / "targets")
    (context / "Containerfile").write_text(TARGETS_CONTAINERFILE)
    full_name = f"docker.io/library/{TARGETS_IMAGE}"
    subprocess.run(
        [*PODMAN, "build", "--build-arg", f"BASE_IMAGE=plimsoll-base:{VERSION}", "-t", full_name,
         "-f", str(context / "Containerfile"), str(context)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    archive = folder / f"plimsoll-examples-{VERSION}.tar"
    archive.unlink(missing_ok=True)
    subprocess.run(
        [*PODMAN, "save", "--format", "oci-archive", "--uncompressed", "-o", str(archive),
         full_name],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    subprocess.run(
        [str(python), str(ROOT / "scripts" / "oci-archive-names.py"), str(archive), full_name],
        check=True, timeout=120,
    )  # fmt: skip
    return archive
