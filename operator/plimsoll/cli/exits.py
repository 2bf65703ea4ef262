"""The CLI's exit codes, one meaning each, so scripts and CI can branch on them."""

EXIT_OK = 0  # the ceiling was found (or the command did what it was asked)
EXIT_INCOMPLETE = 1  # the test could not complete; the reason was printed
EXIT_INVALID_SPEC = 2  # the spec is invalid; each mistake was printed with its field
# A ceiling dropped beyond the threshold and outside noise (`compare`, `run --baseline`):
# the code of a run that failed, so a CI gate fails on either without telling them apart.
EXIT_REGRESSED = 1
# A proof run (search.strategy: prove) whose deployment did not hold: a failed gate too.
EXIT_NOT_PROVED = 1
