"""The images a real node runs, as archives for `ctr images import`.

`scripts/build-images --save` builds the operator, generator, mock and examples images
once a session (tests/built_images.py) and writes their OCI archives. Archive names are
those a pod spec uses: `plimsoll-examples:0.1.0` means
`docker.io/library/plimsoll-examples:0.1.0`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.built_images import saved_images

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def build_all(factory: pytest.TempPathFactory) -> list[Path]:
    """The session's images (built once, tests/built_images.py): every archive to import."""
    folder = saved_images(factory)
    return [
        folder / f"plimsoll-{image}-{VERSION}.tar"
        for image in ("operator", "generator", "mock", "examples")
    ]
