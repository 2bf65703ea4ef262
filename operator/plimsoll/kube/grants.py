"""The operator's rights inside the namespaces it works in: RoleBindings it makes itself.

The chart does not give the operator cluster-wide rights on pods, configmaps or
secrets. It creates a ClusterRole holding the per-run rules (`<release>-run`) that is
bound nowhere, and lets the operator `bind` exactly that role. Before anything else in
a run namespace it creates, the operator binds that role there to its own
ServiceAccount (`ensure_bound`), so its pod and secret rights exist only in namespaces
it made. In cluster-wide mode the report's ConfigMap right works the same way
(`<release>-report`, bound in a CapacityTest's namespace just before its report is
written); in namespaced mode a Role in each watched namespace holds it instead.

Kubernetes' escalation prevention is why `bind` is needed: a RoleBinding to a role
may only be created by someone who holds every right of that role, or `bind` on it.

The chart passes who the operator is and which roles it binds through
PLIMSOLL_SERVICE_ACCOUNT, PLIMSOLL_SERVICE_ACCOUNT_NAMESPACE, PLIMSOLL_RUN_ROLE,
PLIMSOLL_REPORT_ROLE and PLIMSOLL_REFERENCES_ROLE (`OperatorIdentity.from_env`).
Without them (a developer's operator with an admin kubeconfig) no RoleBinding is made
and the operator relies on the rights it already has.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from plimsoll.kube.client import ROLE_BINDINGS, ConflictError, KubeClient, KubeError
from plimsoll.kube.names import LABEL_MANAGED_BY, MANAGER

RBAC_GROUP = "rbac.authorization.k8s.io"
# How long a new RoleBinding may take to reach the API server's authorizer (it follows
# RoleBindings through a watch, so usually milliseconds).
BINDING_SETTLE_SECONDS = 20.0


class GrantError(RuntimeError):
    """A RoleBinding the operator needs could not be made or is not in effect."""


@dataclass(frozen=True)
class OperatorIdentity:
    service_account: str
    namespace: str
    run_role: str  # ClusterRole bound in each run namespace
    report_role: str | None = None  # ClusterRole bound where a report is written
    # ClusterRole bound in a CapacityTest's namespace when its spec has `valueFrom`
    references_role: str | None = None
    # ClusterRole bound in a CapacityTest's namespace when its spec has contract.annotate:
    # patching the Deployment's plimsoll.dev/ annotations (the chart's admission policy
    # refuses any other change)
    contract_role: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> OperatorIdentity | None:
        names = ("PLIMSOLL_SERVICE_ACCOUNT", "PLIMSOLL_SERVICE_ACCOUNT_NAMESPACE")
        account, namespace = (env.get(n, "").strip() for n in names)
        run_role = env.get("PLIMSOLL_RUN_ROLE", "").strip()
        given = [bool(account), bool(namespace), bool(run_role)]
        if not any(given):
            return None
        if not all(given):
            raise GrantError(
                "PLIMSOLL_SERVICE_ACCOUNT, PLIMSOLL_SERVICE_ACCOUNT_NAMESPACE and "
                "PLIMSOLL_RUN_ROLE go together (the chart sets all three): set the "
                "missing ones, or none to make no RoleBindings"
            )
        report_role = env.get("PLIMSOLL_REPORT_ROLE", "").strip() or None
        references_role = env.get("PLIMSOLL_REFERENCES_ROLE", "").strip() or None
        contract_role = env.get("PLIMSOLL_CONTRACT_ROLE", "").strip() or None
        return cls(account, namespace, run_role, report_role, references_role, contract_role)

    def subject(self) -> dict[str, str]:
        return {"kind": "ServiceAccount", "name": self.service_account, "namespace": self.namespace}


def role_binding(
    identity: OperatorIdentity, namespace: str, role: str, labels: Mapping[str, str]
) -> dict[str, object]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": role, "namespace": namespace, "labels": dict(labels)},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [identity.subject()],
    }


async def ensure_bound(
    client: KubeClient,
    identity: OperatorIdentity,
    namespace: str,
    role: str,
    *,
    labels: Mapping[str, str],
    proof: tuple[str, str] | tuple[str, str, str],
) -> None:
    """Bind `role` to the operator in `namespace` (or adopt the same binding), then wait
    until the API server lets the operator do `proof` (resource, verb[, API group]) there."""
    body = role_binding(identity, namespace, role, labels)
    try:
        await client.create(body)
    except ConflictError:
        existing = await client.get(ROLE_BINDINGS, namespace, role) or {}
        if existing.get("roleRef") != body["roleRef"] or identity.subject() not in (
            existing.get("subjects") or []
        ):
            raise GrantError(
                f"RoleBinding {namespace}/{role} exists and does not bind ClusterRole {role} "
                f"to {identity.namespace}/{identity.service_account}: delete it"
            ) from None
    except KubeError as exc:
        raise GrantError(
            f"cannot bind ClusterRole {role} in {namespace}: {exc.message} (the operator "
            f"needs `bind` on clusterroles/{role} and `create` on rolebindings)"
        ) from exc
    await _until_allowed(client, namespace, *proof)


async def _until_allowed(
    client: KubeClient, namespace: str, resource: str, verb: str, group: str = ""
) -> None:
    deadline = time.monotonic() + BINDING_SETTLE_SECONDS
    attributes = {"namespace": namespace, "resource": resource, "verb": verb, "group": group}
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {"resourceAttributes": attributes},
    }
    while True:
        answer = await client.create(review)
        if (answer.get("status") or {}).get("allowed"):
            return
        if time.monotonic() > deadline:
            raise GrantError(
                f"the RoleBinding in {namespace} was made but the API server still refuses "
                f"{verb} {resource} there after {BINDING_SETTLE_SECONDS:g} s"
            )
        await asyncio.sleep(0.2)


async def bind_references_role(
    client: KubeClient, identity: OperatorIdentity | None, namespace: str
) -> None:
    """The operator's references role bound in `namespace` (a CapacityTest's own) before
    it reads a Secret, ConfigMap or Deployment there: `valueFrom`, `notify`'s URL and
    `target.fromDeployment` ask through it. Nothing to bind without one (the operator
    then reads with its own rights)."""
    if identity is None or not identity.references_role:
        return
    await ensure_bound(
        client,
        identity,
        namespace,
        identity.references_role,
        labels={LABEL_MANAGED_BY: MANAGER},
        proof=("secrets", "get"),  # the same role grants deployments get
    )


async def bind_contract_role(
    client: KubeClient, identity: OperatorIdentity | None, namespace: str
) -> None:
    """The operator's contract role bound in `namespace` (a CapacityTest's own) before it
    annotates the Deployment there (`contract.annotate`). Nothing to bind without one."""
    if identity is None or not identity.contract_role:
        return
    await ensure_bound(
        client,
        identity,
        namespace,
        identity.contract_role,
        labels={LABEL_MANAGED_BY: MANAGER},
        proof=("deployments", "patch", "apps"),
    )
