"""The pod sandbox ("pause") image, built here from ../shared/k8s/node/pause.c.

`node.py` calls `build` once per node folder and imports the archive into
containerd, whose `sandbox_image` names it: there is no registry to pull
registry.k8s.io/pause from. The OCI archive is written directly (one layer with one
static binary), so no image engine is needed for it.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path


def _blob(out: tarfile.TarFile, data: bytes) -> dict[str, object]:
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))
    return {"digest": f"sha256:{digest}", "size": len(data)}


def build(source: Path, work: Path, name: str) -> Path:
    """Compile `source` statically and write `work/pause.tar`, an OCI archive of `name`."""
    work.mkdir(parents=True, exist_ok=True)
    binary = work / "pause"
    subprocess.run(
        ["gcc", "-static", "-O2", "-o", str(binary), str(source)], check=True, capture_output=True
    )
    layer_buffer = io.BytesIO()
    with tarfile.open(fileobj=layer_buffer, mode="w") as layer:
        info = layer.gettarinfo(str(binary), arcname="pause")
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        with binary.open("rb") as handle:
            layer.addfile(info, handle)
    layer_bytes = layer_buffer.getvalue()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
        "rootfs": {
            "type": "layers",
            "diff_ids": [f"sha256:{hashlib.sha256(layer_bytes).hexdigest()}"],
        },
    }
    archive = work / "pause.tar"
    with tarfile.open(archive, "w") as out:
        config_ref = _blob(out, json.dumps(config).encode())
        layer_ref = _blob(out, layer_bytes)
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config_ref},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **layer_ref}],
        }
        manifest_ref = _blob(out, json.dumps(manifest).encode())
        index = {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    **manifest_ref,
                    "annotations": {
                        "io.containerd.image.name": name,
                        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1],
                    },
                }
            ],
        }
        for file_name, data in [
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps(index).encode()),
        ]:
            info = tarfile.TarInfo(file_name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    return archive
