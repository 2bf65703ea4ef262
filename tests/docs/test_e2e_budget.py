"""Every end-to-end module has its line in the budget table of docs/explanation/testing.md.

A new e2e test comes with its held time and what it proves (issue 50): the table is how
the suite's time stays visible. Each module that `tests/conftest.py` sends to `make e2e`
(END_TO_END, a folder entry standing for its test modules) must have a row naming it;
a module whose every test went to `make truth` needs none.
"""

from __future__ import annotations

import re

from tests.conftest import END_TO_END, TRUTH
from tests.localrun import ROOT

TABLE_ROW = re.compile(r"^\| `(tests/[\w/]+\.py)` \| \d+ \| \d+ s \|", re.M)


def _e2e_modules() -> set[str]:
    modules = set()
    for entry in END_TO_END:
        where = entry.split("::")[0]
        if where.endswith("/"):
            modules |= {
                p.relative_to(ROOT / "tests").as_posix()
                for p in (ROOT / "tests" / where).glob("test_*.py")
            }
        else:
            modules.add(where)
    whole_truth = {entry for entry in TRUTH if "::" not in entry}
    return modules - whole_truth


def test_every_e2e_module_has_its_row_with_a_held_time() -> None:
    page = (ROOT / "docs" / "explanation" / "testing.md").read_text()
    rows = set(TABLE_ROW.findall(page))
    missing = sorted(f"tests/{m}" for m in _e2e_modules() if f"tests/{m}" not in rows)
    assert missing == [], f"add their rows (held time, what it proves) to testing.md: {missing}"
