"""Command line of the mock: `python -m plimsoll_mock --config FILE --port P --host H`.

The local runner starts it this way and waits for `GET /healthz` to answer 200;
the image's entrypoint runs the same command with `--host 0.0.0.0`. Keep the
flags stable: other components depend on them. Exit code 2 means the
configuration was refused, with the offending field named on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import uvloop

from plimsoll_mock.config import ConfigError, load
from plimsoll_mock.server import serve


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m plimsoll_mock", description="Plimsoll's mock upstream server."
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="JSON of plimsoll.api.upstream.Upstream "
        "(default: the PLIMSOLL_MOCK_CONFIG environment variable)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, help="port (overrides the configuration's port)")
    parser.add_argument("--seed", type=int, help="seed of the random draws (reproducible runs)")
    parser.add_argument(
        "--floor-port",
        type=int,
        metavar="PORT",
        help="serve the direct-call floor on this port, from a process of its own "
        "(plimsoll_mock.floor), so the mock's own load does not slow it",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="on SIGTERM, how long held calls may still finish",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = load(args.config, os.environ)
    except ConfigError as exc:
        print(f"plimsoll-mock: {exc}", file=sys.stderr)
        return 2
    port = args.port if args.port is not None else config.port
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(
                serve(
                    config,
                    args.host,
                    port,
                    grace=args.shutdown_grace,
                    seed=args.seed,
                    floor_port=args.floor_port,
                )
            )
    except (OSError, ValueError) as exc:  # port in use, unreadable TLS files
        print(f"plimsoll-mock: cannot start: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
