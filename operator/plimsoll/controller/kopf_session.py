"""kopf's HTTP session, whose decoding skips an object too deep to decode instead of failing.

Who: the login handler (`plimsoll.controller.handlers.login`) hands kopf this session
(`kopf.AiohttpSession`, kopf's own way to bring a session), built with the same TLS,
credentials and proxy kopf would use.

Why: kopf decodes a list with `response.json()` and each watch event with
`json.loads(line)`. Python's decoder raises RecursionError near 1,000 levels of
nesting; the API server stores up to 10,000. One CapacityTest nested that deep (a
`podTemplate` before the CRD typed it, or `metadata.managedFields`, which any client
may write) made kopf's watcher fail on the initial list and the operator exit, again
on every restart: no tenant's test was served. Here, through aiohttp's own extension
point (`response_class`):

- a list drops each object nested more than `MAX_OBJECT_DEPTH` levels and decodes the rest;
- a watch event of such an object becomes a BOOKMARK carrying its resourceVersion
  (kopf skips bookmarks, and the watch moves past it);
- each skipped object is passed to `on_skip` (logged, and an Event on a
  CapacityTest), named by kind, namespace and name, read from a shallow decode.

No real Kubernetes object nests anywhere near `MAX_OBJECT_DEPTH`; it leaves room
below Python's limit for kopf's own recursion over an object (deepcopy, diffs).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, cast

import aiohttp

from plimsoll.shared.json_depth import deeper_than, holds_cut, shallow_loads

log = logging.getLogger(__name__)

MAX_OBJECT_DEPTH = 200
_IDENTITY_DEPTH = 8  # enough to read apiVersion, kind and metadata's plain fields


@dataclass(frozen=True)
class SkippedObject:
    """An object kopf was not given, and why."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    resource_version: str
    depth: int

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return (
            f"{self.kind} {where} (uid {self.uid or '?'}) is nested {self.depth} levels deep, "
            f"more than {MAX_OBJECT_DEPTH}: the operator cannot decode it and skips it "
            "(other objects are served); fix or delete it"
        )


OnSkip = Callable[[SkippedObject], None]


def _identity(obj: Any, depth: int) -> SkippedObject:
    body: dict[str, Any] = obj if isinstance(obj, dict) else {}
    found = body.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    return SkippedObject(
        api_version=text(body.get("apiVersion")),
        kind=text(body.get("kind")) or "object",
        namespace=text(meta.get("namespace")),
        name=text(meta.get("name")) or "?",
        uid=text(meta.get("uid")),
        resource_version=text(meta.get("resourceVersion")),
        depth=depth,
    )


def decode_document(text: str, on_skip: OnSkip) -> Any:
    """A list or an object from the API server, without the objects too deep to decode.

    A list (`items`, two levels below the top) loses only its deep items; a single
    object too deep raises `ValueError` naming it (kopf reports the failed request)."""
    depth = deeper_than(text, MAX_OBJECT_DEPTH)
    if depth is None:
        return json.loads(text)
    shallow = shallow_loads(text, MAX_OBJECT_DEPTH + 2)
    items = shallow.get("items") if isinstance(shallow, dict) else None
    if not isinstance(items, list):
        skipped = _identity(shallow_loads(text, _IDENTITY_DEPTH), depth)
        raise ValueError(skipped.describe())
    kept = []
    for item in items:
        if holds_cut(item):
            skipped = _identity(item, depth - 2)  # the deepest item's depth
            if isinstance(shallow.get("kind"), str) and not skipped.api_version:
                skipped = _with_list_kind(skipped, shallow)
            on_skip(skipped)
        else:
            kept.append(item)
    shallow["items"] = kept
    return shallow


def _with_list_kind(skipped: SkippedObject, listing: dict[str, Any]) -> SkippedObject:
    """Items of a list carry no kind: the list's (`CapacityTestList`) names it."""
    kind = str(listing.get("kind", "")).removesuffix("List") or skipped.kind
    return SkippedObject(
        api_version=str(listing.get("apiVersion", "")),
        kind=kind,
        namespace=skipped.namespace,
        name=skipped.name,
        uid=skipped.uid,
        resource_version=skipped.resource_version,
        depth=skipped.depth,
    )


def decode_watch_line(line: bytes, on_skip: OnSkip) -> bytes:
    """One watch event's line as kopf should read it: unchanged, or a BOOKMARK standing
    for an object too deep to decode (the watch moves past its resourceVersion)."""
    if line.count(b"{") + line.count(b"[") <= MAX_OBJECT_DEPTH:
        return line  # cannot be too deep: the common case costs two byte counts
    text = line.decode("utf-8", errors="replace")
    depth = deeper_than(text, MAX_OBJECT_DEPTH + 1)
    if depth is None:
        return line
    event = shallow_loads(text, _IDENTITY_DEPTH + 1)
    obj = event.get("object") if isinstance(event, dict) else None
    skipped = _identity(obj, depth - 1)
    on_skip(skipped)
    bookmark = {
        "type": "BOOKMARK",
        "object": {
            "apiVersion": skipped.api_version,
            "kind": skipped.kind,
            "metadata": {"resourceVersion": skipped.resource_version},
        },
    }
    return json.dumps(bookmark).encode()


class _WatchContent:
    """A watch response's body as kopf reads it (`iter_chunked`), one line at a time
    through `decode_watch_line`; everything else is the real stream's."""

    def __init__(self, content: aiohttp.StreamReader, on_skip: OnSkip) -> None:
        self._content = content
        self._on_skip = on_skip

    def __getattr__(self, name: str) -> Any:
        return getattr(self._content, name)

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        buffer = b""
        async for data in self._content.iter_chunked(n):
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            if lines:
                yield b"".join(decode_watch_line(line, self._on_skip) + b"\n" for line in lines)
        if buffer:
            yield decode_watch_line(buffer, self._on_skip)


class SkippingResponse(aiohttp.ClientResponse):
    """aiohttp's response, decoding as `decode_document` and `decode_watch_line` do.
    `on_skip` is set on the subclass `skipping_session` makes for each session."""

    on_skip: OnSkip = staticmethod(lambda skipped: log.warning("%s", skipped.describe()))

    async def start(self, connection: Any) -> SkippingResponse:
        await super().start(connection)
        if self.url.query.get("watch") in ("true", "1"):
            self.content = cast(aiohttp.StreamReader, _WatchContent(self.content, self.on_skip))
        return self

    async def json(
        self,
        *,
        encoding: str | None = None,
        loads: Callable[[str], Any] = json.loads,
        content_type: str | None = "application/json",
    ) -> Any:
        def decode(text: str) -> Any:
            return decode_document(text, self.on_skip)

        return await super().json(encoding=encoding, loads=decode, content_type=content_type)


def skipping_session(info: Any, on_skip: OnSkip) -> aiohttp.ClientSession:
    """The session kopf would build from a `kopf.ConnectionInfo` (TLS, headers, proxy),
    with `SkippingResponse`. Call it on the event loop that will use it."""
    response_class = type(
        "SkippingResponseOfSession", (SkippingResponse,), {"on_skip": staticmethod(on_skip)}
    )
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, ssl=info.as_ssl_context()),
        headers=info.as_http_headers(),
        proxy=info.proxy_url,
        trust_env=info.trust_env,
        response_class=response_class,
    )
