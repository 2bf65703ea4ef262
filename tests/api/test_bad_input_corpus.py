"""Every case of the bad-input corpus gets a clear answer from `plimsoll validate`.

The corpus (`tests.api.bad_input_corpus`) holds one case per mistake of each class the
README's "Bad input" section lists; a case is clear when the file is refused with exit
2 and a line that starts with the field path and holds the words of the fix (or, for
the near misses, accepted with exit 0). `bench/bad_inputs.py` prints the same counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.bad_input_corpus import Case, all_cases, judge

CASES = all_cases()


def test_the_corpus_holds_at_least_300_cases_with_distinct_ids() -> None:
    assert len(CASES) >= 300
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_case_is_answered_clearly(tmp_path: Path, case: Case) -> None:
    verdict, output = judge(case, tmp_path)
    assert verdict == "clear", f"{case.cls}: {verdict}\n{output}"


def _patterns(node: object) -> set[str]:
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(_patterns(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(v) for v in node))
    return set()


def test_every_pattern_of_the_crd_is_said_in_words() -> None:
    from plimsoll.api.crd import openapi_schema
    from plimsoll.api.wording import PATTERN_MEANINGS

    assert _patterns(openapi_schema()) - set(PATTERN_MEANINGS) == set()
