"""Does this cluster enforce NetworkPolicy? The chart's `helm test` asks with this module.

Plimsoll's run namespaces rely on NetworkPolicy: the generators' control port admits
only the operator, a run's pods admit only each other, and the operator's pod admits
only its metrics port. A cluster whose network plugin ignores NetworkPolicy (some do,
silently) leaves all of that open. The chart's test hook
(`charts/plimsoll/templates/tests/network-policy.yaml`) starts a listener on two
ports behind a policy that admits the probe on ALLOWED and nothing on DENIED, then
runs the probe:

    python -m plimsoll.cli.network_probe listen 8080 8081
    python -m plimsoll.cli.network_probe check HOST 8080 8081

`check` first reaches the allowed port, retrying while the listener starts (so a
listener that is not up yet is never read as a policy at work), then tries the
denied one: connected means the policy was not enforced (exit 1, saying what that
leaves open); refused or timed out means it was (exit 0). The allowed port never
answering is inconclusive (exit 2). Standard library only: it runs in the operator's
image, which is all the hook has.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from collections.abc import Callable

ENFORCED, NOT_ENFORCED, INCONCLUSIVE = 0, 1, 2
CONNECT_TIMEOUT = 3.0  # a dropped SYN (how most plugins enforce) costs this long
READY_WAIT = 90.0  # the listener's pod may still be pulling its image
LISTEN_LIMIT = 900.0  # the listener exits after this long (the hook deletes it sooner)

NOT_ENFORCED_TEXT = (
    "NetworkPolicy is NOT enforced on this cluster: a pod reached a port its policy "
    "denies. Plimsoll's run namespaces rely on it (the generators' control port admits "
    "only the operator; a run's pods admit only each other), so on this cluster any pod "
    "can reach them. Install a network plugin that enforces NetworkPolicy (Calico, "
    "Cilium, ...) before running tests for several teams."
)


def reachable(host: str, port: int, timeout: float = CONNECT_TIMEOUT) -> bool:
    """True when a TCP connection to host:port is accepted within `timeout`."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:  # refused, reset, unreachable, timed out, no such name (yet)
        return False


def check(
    host: str,
    allowed: int,
    denied: int,
    *,
    ready_wait: float = READY_WAIT,
    connect: Callable[[str, int], bool] = reachable,
) -> tuple[int, str]:
    """The exit code and the sentence for one probe of host's two ports."""
    deadline = time.monotonic() + ready_wait
    while not connect(host, allowed):
        if time.monotonic() > deadline:
            return INCONCLUSIVE, (
                f"inconclusive: the probe's own listener at {host}:{allowed}, which its "
                f"policy admits, did not answer in {ready_wait:g} s (is its pod running?)"
            )
        time.sleep(1.0)
    if connect(host, denied):
        return NOT_ENFORCED, NOT_ENFORCED_TEXT
    return ENFORCED, (
        f"NetworkPolicy is enforced: {host}:{allowed} (admitted) answered and "
        f"{host}:{denied} (denied by the same policy) did not"
    )


def listen(ports: list[int], limit: float = LISTEN_LIMIT) -> None:
    """Accept and close connections on every port of `ports` for at most `limit` s."""
    servers = []
    for port in ports:
        server = socket.create_server(("", port), reuse_port=False)
        server.settimeout(0.2)
        servers.append(server)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for server in servers:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            connection.close()
    for server in servers:
        server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plimsoll.cli.network_probe")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("listen", help="accept connections on the given ports")
    serve.add_argument("ports", type=int, nargs="+")
    serve.add_argument("--seconds", type=float, default=LISTEN_LIMIT)
    probe = commands.add_parser("check", help="the allowed port must answer, the denied not")
    probe.add_argument("host")
    probe.add_argument("allowed", type=int)
    probe.add_argument("denied", type=int)
    probe.add_argument("--ready-wait", type=float, default=READY_WAIT)
    args = parser.parse_args(argv)
    if args.command == "listen":
        listen(args.ports, args.seconds)
        return 0
    code, sentence = check(args.host, args.allowed, args.denied, ready_wait=args.ready_wait)
    print(sentence, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
