"""`plimsoll init` against a real service: Debian's nginx on a loopback port (issue 55).

nginx serves `/` itself (a `return 200`), so the probe measures a real HTTP server.
From `--url` the written spec names it as an existing service; from `--command` the
same nginx is started by init for the probe, stopped after it, and the spec starts
it pinned; from `--image` the spec is a cluster's, probed at the `--url` where the
user runs the image (nginx stands in). Each local spec passes `plimsoll validate
--local` with no warning, and holds
the values the probe gave (start level, p99 bar) with the comments that say so. The
last test takes the `--url` spec through two short real trials with `plimsoll run`.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from plimsoll.api.resource import load_capacity_test
from plimsoll.decide.scaffold import BAR_FACTOR, BAR_FLOOR
from tests.localrun import marked_processes, plimsoll

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = [
    pytest.mark.skipif(not Path(NGINX).exists(), reason="Debian's nginx is not installed"),
    pytest.mark.usefixtures("mark"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def nginx_conf(home: Path, port: int) -> Path:
    for temp in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (home / temp).mkdir(parents=True, exist_ok=True)
    conf = home / "nginx.conf"
    conf.write_text(
        f"""daemon off;
worker_processes 1;
pid {home}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {home}/body;
    proxy_temp_path {home}/proxy;
    fastcgi_temp_path {home}/fastcgi;
    uwsgi_temp_path {home}/uwsgi;
    scgi_temp_path {home}/scgi;
    server {{ listen 127.0.0.1:{port}; location / {{ return 200 "hello\\n"; }} }}
}}
"""
    )
    return conf


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[str]:
    """A running nginx; its URL."""
    with running_nginx(tmp_path) as url:
        yield url


@contextmanager
def running_nginx(tmp_path: Path) -> Iterator[str]:
    """nginx on a free loopback port, answering 200 everywhere; its URL."""
    port = _free_port()
    conf = nginx_conf(tmp_path / "nginx", port)
    server = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(conf.parent), "-e", "stderr"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not _listening(port):
            assert time.monotonic() < deadline, "nginx did not listen"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(10)


def _validated(spec: Path) -> dict[str, object]:
    checked = plimsoll("validate", "--local", str(spec), timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert "warning" not in checked.stderr
    load_capacity_test(yaml.safe_load(spec.read_text()))
    document: dict[str, object] = yaml.safe_load(spec.read_text())
    return document


def test_init_from_a_url_writes_a_spec_that_validates(nginx: str, tmp_path: Path) -> None:
    spec = tmp_path / "capacitytest.yaml"
    done = plimsoll("init", "--url", nginx, "--out", str(spec), "--probe-seconds", "1", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {spec} (it validates). Before you trust its ceiling")
    assert f"Then: plimsoll run {spec}" in done.stdout
    document = _validated(spec)
    test = load_capacity_test(document)
    assert test.spec.target.url == nginx.rstrip("/")
    assert test.spec.workload.model.value == "rate"
    assert test.spec.search.strategy.value == "doubling"
    assert test.spec.search.start >= 1
    [bound] = test.spec.pass_when.latency
    assert bound.quantile == 0.99
    assert bound.below >= BAR_FLOOR
    assert test.spec.pass_when.errors.transport == test.spec.pass_when.errors.unexpected == 0.001
    text = spec.read_text()
    assert text.startswith(f"# A CapacityTest written by `plimsoll init --url {nginx}`")
    assert f"{BAR_FACTOR:g} × the probe's p99" in text
    assert "CHANGE" in text
    # The probe's own figures, as the header states them, give the bar it wrote.
    p99_ms = float(text.split("p99 ", 1)[1].split(" ms", 1)[0])
    assert bound.below == pytest.approx(max(p99_ms / 1000 * BAR_FACTOR, BAR_FLOOR), rel=0.15)


def test_init_from_a_command_starts_probes_and_stops_it(tmp_path: Path, mark: str) -> None:
    port = _free_port()
    conf = nginx_conf(tmp_path / "nginx", port)
    command = f"{NGINX} -c {conf} -p {conf.parent} -e stderr"
    spec = tmp_path / "capacitytest.yaml"
    done = plimsoll(
        "init", "--command", command, "--port", str(port), "--cpu", "500m", "--memory", "64Mi",
        "--out", str(spec), "--probe-seconds", "1", timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "target.resources   the pod shape to measure (now 500m CPU / 64Mi)" in done.stdout
    test = load_capacity_test(_validated(spec))
    assert test.spec.target.command == command.split()
    assert test.spec.target.port == port
    assert test.spec.target.port_env is None  # nginx's port is in its config, not $PORT
    assert test.spec.target.resources is not None
    assert test.spec.target.resources.memory == 64 << 20
    assert not _listening(port)  # stopped after the probe
    assert marked_processes(mark) == []


def test_init_from_an_image_writes_a_cluster_spec_probed_where_the_user_runs_it(
    nginx: str, tmp_path: Path
) -> None:
    # nginx stands in for the image run under the user's podman: the probe goes to --url.
    spec = tmp_path / "capacitytest.yaml"
    image = "ghcr.io/acme/my-service:1.4"
    done = plimsoll(
        "init", "--image", image, "--url", nginx, "--port", "8081", "--cpu", "250m",
        "--out", str(spec), "--probe-seconds", "1", timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "target.resources   the pod shape to measure (now 250m CPU / 512Mi)" in done.stdout
    assert f"Then: kubectl apply -f {spec}; kubectl get capacitytests -w" in done.stdout
    text = spec.read_text()
    assert text.startswith(
        f"# A CapacityTest written by `plimsoll init --image {image} --url {nginx} --port 8081`"
    )
    assert f"# The probe went to {nginx}, where you ran the image" in text
    checked = plimsoll("validate", str(spec), timeout=60)  # as the cluster's admission will
    assert checked.returncode == 0, checked.stderr
    test = load_capacity_test(yaml.safe_load(text))
    target = test.spec.target
    assert (target.image, target.port, target.port_env) == (image, 8081, None)
    assert target.url is None
    assert target.command is None
    assert target.readiness_path == "/"
    assert target.resources is not None
    assert target.resources.cpu == 0.25
    assert test.spec.search.start >= 1
    local = plimsoll("validate", "--local", str(spec), timeout=60)
    assert local.returncode != 0  # a cluster's spec: this machine cannot run an image
    assert "target" in local.stderr


def test_init_refuses_what_it_cannot_probe(tmp_path: Path) -> None:
    spec = tmp_path / "x.yaml"
    closed = plimsoll("init", "--url", f"http://127.0.0.1:{_free_port()}/", "--out", str(spec))
    assert closed.returncode == 1
    assert "did not answer" in closed.stderr
    assert not spec.exists()
    image = plimsoll("init", "--image", "registry.example.com/api:1", "--out", str(spec))
    assert image.returncode == 2
    assert "--image needs --url: run the image where you can reach it" in image.stderr
    assert "podman run --rm -p 127.0.0.1:8080:PORT registry.example.com/api:1" in image.stderr
    assert not spec.exists()
    deployment = plimsoll("init", "--deployment", "shop/api", "--out", str(spec))
    assert deployment.returncode == 2  # built (tests/cli/test_init_deployment.py): needs --url
    assert "--deployment needs --url: the probe goes through a port-forward" in deployment.stderr
    both = plimsoll("init", "--url", "http://127.0.0.1:1/", "--command", "x")
    assert both.returncode == 2
    assert "exactly one of --url, --command" in both.stderr


def test_a_404_is_refused_with_what_to_give(nginx: str, tmp_path: Path) -> None:
    # nginx answers everything here; a path it refuses needs a server that refuses.
    del nginx
    port = _free_port()
    home = tmp_path / "refusing"
    conf = nginx_conf(home, port)
    conf.write_text(conf.read_text().replace('return 200 "hello\\n"', "return 404"))
    server = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(home), "-e", "stderr"])
    try:
        time.sleep(0.5)
        done = plimsoll("init", "--url", f"http://127.0.0.1:{port}/x", "--out", str(tmp_path / "s"))
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 1
    assert "answered 404: give the URL of a request that succeeds" in done.stderr


@pytest.mark.slow
def test_the_spec_init_wrote_runs_as_written(nginx: str, tmp_path: Path, mark: str) -> None:
    spec = tmp_path / "capacitytest.yaml"
    done = plimsoll("init", "--url", nginx, "--out", str(spec), "--probe-seconds", "1", timeout=60)
    assert done.returncode == 0, done.stderr
    # Only shortened: two 1 s trials instead of a whole search (the lead's check runs it all).
    document = yaml.safe_load(spec.read_text())
    document["spec"]["search"]["maxTrials"] = 2
    short = tmp_path / "short.yaml"
    short.write_text(yaml.safe_dump(document))
    out = tmp_path / "out"
    shortened = ["--trial-duration", "1", "--warm-up", "0.3"]
    plimsoll("run", str(short), "--out", str(out), "--quiet", *shortened, timeout=120)
    report = json.loads((out / "report.json").read_text())
    first = report["records"][0]
    assert first["level"] == document["spec"]["search"]["start"]
    # Noisy: the host, not nginx, was slow (the floor says so) and the level is repeated;
    # the spec's level and bar are what this checks, and neither failed nor was refused.
    assert first["verdict"] in {"pass", "noisy"}, first
    assert marked_processes(mark) == []
