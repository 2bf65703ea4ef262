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
