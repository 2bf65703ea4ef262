"""The example targets (examples/targets, all served by tinyhttp.py) stop on SIGTERM
as their container's first process: a run namespace on a real node is deleted without
waiting out the kubelet's 30 s grace for the target pod."""

from __future__ import annotations

import sys

from tests.first_process import seconds_to_stop_on_sigterm
from tests.generator.mockproc import free_port
from tests.localrun import ROOT


def test_an_example_target_stops_on_sigterm_as_its_containers_first_process() -> None:
    port = free_port()
    command = [sys.executable, str(ROOT / "examples" / "targets" / "cpu_bound.py")]
    took = seconds_to_stop_on_sigterm(command, {"PORT": str(port)}, port)
    assert took is not None, "still running 10 s after SIGTERM: the kubelet would wait 30 s"
    assert took < 5, took
