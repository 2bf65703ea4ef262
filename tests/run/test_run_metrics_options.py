"""`plimsoll run`'s metrics options: the exporter's address, and a Prometheus that never
scrapes it (named by the spec's metrics.prometheusUrl) stopping the run with what to do."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from plimsoll.platforms.local.processes import free_port
from tests.localrun import CPU_SPEC, marked_processes, plimsoll, saved_report

pytestmark = pytest.mark.usefixtures("mark")


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_spec_prometheus_that_never_scrapes_stops_the_run_saying_what_to_do(
    tmp_path: Path, mark: str
) -> None:
    document = yaml.safe_load(CPU_SPEC.read_text())
    nobody = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    document["spec"]["metrics"] = {"prometheusUrl": nobody}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(document))
    port = free_port()
    out = tmp_path / "out"
    result = plimsoll(
        *["run", str(spec), "--out", str(out), "--quiet", "--scrape-wait", "1"],
        *["--exporter-listen", f"127.0.0.1:{port}"],
    )
    assert result.returncode == 1, result.stderr
    assert f"exporter: http://127.0.0.1:{port}/metrics" in result.stderr
    assert f"metrics: read from Prometheus at {nobody}" in result.stderr
    message = saved_report(out)["message"]
    assert f"Prometheus at {nobody} shows no series of the target within 1s" in message
    assert f"add the exporter 127.0.0.1:{port} to its scrape targets" in message
    assert marked_processes(mark) == []


def test_exporter_address_in_use_is_a_clear_error(tmp_path: Path, taken_port: int) -> None:
    result = plimsoll(
        *["run", str(CPU_SPEC), "--out", str(tmp_path)],
        *["--exporter-listen", f"127.0.0.1:{taken_port}"],
    )
    assert result.returncode == 1
    assert f"--exporter-listen 127.0.0.1:{taken_port}:" in result.stderr
    assert "in use" in result.stderr


def test_exporter_address_must_be_host_and_port(tmp_path: Path) -> None:
    result = plimsoll("run", str(CPU_SPEC), "--out", str(tmp_path), "--exporter-listen", "9464")
    assert result.returncode == 2
    assert "HOST:PORT" in result.stderr
