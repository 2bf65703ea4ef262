"""Reading an object a CapacityTest names in its own namespace, only where it may.

A spec can name a Secret or ConfigMap of its namespace (`valueFrom` for the pods'
environment, `notify[].urlFrom` for a webhook's URL). The operator can read more than
the people who write CapacityTests may, so it reads only objects labelled
`plimsoll.dev/runs-may-read: "true"`: the label is the owner's consent. Every refusal
names the field and the object, and how to fix it, never a value.
"""

from __future__ import annotations

from typing import Any

from plimsoll.api.env_source import CONSENT_LABEL
from plimsoll.kube.client import KubeClient, KubeError
from plimsoll.kube.kinds import Kind


class UnreadableSourceError(Exception):
    """The object a field names cannot be read for a run; the message says why."""


async def read_consented(
    client: KubeClient, resource: Kind, namespace: str, name: str, what: str
) -> dict[str, Any]:
    """The object, when it exists and carries the consent label. `what` starts each
    message: the field and the object, e.g. "spec.target.valueFrom.DB: Secret ns/db"."""
    try:
        found = await client.get(resource, namespace, name)
    except KubeError as exc:
        raise UnreadableSourceError(
            f"{what} cannot be read by the operator: {exc.message}"
        ) from exc
    if found is None:
        raise UnreadableSourceError(f"{what} does not exist: create it in {namespace}")
    labels = found.get("metadata", {}).get("labels") or {}
    if labels.get(CONSENT_LABEL) != "true":
        raise UnreadableSourceError(
            f"{what} is not labelled {CONSENT_LABEL}=true, so CapacityTests may not use it: "
            f"`kubectl label {resource.kind.lower()} {name} -n {namespace} {CONSENT_LABEL}=true` "
            "if whoever creates CapacityTests here may use it"
        )
    return found
