"""The real mock (`python -m plimsoll_mock`) as a process, for the generator's tests.

Started the way the runner starts it (a config file, a port, 127.0.0.1), with
TLS when `cert`/`key` are given (`TLS_CERT_FILE`/`TLS_KEY_FILE`), and ready once
`/healthz` answers. `self_signed` makes a throwaway certificate for 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {limit:g} s")


def self_signed(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


class MockProcess:
    def __init__(
        self, config: dict[str, Any], directory: Path, tls: tuple[Path, Path] | None = None
    ) -> None:
        path = directory / "mock.json"
        path.write_text(json.dumps(config))
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        env = dict(os.environ)
        if tls is not None:
            env["TLS_CERT_FILE"], env["TLS_KEY_FILE"] = str(tls[0]), str(tls[1])
        command = [sys.executable, "-m", "plimsoll_mock", "--config", str(path)]
        command += ["--port", str(self.port), "--host", "127.0.0.1", "--seed", "7"]
        self.proc = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the mock exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1, context=insecure):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the mock did not become healthy within 15 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
