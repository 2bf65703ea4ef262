"""The run's control-API token: made once and kept in a Secret the generators read, so
an operator that resumes the run (or adopts its pods) uses the same one."""

from __future__ import annotations

import base64

from plimsoll.kube import manifests, names
from plimsoll.kube.client import SECRETS, KubeClient
from plimsoll.kube.names import RunIdentity
from plimsoll.platforms.kubernetes.errors import platform_errors


async def kept_token(client: KubeClient, run: RunIdentity) -> str | None:
    """The token in this run's Secret, if an earlier operator made it."""
    with platform_errors("cannot read the run's control token"):
        secret = await client.get(SECRETS, run.namespace, run.child(names.CONTROL_TOKEN_SECRET))
    if secret is None or not run.owns(secret["metadata"].get("labels")):
        return None  # none yet, or not ours: the apply says whose it is
    encoded = (secret.get("data") or {}).get(manifests.CONTROL_TOKEN_KEY)
    if encoded:
        return base64.b64decode(encoded).decode()
    # An API server answers with `data`; one that echoes the request keeps `stringData`.
    kept = (secret.get("stringData") or {}).get(manifests.CONTROL_TOKEN_KEY)
    return str(kept) if kept else None
