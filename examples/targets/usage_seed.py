"""Seed, count and remove the example gateway's usage history: its setup and teardown steps.

The gateway seed's auto-seed pass fills the store before load starts (the seed
says 500k usage rows), so the dashboard's per-user reads and the index the
gateway writes into have a production-like size. It writes to the store the
gateway uses (`usage_store.py`: PostgreSQL when `GATEWAY_DATABASE_URL` is set,
else the SQLite file), marking its rows so the teardown removes only them:

    python usage_seed.py seed --rows 500000 [--users 20000]
    python usage_seed.py count        # prints: usage rows: N seeded, M written by calls
    python usage_seed.py unseed       # removes the seeded rows, then prints the count

PostgreSQL is seeded with COPY, SQLite in one transaction: 500k rows take
seconds either way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

from usage_store import SCHEMA, Usage, open_sqlite, sqlite_path

COUNT = "SELECT count(*) FILTER (WHERE seeded), count(*) FILTER (WHERE NOT seeded) FROM usage"
TOOLS = ["search_docs", "read_file", "run_query"]


def history(rows: int, users: int, seed: int = 18) -> list[Usage]:
    """`rows` past calls over the last 30 days from `users` clients (10.x.y.z addresses)."""
    rng = random.Random(seed)
    start = time.time() - 30 * 86400
    out = []
    for _ in range(rows):
        user = rng.randrange(users)
        ip = f"10.{user >> 16 & 255}.{user >> 8 & 255}.{user & 255}"
        out.append(
            Usage(
                user_ip=ip,
                session=f"seed-{user}",
                tool=rng.choice(TOOLS),
                bytes=rng.choice([4096] * 49 + [1 << 20]),
                ms=rng.lognormvariate(7.1, 1.4),  # median about 1.2 s, as the seed's tools
                ok=rng.random() > 0.08,
                at=start + rng.random() * 30 * 86400,
                seeded=True,
            )
        )
    return out


async def postgres(url: str, action: str, rows: list[Usage]) -> tuple[int, int]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
        for statement in SCHEMA:
            await db.execute(statement)
        if action == "seed":
            async with db.cursor() as cursor:
                columns = "user_ip, session, tool, bytes, ms, ok, at, seeded"
                async with cursor.copy(f"COPY usage ({columns}) FROM STDIN") as copy:
                    for usage in rows:
                        await copy.write_row(usage.row())
            await db.execute("ANALYZE usage")
        elif action == "unseed":
            await db.execute("DELETE FROM usage WHERE seeded")
        cursor = await db.execute(COUNT)
        found = await cursor.fetchone()
        assert found is not None
        return int(found[0]), int(found[1])


def sqlite(action: str, rows: list[Usage]) -> tuple[int, int]:
    db = open_sqlite(sqlite_path())
    try:
        if action == "seed":
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO usage (user_ip, session, tool, bytes, ms, ok, at, seeded) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (usage.row() for usage in rows),
            )
            db.execute("COMMIT")
            db.execute("ANALYZE")
        elif action == "unseed":
            db.execute("DELETE FROM usage WHERE seeded")
        seeded, written = db.execute(COUNT).fetchone()
        return int(seeded or 0), int(written or 0)
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=["seed", "count", "unseed"])
    parser.add_argument("--rows", type=int, default=500_000, help="usage rows to seed")
    parser.add_argument("--users", type=int, default=20_000, help="clients they belong to")
    args = parser.parse_args()
    if args.rows < 0 or args.users < 1:
        parser.error("--rows must be ≥ 0 and --users ≥ 1")
    rows = history(args.rows, args.users) if args.action == "seed" else []
    started = time.monotonic()
    url = os.environ.get("GATEWAY_DATABASE_URL")
    if url:
        where = "postgresql"
        seeded, written = asyncio.run(postgres(url, args.action, rows))
    else:
        where = f"sqlite {sqlite_path()}"
        seeded, written = sqlite(args.action, rows)
    took = time.monotonic() - started
    print(
        f"{args.action} ({where}, {took:.1f} s): usage rows: {seeded} seeded, "
        f"{written} written by calls",
        flush=True,
    )


if __name__ == "__main__":
    main()
