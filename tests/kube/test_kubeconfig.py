"""A client from a user's kubeconfig (`kubectl plimsoll`): read as kubectl reads it, its
retries left to Plimsoll's bounded policy, and a file it cannot read named in the error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from plimsoll.kube.kubeconfig import KubeconfigError, client_from_kubeconfig


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [
                    {"name": "one", "context": {"cluster": "c", "user": "u"}},
                    {"name": "two", "context": {"cluster": "c", "user": "u", "namespace": "x"}},
                ],
                "current-context": "one",
            }
        )
    )
    return path


async def test_the_server_and_context_are_the_kubeconfigs(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path / "config", "https://127.0.0.1:6443")
    client = client_from_kubeconfig(str(path), "two")
    try:
        assert client.server == "https://127.0.0.1:6443"
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("name", "context", "words"),
    [("missing", None, "missing"), ("config", "three", "three")],
)
def test_a_kubeconfig_it_cannot_use_is_named(
    tmp_path: Path, name: str, context: str | None, words: str
) -> None:
    _kubeconfig(tmp_path / "config", "https://127.0.0.1:6443")
    with pytest.raises(KubeconfigError, match="cannot read the kubeconfig") as raised:
        client_from_kubeconfig(str(tmp_path / name), context)
    assert words in str(raised.value)


def _mounted(folder: Path) -> Path:
    """What the kubelet mounts into a pod for its ServiceAccount."""
    folder.mkdir()
    (folder / "token").write_text("pod-token")
    (folder / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    return folder


async def test_in_a_pod_without_a_kubeconfig_the_service_account_logs_in(tmp_path: Path) -> None:
    """As kubectl in a pipeline's Job: no kubeconfig named or at ~/.kube/config, the API
    server's address in the pod's environment, its token and CA where the kubelet mounts
    them (the real login is the Rollouts analysis test on the real API server)."""
    pod = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    mounted = _mounted(tmp_path / "serviceaccount")
    client = client_from_kubeconfig(
        None, None, environ={**pod, "HOME": str(tmp_path)}, service_account=mounted
    )
    try:
        assert client.server == "https://10.96.0.1:443"
    finally:
        await client.aclose()
    # A kubeconfig wins wherever there is one: named, in $KUBECONFIG, or at ~/.kube/config.
    (tmp_path / ".kube").mkdir()
    _kubeconfig(tmp_path / ".kube" / "config", "https://a:1")
    home = client_from_kubeconfig(
        None, None, environ={**pod, "HOME": str(tmp_path)}, service_account=mounted
    )
    try:
        assert home.server == "https://a:1"
    finally:
        await home.aclose()


def test_a_pod_without_its_token_is_told_so(tmp_path: Path) -> None:
    pod = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(KubeconfigError, match="no kubeconfig, and the pod's ServiceAccount"):
        client_from_kubeconfig(
            None, None, environ={**pod, "HOME": str(tmp_path)}, service_account=tmp_path / "no"
        )
