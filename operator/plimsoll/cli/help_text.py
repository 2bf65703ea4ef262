"""How every command's `--help` ends: the exit codes where they mean more than 0 or not,
then two or three examples, as click prints them (`\\b` keeps a paragraph as written).

Both typer apps (`plimsoll`, `kubectl plimsoll`) print plain click help: rich's boxed
help cuts flag names at 80 columns, click's wraps the descriptions and never cuts.
"""

from __future__ import annotations

from plimsoll.cli.exits import EXIT_CODES_HELP


def epilog(*examples: str, exit_codes: bool = False) -> str:
    """The examples under an "Examples:" heading, after the exit codes when asked."""
    shown = "\b\nExamples:\n" + "\n".join(f"  {example}" for example in examples)
    return f"{EXIT_CODES_HELP}\n\n{shown}" if exit_codes else shown
