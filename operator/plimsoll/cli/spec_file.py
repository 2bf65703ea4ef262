"""Reading CapacityTest files: YAML (one or several documents) into validated models.

Shared by `plimsoll validate`, `plimsoll run` and the tests, so a file is judged
the same way wherever it is read. YAML syntax errors, and files too large, not
UTF-8, with characters YAML refuses, duplicate keys, too deep or alias bombs
(`plimsoll.cli.safe_yaml`), become `SpecError` lines with the position, like every
other mistake. A document of another kind (an Argo CD Application beside the tests)
is skipped, and said to be; one of Plimsoll's group with a wrong kind is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plimsoll.api.resource import GROUP, KIND, CapacityTest, SpecError, load_capacity_test
from plimsoll.cli.safe_yaml import load_documents, read_text


@dataclass
class SpecFile:
    """What a file holds: its CapacityTests, and a note for each document skipped."""

    tests: list[CapacityTest]
    skipped: list[str] = field(default_factory=list)


def _foreign(document: Any) -> str | None:
    """'kind Application (argoproj.io/v1alpha1)' for a document of another API group that
    names its kind, else None: those are read (and judged) as CapacityTests."""
    if not isinstance(document, dict):
        return None
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if not isinstance(kind, str) or kind == KIND or not isinstance(api_version, str):
        return None
    if api_version.split("/", 1)[0] == GROUP or kind.lower() == KIND.lower():
        return None  # ours, misspelt: an error that names the kind found
    return f"kind {kind} ({api_version})"


def read_spec_file(path: Path) -> SpecFile:
    """Every CapacityTest in the file, or `SpecError` naming each mistake of each one."""
    documents = load_documents(path, read_text(path))
    tests: list[CapacityTest] = []
    skipped: list[str] = []
    problems: list[str] = []
    for index, document in enumerate(documents):
        prefix = f"document {index + 1}: " if len(documents) > 1 else ""
        other = _foreign(document)
        if other is not None:
            skipped.append(f"document {index + 1} is {other}, not a CapacityTest: skipped")
            continue
        try:
            tests.append(load_capacity_test(document))
        except SpecError as exc:
            problems.extend(prefix + line for line in exc.problems)
    if problems:
        raise SpecError(problems)
    if not tests:
        found = f": {'; '.join(skipped)}" if skipped else " (the file is empty)"
        raise SpecError([f"{path}: holds no CapacityTest (kind: {KIND}){found}"])
    return SpecFile(tests, skipped)


def read_capacity_tests(path: Path) -> list[CapacityTest]:
    """Every CapacityTest in the file; other kinds (e.g. an Argo CD Application) are skipped."""
    return read_spec_file(path).tests
