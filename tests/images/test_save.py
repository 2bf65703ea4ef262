"""scripts/build-images --save DIR: OCI archives for `kind load image-archive` and k3d.

kind and k3d hand the archive to containerd's importer (`ctr -n k8s.io images
import --all-platforms --digests`, in every node). The real importer runs here: a
containerd of the test's own (Debian's package, on a private socket) imports each
archive as kind does, and must list the image under the full reference a pod's
bare `plimsoll-mock:<v>` resolves to. The layout is checked too (oci-layout,
index.json, every blob under its own digest), and podman loads an archive back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest

from plimsoll.kube.names import DEFAULT_GENERATOR_IMAGE, DEFAULT_MOCK_IMAGE
from tests.built_images import saved_images
from tests.images.conftest import Images
from tests.images.engine import podman

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def saved(images: Images, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_images(tmp_path_factory)  # the session's one build, saved once


@pytest.fixture(scope="module")
def containerd() -> Iterator[list[str]]:
    """A containerd of our own (no CRI, a short socket path); yields the ctr command."""
    if shutil.which("containerd") is None or shutil.which("ctr") is None:
        reason = "no containerd on this machine (make debian installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI the archives must be imported")
        pytest.skip(reason)
    home = Path(tempfile.mkdtemp(prefix="plimsoll-ctrd-"))
    socket = home / "sock"
    config = home / "config.toml"
    config.write_text(
        f'version = 2\nroot = "{home}/root"\nstate = "{home}/state"\n'
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
        f'[grpc]\n  address = "{socket}"\n'
    )
    log = (home / "log").open("w")
    daemon = subprocess.Popen(["containerd", "--config", str(config)], stdout=log, stderr=log)
    ctr = ["ctr", "--address", str(socket), "--namespace", "k8s.io"]
    try:
        for _ in range(100):
            if subprocess.run([*ctr, "version"], capture_output=True, check=False).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"containerd did not answer: {(home / 'log').read_text()[-2000:]}")
        yield ctr
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        log.close()
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("name", ["operator", "generator", "mock"])
def test_containerd_imports_each_archive_as_kind_does(
    saved: Path, containerd: list[str], name: str
) -> None:
    full_name = f"docker.io/library/plimsoll-{name}:{version('plimsoll')}"
    archive = saved / f"plimsoll-{name}-{version('plimsoll')}.tar"
    done = subprocess.run(
        [*containerd, "images", "import", "--all-platforms", "--digests", str(archive)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [*containerd, "images", "ls", "--quiet"], capture_output=True, text=True, check=True
    )
    assert full_name in listed.stdout.split()


def _blobs(archive: tarfile.TarFile) -> dict[str, bytes]:
    found = {}
    for member in archive:
        if member.isfile() and member.name.startswith("blobs/sha256/"):
            data = archive.extractfile(member)
            assert data is not None
            found[member.name.removeprefix("blobs/sha256/")] = data.read()
    return found


@pytest.mark.parametrize("name", ["operator", "generator", "mock"])
def test_each_archive_is_a_named_whole_oci_layout(saved: Path, name: str) -> None:
    full_name = f"docker.io/library/plimsoll-{name}:{version('plimsoll')}"
    path = saved / f"plimsoll-{name}-{version('plimsoll')}.tar"
    with tarfile.open(path) as archive:
        layout = json.load(archive.extractfile("oci-layout"))  # type: ignore[arg-type]
        index = json.load(archive.extractfile("index.json"))  # type: ignore[arg-type]
        blobs = _blobs(archive)
    assert layout == {"imageLayoutVersion": "1.0.0"}
    (entry,) = index["manifests"]
    assert entry["annotations"]["io.containerd.image.name"] == full_name
    assert entry["annotations"]["org.opencontainers.image.ref.name"] == full_name
    for digest, data in blobs.items():
        assert hashlib.sha256(data).hexdigest() == digest
    manifest = json.loads(blobs[entry["digest"].removeprefix("sha256:")])
    for descriptor in [manifest["config"], *manifest["layers"]]:
        assert descriptor["digest"].removeprefix("sha256:") in blobs


def test_the_archives_hold_the_images_the_operator_deploys_by_default() -> None:
    # A pod's bare image reference resolves under docker.io/library/ in containerd.
    for default in (DEFAULT_GENERATOR_IMAGE, DEFAULT_MOCK_IMAGE):
        name, tag = default.split(":")
        assert tag == version("plimsoll")
        assert name in {"plimsoll-generator", "plimsoll-mock"}


def test_an_archive_loads_back_under_its_name(saved: Path) -> None:
    full_name = f"docker.io/library/plimsoll-mock:{version('plimsoll')}"
    # Only this name goes: the image stays under its localhost/ name (and its layers cached).
    podman("untag", full_name, full_name)
    assert full_name not in podman("images", "--format", "{{.Repository}}:{{.Tag}}")
    podman("load", "--input", str(saved / f"plimsoll-mock-{version('plimsoll')}.tar"))
    loaded = json.loads(podman("image", "inspect", full_name))[0]
    assert loaded["Config"]["User"] == "65532:65532"
    assert loaded["Config"]["Entrypoint"][:3] == ["python", "-m", "plimsoll_mock"]
