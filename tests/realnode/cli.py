"""`scripts/real-node up|down PLANE_DIR NODE_DIR`: the real node from a shell.

A developer's way to the same node the end-to-end test starts (`node.py`); `up`
prints the node's facts as JSON (the Prometheus URL, the bridge's API server).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from tests.realnode.node import NodeError, RealNode


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("up", "down"):
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    command, plane, home = argv[0], Path(argv[1]).resolve(), Path(argv[2]).resolve()
    node = RealNode(plane, plane / "kubeconfig", home)
    if command == "down":
        node.down()
        return 0
    try:
        facts = node.up([Path(a) for a in argv[3:]])
    except NodeError as exc:
        print(f"real-node: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(asdict(facts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
