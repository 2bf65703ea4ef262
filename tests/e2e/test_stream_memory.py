"""Memory per held stream from a real local run, against a target whose cost is known.

The quickstart gateway, pinned with cgroups, keeps a 512 KiB replay buffer per
held SSE stream (`tests/e2e/specs/streams-memory.yaml`). `plimsoll run` holds
80, 160 and 240 streams before the first trial; the slope of the target's working
set over those counts must be within 10% of 512 KiB. The streams stay held during
the step (`holdDuringSteps`), which the step's stream figures and its memory show,
and `plimsoll size --report` takes the figure from the report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plimsoll.api.sizing import SizingInput
from tests.localrun import ROOT, marked_processes, plimsoll, saved_report

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]

SPEC = ROOT / "tests" / "e2e" / "specs" / "streams-memory.yaml"
KIB, MIB = 1 << 10, 1 << 20
PER_STREAM = 512 * KIB  # the spec's STREAM_BUFFER_KIB


def test_memory_per_held_stream_is_the_targets_known_cost(tmp_path: Path, mark: str) -> None:
    out = tmp_path / "out"
    result = plimsoll("run", str(SPEC), "--out", str(out), "--quiet", timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    saved = saved_report(out)
    assert not any("streams probe" in w for w in saved["warnings"]), saved["warnings"]

    [measured] = saved["streamMemory"]
    print(f"memory per held stream: {measured['bytesPerStream'] / KIB:.1f} KiB")
    assert measured["counts"] == [80, 160, 240]
    assert measured["bytesPerStream"] == pytest.approx(PER_STREAM, rel=0.1)
    assert measured["limitBytes"] == 256 * MIB
    # The projection: on the fitted line, the streams that fit under 256 MiB.
    top = measured["memoryBytes"][-1]
    expected_fit = 240 + (256 * MIB - top) / measured["bytesPerStream"]
    assert measured["fitUnderLimit"] == pytest.approx(expected_fit, rel=0.05)
    assert "streams fit under the 256.0 MiB limit" in measured["basis"]
    cost = next(c for c in saved["unitCosts"] if c["name"] == "memory per held stream")
    assert cost["value"] == measured["bytesPerStream"]
    report_md = (out / "report.md").read_text()
    assert "KiB per held stream: the slope of the working set" in report_md
    assert "streams fit under the 256.0 MiB limit" in report_md

    # Held through the step, not reopened by it: the step reports the 240 held streams
    # as held from its start to its end, none dropped or silent (the gateway pings every
    # 5 s), and the target's memory during it still carries all 240 buffers.
    # (A busy host may make a step noisy and repeat it: every attempt holds them.)
    steps = saved["steps"]
    assert steps[-1]["judgement"]["verdict"] == "pass"
    for step in steps:
        streams = step["client"]["streams"]
        assert (streams["opened"], streams["heldAtEnd"]) == (240, 240)
        assert streams.get("dropped", 0) == streams.get("missedKeepAlives", 0) == 0
        held = measured["baselineBytes"] + 0.9 * 240 * PER_STREAM
        assert step["target"]["memoryMeanBytes"] >= held
    criteria = steps[-1]["judgement"]["criteria"]
    assert any(c["name"] == "unhealthy streams" for c in criteria)

    # Sizing takes the figure from the report: 1,000 streams on one pod.
    plan = plimsoll("size", "--report", str(out / "report.json"), "--peak", "10")
    assert plan.returncode == 0, plan.stderr
    sized = plimsoll(
        *["size", "--report", str(out / "report.json"), "--peak", "10", "--streams", "1000"],
        "--json",
    )
    assert sized.returncode == 0, sized.stderr
    memory = json.loads(sized.stdout)["memoryPerPodBytes"]
    # One pod carries all 1,000 streams, and its cap holds twice that (the default
    # stream headroom): the memory at the cap is what the pod must fit.
    headroom = SizingInput.model_fields["stream_headroom"].default
    assert memory == pytest.approx(headroom * 1000 * measured["bytesPerStream"], rel=0.001)
    assert marked_processes(mark) == []
