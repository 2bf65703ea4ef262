"""Reading CapacityTest files: YAML (one or several documents) into validated models.

Shared by `plimsoll validate`, `plimsoll run` and the tests, so a file is judged
the same way wherever it is read. YAML syntax errors, and files too large, not
UTF-8, with duplicate keys, too deep or alias bombs (`plimsoll.cli.safeyaml`),
become `SpecError` lines with the position, like every other mistake.
"""

from __future__ import annotations

from pathlib import Path

from plimsoll.api.resource import CapacityTest, SpecError, load_capacity_test
from plimsoll.cli.safeyaml import load_documents, read_text


def read_capacity_tests(path: Path) -> list[CapacityTest]:
    """Every CapacityTest in the file; other kinds (e.g. an Argo CD Application) are skipped."""
    documents = load_documents(path, read_text(path))
    tests = []
    problems: list[str] = []
    for index, document in enumerate(documents):
        if isinstance(document, dict) and document.get("kind") not in (None, "CapacityTest"):
            continue
        try:
            tests.append(load_capacity_test(document))
        except SpecError as exc:
            prefix = f"document {index + 1}: " if len(documents) > 1 else ""
            problems.extend(prefix + line for line in exc.problems)
    if problems:
        raise SpecError(problems)
    if not tests:
        raise SpecError([f"{path}: holds no CapacityTest (kind: CapacityTest)"])
    return tests
