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
