"""In a pod the generator is its container's first process: SIGTERM (a namespace's
deletion, a drained node) stops it at once, not after the kubelet's 30 s grace."""

from __future__ import annotations

import sys

from plimsoll.api.trial import CONTROL_TOKEN_ENV
from tests.first_process import seconds_to_stop_on_sigterm
from tests.generator.mockproc import free_port


def test_the_generator_stops_on_sigterm_as_its_containers_first_process() -> None:
    port = free_port()
    command = [sys.executable, "-m", "plimsoll_generator", "--port", str(port), "--processes", "2"]
    took = seconds_to_stop_on_sigterm(command, {CONTROL_TOKEN_ENV: "t"}, port)
    assert took is not None, "still running 10 s after SIGTERM: the kubelet would wait 30 s"
    assert took < 5, took
