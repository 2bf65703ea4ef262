"""Names the image inside an OCI archive the way containerd's importer looks for it.

Called by scripts/build-images --save after `podman save --format oci-archive`.
podman writes the name only as `org.opencontainers.image.ref.name`; containerd
(which `kind load image-archive` and `k3d image import` feed the archive to)
reads `io.containerd.image.name` first, as its own `ctr export` and Docker's
`docker save` write it. So the archive gets both, with the full name a pod's
image reference resolves to (docker.io/library/plimsoll-mock:0.1.0).

    python scripts/oci-archive-names.py ARCHIVE FULL_NAME
"""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
from pathlib import Path

CONTAINERD_NAME = "io.containerd.image.name"
OCI_REF_NAME = "org.opencontainers.image.ref.name"


def named_index(index: dict[str, object], full_name: str) -> dict[str, object]:
    manifests = index["manifests"]
    if not isinstance(manifests, list) or len(manifests) != 1:
        raise SystemExit(f"expected one image in the archive's index.json, found {manifests!r}")
    annotations = manifests[0].setdefault("annotations", {})
    annotations[CONTAINERD_NAME] = full_name
    annotations[OCI_REF_NAME] = full_name
    return index


def rename(archive: Path, full_name: str) -> None:
    """Rewrites the archive with index.json annotated; every other member is copied as is."""
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(archive) as source, tarfile.open(partial, "w") as target:
        for member in source:
            data = source.extractfile(member) if member.isfile() else None
            if member.name == "index.json" and data is not None:
                index = named_index(json.load(data), full_name)
                content = json.dumps(index, separators=(",", ":")).encode()
                member.size = len(content)
                target.addfile(member, io.BytesIO(content))
            else:
                target.addfile(member, data)
    os.replace(partial, archive)


if __name__ == "__main__":
    rename(Path(sys.argv[1]), sys.argv[2])
