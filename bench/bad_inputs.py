"""How the input boundary answers the bad-input corpus, and how long the property holds.

Runs every case of `tests/api/bad_input_corpus.py` through `plimsoll validate` (the CLI
as a user runs it, on a real file) and counts the answers: clear (refused with exit 2
and a line naming the field and the fix, or a near miss accepted), unclear, accepted
(an invalid file passed) and crashed (a traceback or another exit code). Then it runs
the boundary's property test (specs drawn from the CRD's schema and mutated, through
`load_capacity_test` and the operator's load-and-plan path) for `--examples` examples
each and reports how many ran. The reference measured in the same run is the valid
base document: the time to validate a bad file against the time to validate a good one.
Ends with one JSON line: {"cases", "clear", "unclear", "accepted", "crashed",
"property_examples", ...}.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.api.bad_input_corpus import BASE, Case, all_cases, dump, judge  # noqa: E402


def _corpus() -> tuple[collections.Counter[str], float, list[str]]:
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    started = time.perf_counter()
    cases = all_cases()
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            verdict, output = judge(case, Path(folder))
            counts[verdict] += 1
            if verdict != "clear":
                failures.append(f"{case.id} ({case.cls}): {verdict}: {output.strip()[:300]}")
    return counts, (time.perf_counter() - started) / len(cases), failures


def _reference(repeats: int) -> float:
    """Seconds per `plimsoll validate` of the valid base document."""
    case = Case("base", "valid", dump(BASE), "valid", "", "")
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        for _ in range(repeats):
            assert judge(case, Path(folder))[0] == "clear"
    return (time.perf_counter() - started) / repeats


def _property(examples: int) -> tuple[int, float]:
    """Run the two property tests with `examples` each; the examples that ran."""
    os.environ["PLIMSOLL_PROPERTY_EXAMPLES"] = str(examples)
    from tests.api import test_boundary_property as prop

    ran = 0
    started = time.perf_counter()
    for test in (
        prop.test_load_capacity_test_validates_or_names_fields_that_exist,
        prop.test_the_operator_load_and_plan_path_never_raises,
    ):
        inner = test.hypothesis.inner_test

        def counted(*args: object, _inner: object = inner, **kwargs: object) -> None:
            nonlocal ran
            ran += 1
            _inner(*args, **kwargs)  # type: ignore[operator]

        test.hypothesis.inner_test = counted
        test()
    return ran, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300, help="per property test")
    args = parser.parse_args()
    counts, per_case, failures = _corpus()
    reference = _reference(50)
    ran, seconds = _property(args.examples)
    cases = sum(counts.values())
    for line in failures:
        print(line)
    print(f"corpus: {cases} cases: {dict(counts)}")
    print(
        f"validate: {per_case * 1000:.1f} ms a bad file vs {reference * 1000:.1f} ms the valid "
        f"base (ratio {per_case / reference:.2f})"
    )
    print(
        f"property: {ran} examples in {seconds:.1f} s ({seconds / max(ran, 1) * 1000:.0f} ms each)"
    )
    print(
        json.dumps(
            {
                "cases": cases,
                "clear": counts["clear"],
                "unclear": counts["unclear"],
                "accepted": counts["accepted"],
                "crashed": counts["crashed"],
                "property_examples": ran,
                "ms_per_bad_file": round(per_case * 1000, 2),
                "ms_per_valid_file": round(reference * 1000, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
