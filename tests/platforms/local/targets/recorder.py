"""A target for the local platform tests that records what it was given.

At start it writes the environment variables named in $RECORD_KEYS to
$RECORD_DIR/env-PID.json. `GET /work` answers 200 only when the store at
$STORE_ADDR (if set) holds `seeded`, so a trial passes only after the setup step
seeded it; `GET /healthz` answers 200. Standard library only.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

STORE = os.environ.get("STORE_ADDR")
local = threading.local()


def seeded() -> bool:
    if STORE is None:
        return True
    if not hasattr(local, "store"):
        host, port = STORE.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=5)
        local.store = (sock, sock.makefile())
    sock, lines = local.store
    sock.sendall(b"GET seeded\n")
    return bool(lines.readline().strip() == "yes")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path == "/healthz":
            status = 200
        elif self.path.startswith("/work"):
            status = 200 if seeded() else 503
        else:
            status = 404
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    keys = os.environ.get("RECORD_KEYS", "").split(",")
    record = {k: os.environ.get(k) for k in keys if k}
    Path(os.environ["RECORD_DIR"], f"env-{os.getpid()}.json").write_text(json.dumps(record))
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
