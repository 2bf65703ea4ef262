"""Benchmark of `plimsoll calibrate`: a million-line log, the fitted parameters' error,
and (with the round trip) the ceiling the fitted workload finds.

Run: `.venv/bin/python bench/calibrate.py [--lines 1000000] [--no-ceilings]`.

1. Writes a synthetic nginx JSON log of about `--lines` lines: the gateway seed's
   users (bench/gateway_log.py: the generator's own gap and bot model, the mock's
   latency and size models, 8% errors), so every parameter is known.
2. Times `plimsoll calibrate` on it (wall time of the whole command, start-up
   included) and, as the reference measured in the same run, a bare loop that
   only `json.loads` every line: `vs_json_loads` is calibrate's lines/s over it.
3. `max_param_error_pct`: the largest error of the fitted burst gap median, bot
   fraction, bot share, latency p50/p95, error share and size mix against the model.
4. Unless `--no-ceilings`: the round trip's two ceiling runs through nginx
   (examples/calibration-round-trip.yaml, the original workload and the one fitted
   from its capture, as tests/e2e/test_calibration_round_trip.py runs them);
   `ceiling_delta_pct` is the fitted ceiling's difference from the original's.

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import gateway_log  # noqa: E402
from plimsoll.api.units import parse_duration, parse_fraction  # noqa: E402

PLIMSOLL = str(Path(sys.executable).with_name("plimsoll"))
SPEC = ROOT / "examples" / "calibration-round-trip.yaml"


def _error(fitted: float, model: float) -> float:
    return abs(fitted - model) / model * 100


def param_errors(fragment: dict[str, Any]) -> dict[str, float]:
    users = fragment["workload"]["users"]
    tool = fragment["upstream"]["mcp"]["tools"][0]
    model, latency = gateway_log.SEED_USERS, gateway_log.SEED_LATENCY
    sizes = {s["bytes"]: s["weight"] for s in tool["sizes"]}
    total = sum(sizes.values())
    big = min(sizes, key=lambda b: abs(b - 1_048_576))
    small = min(sizes, key=lambda b: abs(b - 4096))
    assert latency.p50 is not None
    assert latency.p95 is not None
    return {
        "burstGapMedian": _error(parse_duration(users["burstGapMedian"]), model.burst_gap_median),
        "botFraction": _error(parse_fraction(users["botFraction"]), model.bot_fraction),
        "botShare": _error(parse_fraction(users["botShare"]), model.bot_share or 0.5),
        "p50": _error(parse_duration(tool["latency"]["p50"]), latency.p50),
        "p95": _error(parse_duration(tool["latency"]["p95"]), latency.p95),
        "errors": _error(parse_fraction(tool["errors"]["fraction"]), gateway_log.ERROR_SHARE),
        "size-small": _error(small, 4096),
        "size-big": _error(big, 1_048_576),
        "size-big-share": _error(sizes[big] / total, gateway_log.BIG_SHARE),
    }


def json_loads_rate(log: Path) -> float:
    started = time.perf_counter()
    lines = 0
    with log.open() as handle:
        for line in handle:
            json.loads(line)
            lines += 1
    return lines / (time.perf_counter() - started)


def _run(spec: dict[str, Any], work: Path, name: str) -> int | None:
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    subprocess.run(
        [PLIMSOLL, "run", str(path), "--out", str(work / name), "--quiet"],
        cwd=ROOT,
        check=False,
        timeout=1800,
    )
    report = json.loads((work / name / "report.json").read_text())
    level = report["ceilings"][0].get("level")
    return int(level) if level is not None else None


def ceilings(work: Path) -> tuple[int | None, int | None]:
    doc = yaml.safe_load(SPEC.read_text())
    capture_log = work / "capture.json"
    capture = yaml.safe_load(yaml.safe_dump(doc))
    capture["spec"]["target"]["env"]["ACCESS_LOG"] = str(capture_log)
    capture["spec"]["target"]["resources"] = {"cpu": "1", "memory": "128Mi"}
    capture["spec"]["search"].update({"start": 200, "limit": 200, "maxTrials": 1})
    capture["spec"]["trial"] = {"duration": "180s", "warmUp": "2s"}
    _run(capture, work, "capture")
    fitted_path = work / "fitted-round-trip.yaml"
    subprocess.run(
        [PLIMSOLL, "calibrate", str(capture_log), "--client", "xff", "-o", str(fitted_path)],
        check=True,
        capture_output=True,
    )
    fitted = yaml.safe_load(fitted_path.read_text())
    doc["spec"]["target"]["env"]["ACCESS_LOG"] = str(work / "original.json")
    original = _run(doc, work, "original")
    doc["spec"]["workload"], doc["spec"]["upstream"] = fitted["workload"], fitted["upstream"]
    return original, _run(doc, work, "refitted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--no-ceilings", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-calibrate-") as folder:
        work = Path(folder)
        log = work / "access.json"
        span = 3600.0
        users = max(10, round(args.lines / gateway_log.lines_for(1000, span) * 1000))
        lines = gateway_log.write(log, users=users, span=span)
        print(f"log: {lines} lines of {users} users over {span:.0f} s", flush=True)
        reference = json_loads_rate(log)
        out = work / "fitted.yaml"
        started = time.perf_counter()
        subprocess.run([PLIMSOLL, "calibrate", str(log), "-o", str(out)], check=True)
        wall = time.perf_counter() - started
        errors = param_errors(yaml.safe_load(out.read_text()))
        print(
            f"calibrate: {wall:.1f} s, {lines / wall:,.0f} lines/s "
            f"(json.loads alone: {reference:,.0f} lines/s)"
        )
        print("parameter errors %: " + ", ".join(f"{k} {v:.1f}" for k, v in errors.items()))
        delta = None
        if not args.no_ceilings:
            original, refitted = ceilings(work)
            print(f"ceilings: original {original}, fitted {refitted}")
            if original and refitted:
                delta = (refitted - original) / original * 100
    print(
        json.dumps(
            {
                "lines": lines,
                "seconds": round(wall, 2),
                "lines_per_s": round(lines / wall),
                "vs_json_loads": round(lines / wall / reference, 3),
                "max_param_error_pct": round(max(errors.values()), 2),
                "ceiling_delta_pct": round(delta, 1) if delta is not None else None,
            }
        )
    )


if __name__ == "__main__":
    main()
