"""The generator's hot path, compiled by hatch_build.py from its own Python source.

These hold that this install runs the compiled modules (the README's set-up builds
them), that they are the extension types the `.pxd` files declare, that the build
tells a stale compiled module from a fresh one, and that the same source still runs
as plain Python, answer for answer, where nothing was compiled.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hatch_build import HOT_PATH, PACKAGE, compiled_name, stale_modules
from tests.localrun import ROOT


@pytest.mark.parametrize("module", HOT_PATH)
def test_this_install_runs_the_compiled_module(module: str) -> None:
    loaded = importlib.import_module(f"plimsoll_generator.{module}")
    assert loaded.__file__ == str(PACKAGE / compiled_name(module))


def test_the_declared_classes_are_extension_types_with_c_fields() -> None:
    from plimsoll_generator.client import Exchange
    from plimsoll_generator.open_model import ClosedLoop, TimedExchange

    exchange = Exchange()
    with pytest.raises(AttributeError):
        exchange.undeclared = 1  # type: ignore[attr-defined]  # a C struct has no room for it
    with pytest.raises(TypeError):
        exchange.status = "200"  # type: ignore[assignment]  # a C int
    assert issubclass(TimedExchange, Exchange)
    # A Python subclass may still override a compiled (cpdef) step.
    assert "on_done" in vars(ClosedLoop)


def _touch_newer(path: Path, than: Path) -> None:
    stat = than.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_an_edited_source_or_declaration_makes_its_module_stale(tmp_path: Path) -> None:
    package = tmp_path / "plimsoll_generator"
    shutil.copytree(PACKAGE, package)
    assert stale_modules(package) == []
    _touch_newer(package / "recorder.pxd", package / compiled_name("recorder"))
    _touch_newer(package / "client.py", package / compiled_name("client"))
    assert stale_modules(package) == ["client", "recorder"]
    (package / compiled_name("context")).unlink()
    assert stale_modules(package) == ["client", "recorder", "context"]


def test_a_pure_python_install_has_nothing_stale(tmp_path: Path) -> None:
    package = tmp_path / "plimsoll_generator"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("*.so"))
    assert stale_modules(package) == []


# A closed loop over a fake transport, the same requests and answers compiled and not:
# what it records must not depend on whether Cython compiled the source.
_CLOSED_LOOP = """
import asyncio, json
import uvloop
from plimsoll.api.trial import TrialRequest
from plimsoll_generator.client import Connection
from plimsoll_generator.context import TrialContext
from plimsoll_generator.open_model import ClosedLoop
from plimsoll_generator.recorder import Recorder

ANSWERS = [
    b"HTTP/1.1 200 OK\\r\\nServer-Timing: upstream;dur=0.5\\r\\nContent-Length: 2\\r\\n\\r\\nok",
    b"HTTP/1.1 503 Busy\\r\\nContent-Length: 0\\r\\n\\r\\n",
    b"HTTP/1.1 201 Created\\r\\nContent-Length: 0\\r\\n\\r\\n",
]

class Transport:
    def __init__(self):
        self.sent = []
    def write(self, data):
        self.sent.append(data)
    def abort(self):
        pass

async def main():
    request = TrialRequest.model_validate({"level": 1, "duration": 1000, "warmUp": 0,
        "targetUrl": "http://127.0.0.1:9", "workload": {"model": "users",
        "mix": [{"name": "hello", "path": "/hello", "expectStatus": [200, 201]}]}})
    recorder = Recorder(["hello"])
    ctx = TrialContext.create(request, recorder)
    connection = Connection(ctx.pool)
    transport = Transport()
    connection.connection_made(transport)
    ctx.pool.connections = 1
    ctx.pool.idle.append(connection)
    ClosedLoop(ctx, 1).start()
    for index in range(300):
        connection.data_received(ANSWERS[index % 3])
    stats = recorder.ops["hello"]
    print(json.dumps({
        "module": type(connection).__module__, "compiled": not hasattr(connection, "__dict__"),
        "sent": ctx.sent, "intended": ctx.intended, "in_flight": ctx.in_flight,
        "ok": stats.ok, "shed": stats.shed, "latencies": stats.latency.count(),
        "added": stats.added.count(), "requests": len(transport.sent),
        "bytes_in": ctx.pool.bytes_in, "bytes_out": ctx.pool.bytes_out,
    }))
    ctx.pool.close()

uvloop.run(main())
"""


def _closed_loop(package_root: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    done = subprocess.run(
        [sys.executable, "-c", _CLOSED_LOOP],
        capture_output=True, text=True, timeout=60, check=True, cwd=ROOT, env=env,
    )  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_same_source_records_the_same_as_plain_python(tmp_path: Path) -> None:
    pure = tmp_path / "pure"
    shutil.copytree(PACKAGE, pure / "plimsoll_generator", ignore=shutil.ignore_patterns("*.so"))
    compiled = _closed_loop(PACKAGE.parent)
    python = _closed_loop(pure)
    assert compiled.pop("compiled") is True
    assert python.pop("compiled") is False
    assert compiled == python
    # 300 answers: 200 expected (200 and 201), 100 shed (503), each followed by the next
    # request, and the 100 answers that carried Server-Timing give an added latency.
    assert python["ok"] == 200
    assert python["shed"] == 100
    assert python["latencies"] == 300
    assert python["added"] == 100
    assert python["requests"] == 301
