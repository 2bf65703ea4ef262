"""The CLI's exit codes, one meaning each, so scripts and CI can branch on them.

`plimsoll run`, `plimsoll compare` and `kubectl plimsoll wait` share them: a pipeline
tells "the service got worse" (99) from "the run broke" (1), as k6 keeps its threshold
failures on 99. `EXIT_CODES_HELP` is the table every such command's `--help` ends with.
"""

from plimsoll.decide.pipeline_gate import Answer

EXIT_OK = 0  # answered, and within every bar (or the command did what it was asked)
EXIT_INCOMPLETE = 1  # the test could not complete (or the command failed); the reason was printed
EXIT_INVALID_SPEC = 2  # the spec or the command line is invalid; each mistake was printed
# Answered, but the answer is no: a ceiling below --fail-below, a ceiling that dropped
# beyond the threshold and outside noise (`compare`, `run --baseline`), a proof run
# (search.strategy: prove) whose deployment did not hold.
EXIT_REFUSED = 99
EXIT_REGRESSED = EXIT_REFUSED
EXIT_NOT_PROVED = EXIT_REFUSED

_BY_ANSWER = {
    Answer.WITHIN: EXIT_OK,
    Answer.REFUSED: EXIT_REFUSED,
    Answer.INCOMPLETE: EXIT_INCOMPLETE,
}


def exit_code(answer: Answer) -> int:
    return _BY_ANSWER[answer]


# Click keeps a paragraph that opens with \b as written (no re-wrapping).
EXIT_CODES_HELP = """\b
Exit codes:
  0   answered, and within the bar
  1   could not complete (the reason is printed)
  2   invalid spec or command line
  99  answered, but the bar, the regression gate or the proof says no"""
