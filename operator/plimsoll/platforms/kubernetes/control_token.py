"""The run's control-API token: made once and kept in a Secret the generators read, so
an operator that resumes the run (or adopts its pods) uses the same one."""

from __future__ import annotations

import base64

from plimsoll.kube import manifests, names
from plimsoll.kube.client import SECRETS, KubeClient, KubeError
from plimsoll.kube.names import RunIdentity
from plimsoll.platforms.base import PlatformError


async def kept_token(client: KubeClient, run: RunIdentity) -> str | None:
    """The token in this run's Secret, if an earlier operator made it."""
    try:
        secret = await client.get(SECRETS, run.namespace, run.child(names.CONTROL_TOKEN_SECRET))
    except KubeError as exc:
        raise PlatformError(f"cannot read the run's control token: {exc.message}") from exc
    if secret is None or not run.owns(secret["metadata"].get("labels")):
        return None  # none yet, or not ours: the apply says whose it is
    encoded = (secret.get("data") or {}).get(manifests.CONTROL_TOKEN_KEY)
    if encoded:
        return base64.b64decode(encoded).decode()
    # An API server answers with `data`; one that echoes the request keeps `stringData`.
    kept = (secret.get("stringData") or {}).get(manifests.CONTROL_TOKEN_KEY)
    return str(kept) if kept else None
