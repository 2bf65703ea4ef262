"""A service's exporter page relayed under the run's labels (`plimsoll.metrics.relay`)."""

from __future__ import annotations

import asyncio

import httpx

from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.metrics.relay import RelayedExporter, relabel

PAGE = """# HELP redis_db_keys Total number of keys by DB
# TYPE redis_db_keys gauge
redis_db_keys{db="db0"} 1234
redis_up 1
weird{msg="a } and \\" inside",namespace="theirs"} 2 1700000000000
"""
OURS = {"namespace": "run-1", "pod": "svc-cache-exporter", "container": "cache-exporter"}


def test_relabel_puts_the_run_labels_first_and_drops_comments() -> None:
    lines = relabel(PAGE, OURS).splitlines()
    ours = 'namespace="run-1",pod="svc-cache-exporter",container="cache-exporter"'
    assert lines == [
        f'redis_db_keys{{{ours},db="db0"}} 1234',
        f"redis_up{{{ours}}} 1",
        # Their own namespace label gives way to ours; a quoted brace does not end the labels.
        f'weird{{{ours},msg="a }} and \\" inside"}} 2 1700000000000',
    ]


async def test_the_exporter_serves_a_relayed_page_after_its_own() -> None:
    async def page(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = PAGE.encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(page, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    exporter = CadvisorExporter()
    exporter.relays.append(
        RelayedExporter(
            "run-1", "svc-cache-exporter", "cache-exporter", f"http://127.0.0.1:{port}/"
        )
    )
    exporter.relays.append(RelayedExporter("run-1", "svc-gone", "gone", "http://127.0.0.1:9/"))
    await exporter.start()
    try:
        async with httpx.AsyncClient() as client:
            text = (await client.get(exporter.url)).text
    finally:
        await exporter.stop()
        server.close()
        await server.wait_closed()
    assert 'redis_db_keys{namespace="run-1",pod="svc-cache-exporter"' in text
    # An exporter that does not answer leaves a comment, not a zero.
    assert "# run-1/svc-gone unreadable: ConnectError" in text
    assert "# TYPE redis_db_keys" not in text
