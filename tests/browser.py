"""Headless Chromium (Debian's `chromium`) driven over the DevTools protocol, for page tests.

The browser is started as a user would start it headless, with a fresh profile, and
spoken to over `--remote-debugging-pipe`: the protocol's JSON messages, each ended by
a NUL byte, on file descriptors 3 (to the browser) and 4 (from it). A pipe needs no
port, no websocket and no client library, and no other process can attach. `visit`
opens one page and hands back what a person could not see: every console error and
uncaught exception, every request the page made, a value read from its DOM, and a
screenshot. `--host-resolver-rules` makes any name lookup fail at once, so even a page
that tried to reach the network would send nothing off this machine; the test still
sees the attempt in `requests`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
]


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None (make debian installs it)."""
    if shutil.which(CHROMIUM) is None:
        return "no Debian chromium at /usr/bin/chromium (make debian installs it)"
    return None


@dataclass
class Visit:
    """What one page did while it was open."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    value: Any = None
    screenshot: bytes = b""

    @property
    def foreign_requests(self) -> list[str]:
        """Requests for anything but the page itself (an inline data: URL stays inside it)."""
        return [u for u in self.requests if u != self.url and not u.startswith(("data:", "blob:"))]


class Browser:
    """One Chromium process; `with Browser() as b: b.visit(path, ...)`."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="plimsoll-chromium-")
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()

        def pipes_at_3_and_4() -> None:  # in the child, before exec
            a, b = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(a, 3)  # dup2 leaves the copies inheritable, unlike os.pipe's ends
            os.dup2(b, 4)

        self._process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # dbus and GPU chatter; failures show as a dead pipe
            preexec_fn=pipes_at_3_and_4,  # the pipes at the numbers Chromium reads
            close_fds=False,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._out = to_browser_write
        self._in = from_browser_read
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _read(self, deadline: float) -> dict[str, Any] | None:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                return None
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit {self._process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            answer = self._read(deadline)
            if answer is None:
                raise TimeoutError(f"no answer to {method} in 60 s")
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self._events.append(answer)

    def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (event := self._read(deadline)) is not None:
            self._events.append(event)

    def _evaluate(self, session: str, expression: str) -> Any:
        answer = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session,
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression[:60]}…: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def visit(
        self, path: Path, ready: str, read: str, timeout: float = 30, max_height: int = 4000
    ) -> Visit:
        """Open `path`, wait until the JavaScript `ready` is true, then return `read`'s
        value, the console errors, the requests made and a screenshot of the page's top
        (at most `max_height` pixels)."""
        self._events.clear()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable", session=session)
        metrics = {"width": self.width, "height": self.height, "deviceScaleFactor": 1}
        self.call("Emulation.setDeviceMetricsOverride", {**metrics, "mobile": False}, session)
        url = path.resolve().as_uri()
        self.call("Page.navigate", {"url": url}, session)
        deadline = time.monotonic() + timeout
        while not self._evaluate(session, f"document.readyState === 'complete' && ({ready})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path}: not ready after {timeout} s ({ready})")
            self._drain(0.2)
        self._drain(0.5)  # late console messages and requests
        visit = Visit(url=url, value=self._evaluate(session, read))
        height = min(max_height, int(self._evaluate(session, "document.body.scrollHeight")))
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {**metrics, "height": height, "mobile": False},
            session,
        )
        self._drain(0.5)  # plotly re-lays its responsive charts out to the new size
        shot = self.call("Page.captureScreenshot", {"format": "png"}, session)
        visit.screenshot = base64.b64decode(shot["data"])
        self._drain(0.2)
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            params = event.get("params", {})
            method = event.get("method")
            if method == "Network.requestWillBeSent":
                visit.requests.append(params["request"]["url"])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                visit.console_errors.append(
                    " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
                )
            elif method == "Runtime.exceptionThrown":
                visit.console_errors.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                visit.console_errors.append(params["entry"].get("text", ""))
        self.call("Target.closeTarget", {"targetId": target})
        return visit


def main() -> None:
    """`python -m tests.browser PAGE.html SHOT.png`: report.html's screenshot for the docs
    (scripts/docs-pictures), after the browser test's own checks on the page."""
    import sys

    from tests.report.test_html_browser import READ, READY, assert_every_chart_drew

    page, shot = Path(sys.argv[1]), Path(sys.argv[2])
    with Browser() as browser:
        visit = browser.visit(page, READY, READ, max_height=2400)
    assert_every_chart_drew(visit)
    shot.write_bytes(visit.screenshot)


if __name__ == "__main__":
    main()
