"""The pod-proxy relay's request path, parsed and checked, and the API server path built
from its parts (pure, no I/O).

Who: `plimsoll.kube.pod_proxy`. Why: the relay forwards with the operator's own
credentials, so the path it builds must name exactly one pod's port and a path on that
pod: a `..` or an encoded slash (`..%2F..%2F`) in the part after the port would
otherwise climb out of `/proxy/` to any API path (`/api/v1/secrets`). The raw path is
split on `/` before anything is decoded; the namespace and pod must be DNS names, the
port a number, and each further segment is decoded once and refused when it is `.`,
`..`, holds a slash, a backslash or a control character; then every part is quoted
again, so what reaches the API server is only what was checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_NAMESPACE = re.compile(rf"^{_LABEL}$")
_POD = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_SEGMENT_SAFE = "-._~!$&'()*+,;=:@"  # RFC 3986 pchar, unreserved and sub-delims


class ProxyPathError(ValueError):
    """A path the relay refuses; the message says which part and why."""


@dataclass(frozen=True)
class ProxyTarget:
    namespace: str
    pod: str
    port: int
    segments: tuple[str, ...]  # decoded, each checked

    def api_path(self) -> str:
        """`/api/v1/namespaces/NS/pods/POD:PORT/proxy/REST`, every part quoted again."""
        rest = "/".join(quote(segment, safe=_SEGMENT_SAFE) for segment in self.segments)
        return f"/api/v1/namespaces/{self.namespace}/pods/{self.pod}:{self.port}/proxy/{rest}"


def _segment(raw: str, index: int, last: bool) -> str:
    if "\\" in raw or re.search("%(2f|5c)", raw, re.IGNORECASE):
        raise ProxyPathError(f"path segment {index} holds an encoded slash or a backslash")
    try:
        decoded = unquote(raw, errors="strict")
    except UnicodeDecodeError as exc:
        raise ProxyPathError(f"path segment {index} is not UTF-8") from exc
    if decoded in (".", ".."):
        raise ProxyPathError(f"path segment {index} is {decoded!r}: no relative paths")
    if decoded == "" and not last:
        raise ProxyPathError(f"path segment {index} is empty")
    if "/" in decoded or any(ord(c) < 0x20 or ord(c) == 0x7F for c in decoded):
        raise ProxyPathError(f"path segment {index} holds a slash or a control character")
    return decoded


def parse_proxy_path(raw_path: str) -> ProxyTarget:
    """`/NS/POD/PORT/REST...` as the relay received it (raw: not decoded, no query)."""
    if not raw_path.startswith("/"):
        raise ProxyPathError("the path must start with '/'")
    parts = raw_path[1:].split("/")
    if len(parts) < 3:
        raise ProxyPathError("the path must be /NAMESPACE/POD/PORT/...")
    namespace, pod, port_text, *rest = parts
    if not _NAMESPACE.match(namespace):
        raise ProxyPathError(f"{namespace!r} is not a namespace name")
    if len(pod) > 253 or not _POD.match(pod):
        raise ProxyPathError(f"{pod!r} is not a pod name")
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ProxyPathError(f"{port_text!r} is not a port number")
    segments = tuple(_segment(raw, index, index == len(rest) - 1) for index, raw in enumerate(rest))
    return ProxyTarget(namespace, pod, int(port_text), segments)
