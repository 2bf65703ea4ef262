"""The three images, built and saved once per test session: `scripts/build-images --save`.

Three places need them: the image tests run containers from podman's store
(tests/images/conftest.py), the archive tests import the saved archives into a
containerd of their own (tests/images/test_save.py), and the real node imports them
into its containerd (tests/realnode/images.py). Each used to run the script itself,
three builds and three saves of ~130-255 MB archives a session. The first to ask
now builds, holding the host alone (a build takes both cores) and a file lock the
other xdist worker waits on; the rest find the archives in the session's shared
folder. The script itself caches the Debian root and podman its layers, keyed on
their inputs, so a session after the first rebuilds only what changed.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hostshare import alone_on_host, ledger_folder
from tests.localrun import ROOT

BUILD_TIMEOUT_S = 1800
_DONE = "built"


def saved_images(factory: pytest.TempPathFactory) -> Path:
    """The folder holding plimsoll-{operator,generator,mock,examples}-<version>.tar, built and saved
    by the first caller of this session; podman's store holds the images too."""
    folder = ledger_folder(factory) / "images"
    folder.mkdir(exist_ok=True)
    # The host first, then the build's lock, never the other way round: a test that
    # overlaps (tests/images) gives its shared hold up to take the host alone, and had it
    # taken the build's lock first, a test running alone that waits on that lock would
    # hold the host it waits for. Holding the host alone, nobody else can ask for the
    # lock; it stays for a session without xdist's lock (`make truth`, by hand).
    with alone_on_host(factory), open(folder.parent / "images.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / _DONE).exists():
            return folder
        started = time.monotonic()
        done = subprocess.run(
            [str(ROOT / "scripts" / "build-images"), "--save", str(folder)],
            cwd=ROOT,
            env={**os.environ, "DOCKER": "podman", "PYTHON": sys.executable},
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(
                f"scripts/build-images --save failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
            )
        (folder / _DONE).write_text(f"{time.monotonic() - started:.1f}\n")
    return folder


def build_seconds(folder: Path) -> float:
    """How long this session's build and save took (the first caller's wait)."""
    return float((folder / _DONE).read_text())
