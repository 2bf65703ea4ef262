"""`plimsoll calibrate` on a log drawn from the gateway seed's known model: the fragment is a
valid spec, the figures come back, and the privacy defaults hold."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench import gateway_log
from plimsoll.api.units import parse_duration, parse_fraction
from plimsoll.api.upstream import Upstream
from plimsoll.api.workload import Workload
from plimsoll.cli.app import app


@pytest.fixture(scope="module")
def seed_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("calibrate") / "access.json"
    gateway_log.write(path, users=400, span=3600)
    return path


def _calibrate(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["calibrate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_seed_model_comes_back_from_its_log(seed_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "workload.yaml"
    code, _, report = _calibrate(str(seed_log), "-o", str(out))
    assert code == 0, report
    text = out.read_text()
    fragment = yaml.safe_load(text)
    workload = Workload.model_validate(fragment["workload"])
    upstream = Upstream.model_validate(fragment["upstream"])
    users = workload.users
    assert users is not None
    assert workload.model.value == "users"
    assert users.burst_gap_median == pytest.approx(6.0, rel=0.15)
    assert users.bot_fraction == pytest.approx(0.01, rel=0.15)
    assert users.bot_share == pytest.approx(0.5, rel=0.15)
    assert users.page_view_fraction == pytest.approx(0.05, rel=0.15)
    assert users.page_view_path == "/dashboard"
    assert upstream.mcp is not None
    tool = upstream.mcp.tools[0]
    assert tool.latency.p50 == pytest.approx(1.2, rel=0.15)
    assert tool.latency.p95 == pytest.approx(12.0, rel=0.15)
    assert tool.errors.fraction == pytest.approx(0.08, rel=0.15)
    sizes = {s.bytes: s.weight for s in tool.sizes}
    assert sizes[4096] == pytest.approx(98, abs=1)
    assert sizes[1_048_576] == pytest.approx(2, abs=1)
    # Each figure's source is written beside it.
    assert "# EM fit of" in text
    assert "# lognormal through the log's p50/p95" in text
    assert "users: in-burst median gap" in report


def test_nothing_identifying_reaches_the_output(seed_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "workload.yaml"
    code, _, report = _calibrate(str(seed_log), "-o", str(out))
    assert code == 0
    assert "10.0." not in out.read_text() + report  # client addresses are hashed


def test_a_time_window_and_an_http_log_give_an_open_model(tmp_path: Path) -> None:
    log = tmp_path / "combined.log"
    lines = []
    for i in range(3000):
        second = 1000 + i // 10
        stamp = f"01/Dec/2026:10:{second // 60 % 60:02d}:{second % 60:02d} +0000"
        path = f"/api/items/{i % 50}?q=x" if i % 4 else "/health"
        status = 500 if i % 10 == 1 else 200  # on the items route only
        lines.append(f'10.9.0.{i % 30} - - [{stamp}] "GET {path} HTTP/1.1" {status} 512 "-" "ua"')
    log.write_text("\n".join(lines) + "\n")
    code, out, report = _calibrate(str(log), "--until", "2026-12-01T10:20:00Z")
    assert code == 0, report
    fragment = yaml.safe_load(out)
    workload = Workload.model_validate(fragment["workload"])
    assert workload.model.value == "rate"
    names = {op.name: op for op in workload.mix}
    assert set(names) == {"get-api-items-id", "get-health"}
    assert names["get-api-items-id"].weight == pytest.approx(75, abs=1)
    routes = {r.name: r for r in Upstream.model_validate(fragment["upstream"]).routes}
    assert routes["get-api-items-id"].path == "/api/items/*"
    assert routes["get-api-items-id"].errors.fraction == pytest.approx(200 / 1500, rel=0.01)
    assert "requests/s" in out
    assert parse_duration("1s") == 1.0
    assert parse_fraction("75%") == 0.75


def test_bad_input_gets_a_clear_error(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("not a log\n")
    code, _, err = _calibrate(str(log))
    assert code == 2
    assert "give --format" in err
    code, _, err = _calibrate(str(log), "--format", "jsonl")
    assert code == 2
    assert "--field time=ts" in err
    code, _, err = _calibrate(str(tmp_path / "missing.log"))
    assert code == 2
    assert "cannot read the log" in err
    code, _, err = _calibrate(str(log), "--bot-share", "150%")
    assert code == 2
    assert "--bot-share" in err
