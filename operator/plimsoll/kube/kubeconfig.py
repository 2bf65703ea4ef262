"""A client from a kubeconfig file, for the commands a user runs (`kubectl plimsoll`).

The operator logs in through kopf (`KubeClient.from_connection`); a user's command reads
their kubeconfig instead, as kubectl does, and inside a pod with no kubeconfig (a
pipeline's Job: an Argo Rollouts analysis, a CI step in the cluster) its
ServiceAccount's token, as kubectl does there too. Here rather than in the CLI so that only
`plimsoll.kube` imports the `kubernetes` client (a contract in pyproject.toml).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kubernetes import config as kubeconfig
from kubernetes.client import Configuration
from kubernetes.config.incluster_config import InClusterConfigLoader

from plimsoll.kube.client import KubeClient


class KubeconfigError(RuntimeError):
    """The kubeconfig cannot be read or has no such context; the message says why."""


# Where a pod's ServiceAccount token and the cluster's CA are mounted.
SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def client_from_kubeconfig(
    path: str | None,
    context: str | None,
    *,
    environ: Mapping[str, str] = os.environ,
    service_account: Path | None = None,
) -> KubeClient:
    """A client as the kubeconfig at `path` (None: $KUBECONFIG, then ~/.kube/config) and
    its `context` (None: the current one) say; inside a pod where neither is given nor
    there, its ServiceAccount's (`service_account`); its retries are Plimsoll's, bounded."""
    config = Configuration()
    if _in_a_pod_without_kubeconfig(path, context, environ):
        service_account = service_account or SERVICE_ACCOUNT
        try:
            InClusterConfigLoader(
                token_filename=str(service_account / "token"),
                cert_filename=str(service_account / "ca.crt"),
                environ=environ,
            ).load_and_set(client_configuration=config)  # type: ignore[no-untyped-call]
        except (kubeconfig.ConfigException, OSError) as exc:
            raise KubeconfigError(
                f"no kubeconfig, and the pod's ServiceAccount ({service_account}) cannot be "
                f"read: {exc}"
            ) from exc
        config.retries = False
        return KubeClient(config)
    found = path or environ.get("KUBECONFIG") or str(_home_kubeconfig(environ))
    try:
        kubeconfig.load_kube_config(  # type: ignore[no-untyped-call]  # the client's, untyped
            config_file=found, context=context, client_configuration=config
        )
    except (kubeconfig.ConfigException, OSError) as exc:
        where = path or "from $KUBECONFIG or ~/.kube/config"
        raise KubeconfigError(f"cannot read the kubeconfig {where}: {exc}") from exc
    config.retries = False  # plimsoll.kube.retry retries, bounded
    return KubeClient(config)


def _in_a_pod_without_kubeconfig(
    path: str | None, context: str | None, environ: Mapping[str, str]
) -> bool:
    """No kubeconfig named or present, and the API server's address in the environment
    the kubelet gives every pod."""
    if path is not None or context is not None or environ.get("KUBECONFIG"):
        return False
    return not _home_kubeconfig(environ).exists() and bool(environ.get("KUBERNETES_SERVICE_HOST"))


def _home_kubeconfig(environ: Mapping[str, str]) -> Path:
    """~/.kube/config for the HOME `environ` names, as kubectl finds it (the client's own
    default was fixed from the process's environment when it was imported)."""
    return Path(environ.get("HOME") or "~").expanduser() / ".kube" / "config"
