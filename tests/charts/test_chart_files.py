"""The chart's derived files match their sources of truth.

The chart ships the generated CRD in its crds/ (Helm installs it before the
templates); it must be byte-identical to crds/capacitytest.yaml, which is itself
what `plimsoll crd` prints. `scripts/sync-chart` rewrites the chart's copies.
"""

from __future__ import annotations

import subprocess
import sys

from plimsoll.api.crd import render_crd
from tests.charts.helm import CHART, ROOT


def test_chart_crd_is_the_generated_crd() -> None:
    chart_crd = (CHART / "crds" / "capacitytest.yaml").read_text()
    assert chart_crd == (ROOT / "crds" / "capacitytest.yaml").read_text()
    assert chart_crd == render_crd()


def test_sync_script_finds_nothing_stale() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "sync-chart"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stale" not in result.stdout
