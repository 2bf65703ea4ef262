"""The mock as a real process: start-up errors, health, TLS, graceful SIGTERM."""

from __future__ import annotations

import json
import signal
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from plimsoll.api.upstream import MOCK_CONFIG_ENV

SLOW = {"routes": [{"name": "slow", "path": "/slow", "latency": {"fixed": "400ms"}}]}


def run_mock(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plimsoll_mock", *args],
        capture_output=True,
        text=True,
        timeout=20,
        env=env,
    )


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (
            {"routes": [{"name": "a", "path": "/a", "latency": {"p50": "2s", "p95": "1s"}}]},
            "routes[0].latency",
        ),
        (
            {"routes": [{"name": "a", "path": "/a", "errors": {"fraction": "150%"}}]},
            "routes[0].errors.fraction",
        ),
        ({"port": 0}, "port"),
        ({"routes": [{"name": "a", "path": "/healthz"}]}, "routes[0].path"),
        ({"routs": []}, "routs"),
    ],
)
def test_invalid_config_stops_start_up_naming_the_field(
    tmp_path: Path, config: dict[str, Any], field: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(config))
    result = run_mock("--config", str(path))
    assert result.returncode == 2
    assert field in result.stderr


def test_config_from_the_environment(mock_process: Any, tmp_path: Path) -> None:
    import os

    env = {**os.environ, MOCK_CONFIG_ENV: "not json"}
    result = run_mock(env=env)
    assert result.returncode == 2
    assert MOCK_CONFIG_ENV in result.stderr


def test_sigterm_lets_held_calls_finish(mock_process: Any) -> None:
    mock = mock_process(SLOW, "--shutdown-grace", "5")
    mock.wait_healthy()
    results: list[int] = []
    thread = threading.Thread(
        target=lambda: results.append(httpx.get(f"{mock.url}/slow").status_code)
    )
    thread.start()
    time.sleep(0.15)
    mock.proc.send_signal(signal.SIGTERM)
    thread.join(5)
    assert results == [200]
    assert mock.proc.wait(5) == 0


def test_sigterm_cuts_held_calls_at_the_deadline(mock_process: Any) -> None:
    mock = mock_process(
        {"routes": [{"name": "s", "path": "/s", "latency": {"fixed": "30s"}}]},
        "--shutdown-grace",
        "0.3",
    )
    mock.wait_healthy()
    errors: list[Exception] = []

    def call() -> None:
        try:
            httpx.get(f"{mock.url}/s", timeout=10)
        except httpx.TransportError as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(0.15)
    started = time.monotonic()
    mock.proc.send_signal(signal.SIGTERM)
    assert mock.proc.wait(5) == 0
    thread.join(5)
    assert time.monotonic() - started < 3
    assert len(errors) == 1


def test_tls_when_certificate_files_are_set(mock_process: Any, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    mock = mock_process(SLOW, env={"TLS_CERT_FILE": str(cert), "TLS_KEY_FILE": str(key)})
    trust = ssl.create_default_context(cafile=str(cert))
    mock.wait_healthy(scheme="https", verify=trust)
    response = httpx.get(f"https://127.0.0.1:{mock.port}/nothing", verify=trust)
    assert response.status_code == 404
    assert response.json()["error"]["status"] == 404
