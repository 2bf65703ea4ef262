"""kopf's session skips an object nested too deep to decode, and keeps the others.

A real aiohttp server plays the API server: a list with one 5,000-level CapacityTest
among good ones, and a watch stream with one such event between good ones. kopf
decodes a list with `response.json()` and a watch line by line with its own
`iter_jsonlines` and `json.loads` (`kopf._cogs.clients.api`), and so do these tests,
through the operator's session (`plimsoll.controller.kopf_session`). With aiohttp's
plain response both raise RecursionError, which stopped the operator; with the
operator's, the deep object is left out, named, and the rest arrives.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import aiohttp.web
import kopf
import pytest
from kopf._cogs.clients.api import iter_jsonlines

from plimsoll.controller.kopf_session import (
    MAX_OBJECT_DEPTH,
    SkippedObject,
    decode_document,
    skipping_session,
)

LIST_PATH = "/apis/plimsoll.dev/v1alpha1/capacitytests"
# Beyond Python's decoder even with the recursion limit raised for a while, as
# hypothesis does (+2,000); the API server stores up to 10,000.
LEVELS = 5000


def _deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def _object(name: str, namespace: str, template: str = "{}", rv: str = "7") -> str:
    meta = json.dumps(
        {"name": name, "namespace": namespace, "uid": f"uid-{name}"} | {"resourceVersion": rv}
    )
    return '{"metadata": ' + meta + ', "spec": {"target": {"podTemplate": ' + template + "}}}"


LISTING = (
    '{"apiVersion": "plimsoll.dev/v1alpha1", "kind": "CapacityTestList", '
    '"metadata": {"resourceVersion": "9"}, "items": ['
    + _object("good-a", "team-a")
    + ", "
    + _object("deep", "team-x", _deep(LEVELS), rv="8")
    + ", "
    + _object("good-b", "team-b")
    + "]}"
)


def _event(kind: str, obj: str) -> bytes:
    return ('{"type": "' + kind + '", "object": ' + obj + "}\n").encode()


WATCH = [
    _event("ADDED", _object("good-a", "team-a")),
    _event("ADDED", _object("deep", "team-x", _deep(LEVELS), rv="11")),
    _event("MODIFIED", _object("good-b", "team-b", rv="12")),
]


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async def listing(request: aiohttp.web.Request) -> aiohttp.web.StreamResponse:
        if request.query.get("watch") == "true":
            response = aiohttp.web.StreamResponse()
            response.content_type = "application/json"
            await response.prepare(request)
            for line in WATCH:  # split mid-line too, as a real stream may be
                await response.write(line[:50])
                await response.write(line[50:])
            await response.write_eof()
            return response
        return aiohttp.web.Response(text=LISTING, content_type="application/json")

    app = aiohttp.web.Application()
    app.router.add_get(LIST_PATH, listing)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def _watch(session: aiohttp.ClientSession, url: str) -> list[Any]:
    """The watch as kopf's `api.stream` reads it."""
    async with session.get(f"{url}{LIST_PATH}?watch=true") as response:
        return [json.loads(line.decode()) async for line in iter_jsonlines(response.content)]


async def test_without_the_operators_session_kopf_cannot_decode_either(server: str) -> None:
    async with aiohttp.ClientSession() as plain:
        async with plain.get(f"{server}{LIST_PATH}") as response:
            with pytest.raises(RecursionError):
                await response.json()
        with pytest.raises(RecursionError):
            await _watch(plain, server)


async def test_a_list_keeps_every_object_but_the_one_too_deep(server: str) -> None:
    skipped: list[SkippedObject] = []
    info = kopf.ConnectionInfo(server=server)
    async with (
        skipping_session(info, skipped.append) as session,
        session.get(f"{server}{LIST_PATH}") as response,
    ):
        listing = await response.json()
    assert [i["metadata"]["name"] for i in listing["items"]] == ["good-a", "good-b"]
    assert listing["metadata"]["resourceVersion"] == "9"
    (deep,) = skipped
    assert (deep.kind, deep.namespace, deep.name, deep.uid) == (
        "CapacityTest",
        "team-x",
        "deep",
        "uid-deep",
    )
    assert "CapacityTest team-x/deep (uid uid-deep) is nested" in deep.describe()
    assert deep.depth > MAX_OBJECT_DEPTH


async def test_a_watch_turns_the_deep_event_into_a_bookmark_and_goes_on(server: str) -> None:
    skipped: list[SkippedObject] = []
    async with skipping_session(kopf.ConnectionInfo(server=server), skipped.append) as session:
        events = await _watch(session, server)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK", "MODIFIED"]
    assert events[1]["object"]["metadata"] == {"resourceVersion": "11"}
    assert events[2]["object"]["metadata"]["name"] == "good-b"
    assert [(s.namespace, s.name, s.resource_version) for s in skipped] == [
        ("team-x", "deep", "11")
    ]


def test_one_object_too_deep_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="team-x/deep"):
        decode_document(_object("deep", "team-x", _deep(LEVELS)), lambda _: None)


def test_an_ordinary_document_decodes_as_json_does() -> None:
    text = LISTING.replace(_deep(LEVELS), "{}")
    assert decode_document(text, lambda _: None) == json.loads(text)
