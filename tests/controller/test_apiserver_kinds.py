"""plimsoll.kube.kinds against the real API server's discovery: every plural and scope.

The kind table states each kind's URL segment and scope instead of asking discovery
at run time (kinds.py says why); here the real API server's discovery, the source
kubectl maps kinds by, must agree with every entry, and with kopf's peering kinds
(plimsoll.controller.peering). Here rather than in tests/kube so it shares the
session's control plane, where the CapacityTest and peering CRDs are installed.
"""

from __future__ import annotations

import pytest

from plimsoll.controller.peering import CLUSTER_PEERINGS, NAMESPACED_PEERINGS
from plimsoll.kube.client import KubeClient
from plimsoll.kube.kinds import KINDS, Kind
from tests.controller.apiserver_fixtures import ApiServer

pytestmark = pytest.mark.slow


async def test_every_kind_is_served_with_its_plural_and_scope(apiserver: ApiServer) -> None:
    kinds: list[Kind] = [*KINDS, CLUSTER_PEERINGS, NAMESPACED_PEERINGS]
    served: dict[str, dict[str, tuple[str, bool]]] = {}  # group-version -> plural -> found
    for kind in kinds:
        if kind.api_version not in served:
            listing = await apiserver.api.call("GET", kind.base())
            served[kind.api_version] = {
                r["name"]: (r["kind"], bool(r["namespaced"]))
                for r in listing["resources"]
                if "/" not in r["name"]  # subresources (pods/log) are not kinds
            }
        assert served[kind.api_version].get(kind.plural) == (kind.kind, kind.namespaced), kind
        assert KubeClient.path(kind, "ns", "x").startswith(kind.base())
