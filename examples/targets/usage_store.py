"""Where the example MCP gateway writes one usage row per tool call: SQLite or PostgreSQL.

The gateway seed ships in two storage shapes, and so does `mini_gateway.py`:

- `GATEWAY_DATABASE_URL=postgresql://user@host:port/db`: PostgreSQL (what more
  than one replica needs), through a few psycopg connections, one transaction
  per call;
- else `USAGE_STORE=sqlite`: an embedded SQLite file in the run's work dir
  (`$PLIMSOLL_WORKDIR/usage.sqlite3`, or `USAGE_SQLITE_PATH`), written on the
  event loop as a single-file embedded database is;
- else no store at all (the quickstart).

Both keep the same table, indexed by client, so the dashboard's per-user
summary reads the seeded history (`usage_seed.py` writes it) as a real
gateway would. Rows the seed wrote are marked, so a teardown removes only them.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS usage ("
    " user_ip TEXT NOT NULL, session TEXT NOT NULL, tool TEXT NOT NULL,"
    " bytes INTEGER NOT NULL, ms REAL NOT NULL, ok BOOLEAN NOT NULL,"
    " at DOUBLE PRECISION NOT NULL, seeded BOOLEAN NOT NULL DEFAULT FALSE)",
    "CREATE INDEX IF NOT EXISTS usage_by_user ON usage (user_ip, at)",
]
INSERT = (
    "INSERT INTO usage (user_ip, session, tool, bytes, ms, ok, at, seeded) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
SUMMARY = "SELECT count(*), coalesce(sum(bytes), 0) FROM usage WHERE user_ip = ?"


@dataclass
class Usage:
    user_ip: str
    session: str
    tool: str
    bytes: int
    ms: float
    ok: bool
    at: float
    seeded: bool = False

    def row(self) -> tuple[object, ...]:
        return (
            self.user_ip,
            self.session,
            self.tool,
            self.bytes,
            self.ms,
            self.ok,
            self.at,
            self.seeded,
        )


class UsageStore(Protocol):
    name: str

    async def record(self, usage: Usage) -> None: ...

    async def summary(self, user_ip: str) -> tuple[int, int]: ...

    async def close(self) -> None: ...


class NoStore:
    name = "none"

    async def record(self, usage: Usage) -> None:
        return None

    async def summary(self, user_ip: str) -> tuple[int, int]:
        return 0, 0

    async def close(self) -> None:
        return None


def sqlite_path() -> Path:
    explicit = os.environ.get("USAGE_SQLITE_PATH")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("PLIMSOLL_WORKDIR", ".")) / "usage.sqlite3"


def open_sqlite(path: Path) -> sqlite3.Connection:
    # WAL lets the seed and teardown steps write beside the running gateway.
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    for statement in SCHEMA:
        db.execute(statement)
    return db


class SqliteStore:
    """One connection, used on the event loop: the embedded shape's cost lands in the
    gateway's own CPU, which is what a users-per-pod figure should include."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.db = open_sqlite(path)

    async def record(self, usage: Usage) -> None:
        self.db.execute(INSERT, usage.row())

    async def summary(self, user_ip: str) -> tuple[int, int]:
        count, total = self.db.execute(SUMMARY, (user_ip,)).fetchone()
        return int(count), int(total)

    async def close(self) -> None:
        self.db.close()


class PostgresStore:
    """A few autocommit connections handed out through a queue: one round trip and one
    transaction per call, as a gateway's connection pool gives."""

    name = "postgresql"

    def __init__(self, connections: list[Any]) -> None:
        self.idle: asyncio.Queue[Any] = asyncio.Queue()
        for connection in connections:
            self.idle.put_nowait(connection)
        self.all = connections

    @classmethod
    async def connect(cls, url: str, size: int) -> PostgresStore:
        import psycopg  # only this shape needs the driver

        connections = [await psycopg.AsyncConnection.connect(url, autocommit=True)]
        for statement in SCHEMA:
            await connections[0].execute(statement)
        for _ in range(size - 1):
            connections.append(await psycopg.AsyncConnection.connect(url, autocommit=True))
        return cls(connections)

    async def _run(self, query: str, params: tuple[object, ...]) -> tuple[object, ...] | None:
        connection = await self.idle.get()
        try:
            cursor = await connection.execute(query.replace("?", "%s"), params)
            return await cursor.fetchone() if cursor.description else None
        finally:
            self.idle.put_nowait(connection)

    async def record(self, usage: Usage) -> None:
        await self._run(INSERT, usage.row())

    async def summary(self, user_ip: str) -> tuple[int, int]:
        found = await self._run(SUMMARY, (user_ip,))
        assert found is not None
        return int(str(found[0])), int(str(found[1]))

    async def close(self) -> None:
        for connection in self.all:
            await connection.close()


async def open_store() -> UsageStore:
    """The store the environment names (see the module's docstring)."""
    url = os.environ.get("GATEWAY_DATABASE_URL")
    if url:
        return await PostgresStore.connect(url, int(os.environ.get("GATEWAY_DB_POOL", "4")))
    if os.environ.get("USAGE_STORE", "none") == "sqlite":
        return SqliteStore(sqlite_path())
    return NoStore()
