"""A client from a kubeconfig file, for the commands a user runs (`kubectl plimsoll`).

The operator logs in through kopf (`KubeClient.from_connection`); a user's command reads
their kubeconfig instead, as kubectl does. Here rather than in the CLI so that only
`plimsoll.kube` imports the `kubernetes` client (a contract in pyproject.toml).
"""

from __future__ import annotations

from kubernetes import config as kubeconfig
from kubernetes.client import Configuration

from plimsoll.kube.client import KubeClient


class KubeconfigError(RuntimeError):
    """The kubeconfig cannot be read or has no such context; the message says why."""


def client_from_kubeconfig(path: str | None, context: str | None) -> KubeClient:
    """A client as the kubeconfig at `path` (None: $KUBECONFIG, then ~/.kube/config) and
    its `context` (None: the current one) say; its retries are Plimsoll's, bounded."""
    config = Configuration()
    try:
        kubeconfig.load_kube_config(  # type: ignore[no-untyped-call]  # the client's, untyped
            config_file=path, context=context, client_configuration=config
        )
    except (kubeconfig.ConfigException, OSError) as exc:
        where = path or "from $KUBECONFIG or ~/.kube/config"
        raise KubeconfigError(f"cannot read the kubeconfig {where}: {exc}") from exc
    config.retries = False  # plimsoll.kube.retry retries, bounded
    return KubeClient(config)
