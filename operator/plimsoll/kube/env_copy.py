"""Copying `valueFrom` references into the run namespace, without ever seeing a value.

The run's pods live in the run namespace, and a pod can only read a Secret of its own
namespace, so the operator copies each referenced key from the CapacityTest's
namespace into the run's Secret `run-env` (`manifests.run_env_secret`), which the pods
read by `secretKeyRef`. A Secret's value is copied as the base64 the API server gave,
never decoded; a ConfigMap's is encoded. No value reaches a log, the status, an Event
or the report: errors name the field, the object and the key only.

Only objects labelled `plimsoll.dev/runs-may-read: "true"` are copied (see
`plimsoll.api.env_source`). Cluster-wide, the operator reads them through its
references ClusterRole, which it binds in the CapacityTest's namespace only when the
spec has a `valueFrom` (`plimsoll.kube.grants`); namespaced, the watched namespaces'
Role grants it.
"""

from __future__ import annotations

import base64

from plimsoll.api.env_source import EnvSource
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube import manifests
from plimsoll.kube.client import CONFIG_MAPS, SECRETS, KubeClient
from plimsoll.kube.consented import UnreadableSourceError, read_consented
from plimsoll.kube.grants import OperatorIdentity, bind_references_role
from plimsoll.kube.names import RunIdentity


class ValueSourceError(Exception):
    """A `valueFrom` reference that cannot be copied; the message names the field."""


async def copy_references(
    client: KubeClient,
    run: RunIdentity,
    spec: CapacityTestSpec,
    identity: OperatorIdentity | None,
) -> dict[str, str]:
    """`run-env`'s data (base64 values by key); empty when the spec references nothing."""
    owners = manifests.value_from_owners(spec)
    if not owners:
        return {}
    namespace = run.owner_namespace
    await bind_references_role(client, identity, namespace)
    data: dict[str, str] = {}
    for owner, refs in owners.items():
        where = (
            "spec.target"
            if owner == manifests.TARGET_ENV_OWNER
            else f"spec.services[{owner.removeprefix('service-')}]"
        )
        for variable, source in refs.items():
            field = f"{where}.valueFrom.{variable}"
            data[manifests.run_env_key(owner, variable)] = await _read(
                client, namespace, source, field
            )
    return data


async def _read(client: KubeClient, namespace: str, source: EnvSource, field: str) -> str:
    ref, kind = source.ref(), source.kind()
    what = f"{field}: {kind} {namespace}/{ref.name}"
    try:
        found = await read_consented(
            client, SECRETS if kind == "Secret" else CONFIG_MAPS, namespace, ref.name, what
        )
    except UnreadableSourceError as exc:
        raise ValueSourceError(str(exc)) from exc
    if ref.key in (found.get("data") or {}):
        value = found["data"][ref.key]
        return str(value) if kind == "Secret" else base64.b64encode(str(value).encode()).decode()
    if ref.key in (found.get("binaryData") or {}):
        return str(found["binaryData"][ref.key])
    raise ValueSourceError(f"{what} has no key {ref.key!r}")
