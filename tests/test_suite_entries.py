"""Every entry of tests/conftest.py's OVERLAPPING, END_TO_END, TRUTH and LONGEST_FIRST names
something that exists: a folder, a module, or a test in that module. An entry left behind by a
renamed or merged test would match nothing and silently move no test at all."""

from __future__ import annotations

import re

import pytest

from tests.conftest import END_TO_END, LONGEST_FIRST, OVERLAPPING, TRUTH
from tests.localrun import ROOT

ENTRIES = [
    (suite, entry)
    for suite, entries in (
        ("OVERLAPPING", OVERLAPPING),
        ("END_TO_END", END_TO_END),
        ("TRUTH", TRUTH),
        ("LONGEST_FIRST", LONGEST_FIRST),
    )
    for entry in entries
]


@pytest.mark.parametrize(("suite", "entry"), ENTRIES, ids=[f"{s}:{e}" for s, e in ENTRIES])
def test_the_entry_names_a_folder_a_module_or_a_test(suite: str, entry: str) -> None:
    path, _, test = entry.partition("::")
    where = ROOT / "tests" / path
    if path.endswith("/"):
        assert where.is_dir(), f"{suite}: no folder tests/{path}"
        return
    # A module may be named by a prefix of its path too (an entry is a path prefix).
    modules = [where] if where.is_file() else sorted(where.parent.glob(f"{where.name}*.py"))
    assert modules, f"{suite}: nothing under tests/ starts with {path}"
    if test:
        source = where.read_text()
        assert re.search(rf"^(async )?def {re.escape(test)}", source, re.MULTILINE), (
            f"{suite}: tests/{path} has no test starting with {test}"
        )
