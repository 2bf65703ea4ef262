"""decide/ reads no clock: what import-linter's purity contract cannot see (datetime is
imported for its types, so only the calls that read the time can be refused)."""

from __future__ import annotations

import ast
from pathlib import Path

import plimsoll.decide

CLOCK_READS = {"now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp"}


def clock_reads(source: str) -> list[str]:
    """Each `X.now()`-like call in `source`, as `line: call`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCK_READS
        ):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}()")
    return found


def test_the_scan_finds_a_clock_read() -> None:
    assert clock_reads("from datetime import datetime\nx = datetime.now(UTC)\n") == [
        "2: datetime.now()"
    ]
    assert clock_reads("def f(now: datetime) -> datetime:\n    return now\n") == []


def test_no_decision_module_reads_the_clock() -> None:
    package = Path(plimsoll.decide.__file__).parent
    reads = {
        str(path.relative_to(package)): clock_reads(path.read_text(encoding="utf-8"))
        for path in sorted(package.rglob("*.py"))
    }
    assert {name: found for name, found in reads.items() if found} == {}
