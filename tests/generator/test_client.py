"""The client's response reading: the lean parser's Server-Timing lookup, and lean and
keeping exchanges taking turns on one keep-alive connection (real sockets, loopback)."""

from __future__ import annotations

import asyncio

from plimsoll_generator.client import Exchange, Pool, server_timing_of

HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"


def test_server_timing_is_found_whatever_the_case_of_its_name() -> None:
    for name in (b"server-timing", b"Server-Timing", b"SERVER-TIMING"):
        raw = HEAD + name + b": upstream;dur=1.5 \r\n\r\nok"
        assert server_timing_of(raw) == b"upstream;dur=1.5"


def test_several_server_timing_lines_are_joined_and_the_body_is_not_read() -> None:
    raw = HEAD + b"Server-Timing: db;dur=2\r\nserver-timing: upstream;dur=3\r\n\r\nok"
    assert server_timing_of(raw) == b"db;dur=2,upstream;dur=3"
    body_only = HEAD + b"\r\n" + b"\r\nserver-timing: upstream;dur=9\r\n"
    assert server_timing_of(body_only) is None
    assert server_timing_of(HEAD + b"X-Other: 1\r\n\r\nok") is None


def test_a_head_in_a_large_chunk_is_still_searched() -> None:
    raw = HEAD + b"X-Pad: " + b"p" * 5000 + b"\r\nServer-Timing: upstream;dur=4\r\n\r\n"
    assert server_timing_of(raw + b"b" * 10_000) == b"upstream;dur=4"


async def _split_server(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, finished: asyncio.Event
) -> None:
    # Each answer's head comes in two writes, split inside the Server-Timing line.
    n = 0
    while True:
        try:
            await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            break
        n += 1
        body = b"answer %d" % n
        writer.write(b"HTTP/1.1 200 OK\r\nX-Seq: %d\r\nServer-Tim" % n)
        await writer.drain()
        await asyncio.sleep(0.01)
        writer.write(b"ing: upstream;dur=%d\r\nContent-Length: %d\r\n\r\n%s" % (n, len(body), body))
        await writer.drain()
    writer.close()
    await writer.wait_closed()
    finished.set()  # the test waits for this, so no transport outlives it


async def test_lean_and_keeping_exchanges_take_turns_on_one_connection() -> None:
    finished = asyncio.Event()
    server = await asyncio.start_server(lambda r, w: _split_server(r, w, finished), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = Pool("127.0.0.1", port)
    request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    try:
        answers = []
        for keep in (False, True, False, True):
            ex = Exchange(keep_body=keep, keep_headers=keep)
            assert ex.lean is not keep
            answers.append(await pool.fetch(request, ex))
        assert pool.connections == 1  # one keep-alive connection served all four
        for n, ex in enumerate(answers, start=1):
            assert (ex.status, ex.error) == (200, None)
            assert ex.server_timing == b"upstream;dur=%d" % n
        for n in (2, 4):
            assert answers[n - 1].header(b"x-seq") == b"%d" % n
            assert answers[n - 1].text() == b"answer %d" % n
        assert answers[0].headers is None
        assert answers[0].body is None
    finally:
        pool.close()
        await asyncio.wait_for(finished.wait(), 5)
        server.close()
        await server.wait_closed()
