"""How `plimsoll run` stops on a signal: Ctrl-C (SIGINT), a closed terminal (SIGHUP),
and `kill`, a cancelled CI job or systemd (SIGTERM).

Each cancels the run's main task once: its clean-up stops every process and removes
every cgroup before the runner exits (bounded: a process gets 5 s after SIGTERM, then
SIGKILL), and a second signal does not cut that short. The handlers are the event
loop's own, so SIGTERM works however the process was started. It used to be turned into
a SIGINT for asyncio's Ctrl-C handling, which Python does not install when SIGINT is
ignored at start (a background job of a script, `nohup ... &`, a CI job started that
way): there SIGTERM did nothing, and the run went on to its end. A SIGINT or SIGHUP
ignored when plimsoll started stays ignored (nohup asked for that); SIGTERM never is.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

ALWAYS = (signal.SIGTERM,)
UNLESS_IGNORED = (signal.SIGINT, signal.SIGHUP)


def stop_on_signals(task: asyncio.Task[Any]) -> list[signal.Signals]:
    """Cancel `task` on the first stopping signal; the signals it now stops on."""
    loop = asyncio.get_running_loop()
    received: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        if not received:
            received.append(signum)
            task.cancel(f"stopped by {signum.name}")

    listening = [
        signum
        for signum in (*ALWAYS, *UNLESS_IGNORED)
        if signum in ALWAYS or signal.getsignal(signum) is not signal.SIG_IGN
    ]
    for signum in listening:
        loop.add_signal_handler(signum, stop, signum)
    return listening
