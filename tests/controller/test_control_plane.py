"""Without `../shared/k8s` the real-API-server tests skip, and say how to run them;
with CI=true that skip is a failure, so CI's log proves they ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.controller import control_plane


def test_absent_control_plane_skips_with_how_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_plane, "CONTROL_PLANE", Path("/nonexistent/control-plane"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PLIMSOLL_E2E_KUBECONFIG"):
        control_plane.require_control_plane()


def test_absent_control_plane_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_plane, "CONTROL_PLANE", Path("/nonexistent/control-plane"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        control_plane.require_control_plane()


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_start_tries_up_again_after_a_failed_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tries = tmp_path / "tries"
    fails_once = f'echo x >> {tries}; [ "$(wc -l < {tries})" -ge 2 ] && echo KUBECONFIG=/k/c'
    monkeypatch.setattr(control_plane, "CONTROL_PLANE", _script(tmp_path / "up", fails_once))
    plane = control_plane.start(tmp_path / "cluster")
    assert plane.kubeconfig == Path("/k/c")
    assert tries.read_text().count("x") == 2


def test_start_gives_up_after_three_failed_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tries = tmp_path / "tries"
    monkeypatch.setattr(
        control_plane, "CONTROL_PLANE", _script(tmp_path / "up", f"echo x >> {tries}; exit 1")
    )
    with pytest.raises(AssertionError, match="failed 3 times"):
        control_plane.start(tmp_path / "cluster")
    assert tries.read_text().count("x") == 3
