"""`make examples`' check of a report: a ceiling needs a failing level above it."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def run_examples() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader(
        "run_examples", str(ROOT / "scripts/run-examples")
    )
    spec = importlib.util.spec_from_loader("run_examples", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name while the class is made.
    sys.modules["run_examples"] = module
    loader.exec_module(module)
    return module


def test_every_level_passed_is_no_answer_and_a_pass_below_a_failure_is_one(tmp_path: Path) -> None:
    check = run_examples().ceilings_found
    # The LLM-proxy example passed every level, 5 to 320 users, and the check accepted it.
    above = {"variant": "proxy", "level": 320, "high": None, "stopReason": "every level passed"}
    assert check({"ceilings": [above]}, tmp_path) == [
        "proxy: at least 320, no level failed above it (every level passed): no ceiling"
    ]
    found = {"variant": "proxy", "level": 160, "high": 320, "complete": True}
    assert check({"ceilings": [found]}, tmp_path) == []
