"""A run's objects in the cluster: applied or adopted, replaced, waited out, deleted.

Called by the Kubernetes platform for every child of a run, and usable by anything
that owns objects under a `RunIdentity`'s labels. Every write is a server-side apply
as field manager `plimsoll`, so it is idempotent: an object that already exists and
carries this run's labels (and, inside the run's namespace, this variant's) is
adopted, so an operator restarted mid-run picks its objects up again, and the same
state applied again writes nothing; one that belongs to someone else is refused,
never overwritten.
An object still being deleted (a real kubelet confirms a pod's end first) is waited
for before it is created anew.

Failures are `OwnershipError` with the message the user sees; the platform turns
them into its own `PlatformError`, so this module stays below the platforms.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from plimsoll.kube import names
from plimsoll.kube.client import (
    CONFIG_MAPS,
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    JOBS,
    NETWORK_POLICIES,
    PODS,
    SECRETS,
    SERVICES,
    KubeClient,
    KubeError,
    kind_of,
)
from plimsoll.kube.names import RunIdentity

# Every variant of a run lives in the namespace, under its quota and defaults.
SHARED_BY_VARIANTS = ("Namespace", "ResourceQuota", "LimitRange")


class OwnershipError(RuntimeError):
    """An object could not be created, adopted, replaced or deleted; the message says why."""


# Kinds whose spec cannot change in place: adopted as they are, never applied again. An
# apply could change nothing that matters on them and would fail on an immutable field
# (a mock's image after an operator upgrade, say) that adoption keeps running.
ADOPTED_AS_THEY_ARE = ("Pod", "Job")


async def apply_owned(
    client: KubeClient, run: RunIdentity, body: dict[str, Any], *, limit: float, poll: float
) -> dict[str, Any]:
    """Write `body` with server-side apply, creating it, or adopting it if this run (and,
    inside the run's namespace, this variant) made it. The same state applied again writes
    nothing, and a user's own fields on an adopted object survive; a field of ours that
    someone changed (a relaxed Pod Security label, a widened NetworkPolicy) is put back.
    An object still being deleted, such as this variant's own target from an interrupted
    earlier attempt, is waited for (`limit` seconds), then created anew."""
    meta = body["metadata"]
    try:
        existing = await client.get(kind_of(body), meta.get("namespace"), meta["name"])
        if existing is not None and existing.get("metadata", {}).get("deletionTimestamp"):
            await wait_gone(client, body, limit, poll)
            existing = None
        if existing is None:
            # Not forced: an object someone made since the GET, with other values in our
            # fields, is a conflict, never taken over.
            return await client.apply(body, force=False)
        _refuse_unless_owned(run, body, existing.get("metadata", {}).get("labels"))
        if body["kind"] in ADOPTED_AS_THEY_ARE:
            return existing
        # The uid pins the write to the object whose labels were checked: one deleted and
        # made again by someone else in between is refused by the API server.
        pinned = {**body, "metadata": {**meta, "uid": existing["metadata"]["uid"]}}
        return await client.apply(pinned)
    except KubeError as exc:
        raise OwnershipError(
            f"cannot apply {body['kind']} {body['metadata']['name']}: {exc.message}"
        ) from exc


def _refuse_unless_owned(
    run: RunIdentity, body: dict[str, Any], labels: dict[str, str] | None
) -> None:
    """An OwnershipError unless the object with these labels is this run's (for what the
    variants share) or this variant's (for the rest)."""
    shared = body["kind"] in SHARED_BY_VARIANTS
    if run.owns_run(labels) if shared else run.owns(labels):
        return
    name = body["metadata"]["name"]
    if run.owns_run(labels):
        other = (labels or {}).get(names.LABEL_VARIANT, "?")
        raise OwnershipError(
            f"{body['kind']} {name} was made for variant {other!r} of this run, "
            f"not {run.variant!r}: a variant never adopts another's objects"
        )
    raise OwnershipError(f"{body['kind']} {name} already exists and belongs to another run")


async def recreate(
    client: KubeClient,
    run: RunIdentity,
    body: dict[str, Any],
    *,
    limit: float,
    adopt_limit: float,
    poll: float,
) -> dict[str, Any]:
    """Create `body` anew, replacing one this run (this variant) left behind, waited out
    for `limit` seconds: a generator left by an operator that was killed mid-trial may
    still be loading the target. Then as `apply_owned` (`adopt_limit`)."""
    meta = body["metadata"]
    existing = await client.get(kind_of(body), meta["namespace"], meta["name"])
    labels = existing.get("metadata", {}).get("labels") if existing is not None else None
    if existing is not None and run.owns(labels):
        await client.delete(kind_of(body), meta["namespace"], meta["name"])
        await wait_gone(client, body, limit, poll)
    return await apply_owned(client, run, body, limit=adopt_limit, poll=poll)


async def wait_gone(client: KubeClient, body: dict[str, Any], limit: float, poll: float) -> None:
    """Wait until `body`'s namesake, being deleted, is gone (a real kubelet confirms a
    pod's end first); an OwnershipError naming it after `limit` seconds."""
    meta = body["metadata"]
    deadline = time.monotonic() + limit
    while await client.get(kind_of(body), meta.get("namespace"), meta["name"]):
        if time.monotonic() > deadline:
            raise OwnershipError(
                f"{body['kind']} {meta['name']} is still being deleted after {limit:g} s"
            )
        await asyncio.sleep(poll)


async def wait_other_variants_gone(
    client: KubeClient, run: RunIdentity, limit: float, poll: float
) -> None:
    """Wait until the pods of this run's other variants that are being deleted are gone
    (`cleanup: Always`: the previous variant's, confirmed by the kubelet), so a variant
    never shares the nodes with its predecessor's processes; pods kept on purpose
    (`cleanup: Never`) are not being deleted and are not waited for. An OwnershipError
    naming them after `limit` seconds."""
    deadline = time.monotonic() + limit
    while True:
        try:
            pods = await client.list(PODS, run.namespace, run.run_selector())
        except KubeError as exc:
            raise OwnershipError(f"cannot list the run's pods: {exc.message}") from exc
        leaving = sorted(
            pod["metadata"]["name"]
            for pod in pods
            if pod["metadata"].get("deletionTimestamp")
            and not run.owns(pod["metadata"].get("labels"))
        )
        if not leaving:
            return
        if time.monotonic() > deadline:
            raise OwnershipError(
                f"the previous variant's pods {', '.join(leaving)} are still being "
                f"deleted after {limit:g} s"
            )
        await asyncio.sleep(poll)


async def delete_children(client: KubeClient, namespace: str, labels: dict[str, str]) -> None:
    """Delete what a run (or one variant of it) created inside its namespace."""
    # A flight's HPA and Deployment before the pods, or its ReplicaSet would make them
    # again; the ReplicaSet goes with its Deployment (the garbage collector's part).
    first = (HORIZONTAL_POD_AUTOSCALERS, DEPLOYMENTS)
    for kind in (*first, NETWORK_POLICIES, JOBS, PODS, SERVICES, CONFIG_MAPS, SECRETS):  # no quotas
        try:
            for item in await client.list(kind, namespace, labels):
                await client.delete(kind, namespace, item["metadata"]["name"])
        except KubeError as exc:
            raise OwnershipError(
                f"cannot clean up {kind.plural} in {namespace}: {exc.message}"
            ) from exc
