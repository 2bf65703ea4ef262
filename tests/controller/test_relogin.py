"""The operator's `fresh_login`: kopf's own kubeconfig login, run again after a 401.

A kubeconfig whose token is replaced on disk (as `kubectl` or an exec helper
rewrites it) must give the new token the next time the client asks.
"""

from __future__ import annotations

import logging
from pathlib import Path

import kopf
import pytest

from plimsoll.controller.handlers import fresh_login


def _kubeconfig(path: Path, token: str) -> None:
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:6443"}}}}]
users: [{{name: u, user: {{token: {token}}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""
    )


async def test_fresh_login_rereads_the_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "kubeconfig"
    _kubeconfig(config, "first")
    monkeypatch.setenv("KUBECONFIG", str(config))
    relogin = fresh_login(logger=logging.getLogger("test"), settings=kopf.OperatorSettings())
    assert (await relogin()).token == "first"
    _kubeconfig(config, "second")
    info = await relogin()
    assert info.token == "second"
    assert info.server == "http://127.0.0.1:6443"
