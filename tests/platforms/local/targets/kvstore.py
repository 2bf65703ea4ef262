"""A tiny key-value store over TCP, the stand-in for redis-server in the services tests.

One line per command: `SET key value` answers `OK`, `GET key` answers the value
or `NONE`. Each SET is printed with its time, so a test can tell from the log
when the setup step seeded it. Standard library only.

Run: `python kvstore.py PORT`.
"""

from __future__ import annotations

import asyncio
import sys
import time

DATA: dict[str, str] = {}


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while line := await reader.readline():
        words = line.decode().split()
        if len(words) == 3 and words[0] == "SET":
            DATA[words[1]] = words[2]
            print(f"{time.time():.6f} SET {words[1]} {words[2]}", flush=True)
            writer.write(b"OK\n")
        elif len(words) == 2 and words[0] == "GET":
            writer.write(DATA.get(words[1], "NONE").encode() + b"\n")
        else:
            writer.write(b"ERR\n")
        await writer.drain()
    writer.close()


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", int(sys.argv[1]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
