"""The setup step of the services tests: `python kvset.py KEY VALUE` stores one key in
the store at $STORE_ADDR (host:port), as a seeding job fills a database."""

from __future__ import annotations

import os
import socket
import sys

host, port = os.environ["STORE_ADDR"].rsplit(":", 1)
with socket.create_connection((host, int(port)), timeout=5) as sock:
    sock.sendall(f"SET {sys.argv[1]} {sys.argv[2]}\n".encode())
    answer = sock.makefile().readline().strip()
if answer != "OK":
    sys.exit(f"the store answered {answer!r}")
print(f"seeded {sys.argv[1]}")
