"""Before joining kopf's peering: the peering object must be there.

With a named peering kopf starts paused and stays paused until the peering
object says no senior replica is alive; if the object (or its CRD) is missing it
never says anything, and the operator would idle forever without a word. So
`plimsoll operator --peering NAME` looks for it first and stops with what to
install instead.
"""

from __future__ import annotations

import asyncio

import kopf

from plimsoll.kube.client import KubeClient, KubeError
from plimsoll.kube.kinds import Kind

CLUSTER_PEERINGS = Kind(
    "kopf.dev/v1", "ClusterKopfPeering", "clusterkopfpeerings", namespaced=False
)
NAMESPACED_PEERINGS = Kind("kopf.dev/v1", "KopfPeering", "kopfpeerings")


class PeeringMissingError(RuntimeError):
    """The peering object to join is not in the cluster; the message says what to do."""


def _login(settings: kopf.OperatorSettings) -> kopf.ConnectionInfo | None:
    """The credentials kopf's own login will use (ServiceAccount, else kubeconfig)."""
    return kopf.login_with_service_account(settings=settings) or kopf.login_with_kubeconfig(
        settings=settings
    )


async def require_peering_objects(
    name: str, namespaces: list[str], settings: kopf.OperatorSettings
) -> None:
    """Raise `PeeringMissingError` unless every peering object `name` this operator joins
    exists: the ClusterKopfPeering when watching every namespace, else a KopfPeering in
    each watched namespace."""
    info = await asyncio.to_thread(_login, settings)
    if info is None:
        raise PeeringMissingError("--peering: no credentials (no kubeconfig, no ServiceAccount)")
    client = KubeClient.from_connection(info)
    where: list[str | None] = list(namespaces) or [None]
    missing = []
    try:
        for namespace in where:
            kind = NAMESPACED_PEERINGS if namespace else CLUSTER_PEERINGS
            if await client.get(kind, namespace, name) is None:
                missing.append(
                    f"KopfPeering {namespace}/{name}" if namespace else f"ClusterKopfPeering {name}"
                )
    except KubeError as exc:
        raise PeeringMissingError(
            f"--peering {name}: cannot read the peering object: {exc.message} (the operator's "
            "role needs get/list/watch/patch on kopf.dev clusterkopfpeerings or kopfpeerings)"
        ) from exc
    finally:
        await client.aclose()
    if missing:
        raise PeeringMissingError(
            f"--peering {name}: {', '.join(missing)} not found: install kopf's peering CRDs "
            "and the object (the Helm chart does both with peering.enabled=true: "
            "crds/kopf-peering.yaml and templates/peering.yaml), or run one replica without "
            "--peering / PLIMSOLL_PEERING"
        )
