"""One CapacityTest run through `plimsoll run`, as a user runs it, for the bench scripts
that judge the CLI's report (bench/prove.py, bench/autoscale.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
PLIMSOLL = str(Path(sys.executable).parent / "plimsoll")


def run_spec(spec: Any, folder: Path, timeout: float = 600) -> dict[str, Any]:
    """Write `spec` to `folder`, run it there, print its summary; its report.json. Exits
    with the CLI's stderr when no report was written."""
    name = spec["metadata"]["name"]
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    out = folder / name
    done = subprocess.run(
        [PLIMSOLL, "run", str(path), "--out", str(out), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    print(done.stdout.strip())
    report_file = out / "report.json"
    if not report_file.exists():
        print(done.stderr, file=sys.stderr)
        raise SystemExit(f"{name}: no report ({done.returncode})")
    report: dict[str, Any] = json.loads(report_file.read_text())
    return report
