"""`python -m plimsoll_generator --host 127.0.0.1 --port P [--processes N]`.

Starts the control API (see `control.py`) on uvloop. `--processes` defaults to
one worker per core available to this process. Trial calls must carry the token in
`PLIMSOLL_CONTROL_TOKEN`; without one set, every trial call is refused, and it says so.
"""

from __future__ import annotations

import argparse
import os
import sys

import uvloop

from plimsoll.api.trial import CONTROL_TOKEN_ENV
from plimsoll_generator.control import serve


def main() -> None:
    parser = argparse.ArgumentParser(prog="plimsoll_generator", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument(
        "--processes",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="worker processes, one per core (default: the cores this process may use)",
    )
    args = parser.parse_args()
    token = os.environ.get(CONTROL_TOKEN_ENV) or None
    if token is None:
        print(
            f"plimsoll_generator: {CONTROL_TOKEN_ENV} is not set: every trial and streams "
            "call will be refused (401); set it to the token the runner sends",
            file=sys.stderr,
        )
    uvloop.run(serve(args.host, args.port, args.processes, token))


if __name__ == "__main__":
    main()
