"""Flame graphs of the generator's and the mock's hot paths, with py-spy.

Run: `python bench/profile.py generator|mock OUT.svg` (OUT.txt: collapsed stacks
instead, one line per stack with its sample count; py-spy from PyPI on PATH or
beside this interpreter). Same set-up as bench/generator.py and bench/mock.py:
the server on core 0, the client on core 1. `generator`: py-spy records the
generator while it runs a closed-loop trial (64 connections) against nginx;
`mock`: py-spy records the mock while wrk drives its small-body route. The
flame graphs checked in under bench/profiles/ came from here; they show where
a request's CPU goes before and after a change to the hot path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import generator as gen_bench
import mock as mock_bench  # noqa: UP026 (bench/mock.py, not unittest's)

SECONDS = 8


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        sys.exit("py-spy is not installed: pip install py-spy")
    return found


def record(pid: int, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            py_spy(),
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(SECONDS),
            "--rate",
            "250",
            "--output",
            str(out),
            "--format",
            # OUT.txt: collapsed stacks (one line per stack, its sample count), to read or diff.
            "raw" if out.suffix == ".txt" else "flamegraph",
            "--nonblocking",
        ]
    )


def profile_generator(out: Path) -> None:
    gen_bench.raise_nofile()
    workdir = Path(tempfile.mkdtemp(prefix="plimsoll-profile-"))
    nginx_port, gen_port = gen_bench.free_port(), gen_bench.free_port()
    nginx = gen_bench.start_nginx(workdir, nginx_port)
    gen = gen_bench.start_generator(gen_port)
    try:
        spy = record(gen.pid, out)
        result = gen_bench.trial(
            f"http://127.0.0.1:{gen_port}",
            {
                "level": gen_bench.CONNECTIONS,
                "duration": SECONDS,
                "warmUp": 1,
                "targetUrl": f"http://127.0.0.1:{nginx_port}",
                "workload": {"model": "users", "mix": [{"name": "hello", "path": "/"}]},
            },
        )
        spy.wait(timeout=60)
        print(f"generator: {result.cpu_seconds / result.sent * 1e6:.2f} us CPU/req (under py-spy)")
    finally:
        for proc in (gen, nginx):
            proc.terminate()
            proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


def profile_mock(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="plimsoll-profile-") as tmpdir:
        size = len(mock_bench.BODY)
        mock = mock_bench.Mock(
            {"routes": [{"name": "small", "path": "/small", "sizes": [{"bytes": str(size)}]}]},
            Path(tmpdir),
        )
        try:
            spy = record(mock.proc.pid, out)
            print(f"mock: {mock_bench.wrk(mock.port):,.0f} req/s (under py-spy)")
            spy.wait(timeout=60)
        finally:
            mock.stop()


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("generator", "mock"):
        sys.exit("usage: python bench/profile.py generator|mock OUT.svg")
    out = Path(sys.argv[2])
    (profile_generator if sys.argv[1] == "generator" else profile_mock)(out)


if __name__ == "__main__":
    main()
