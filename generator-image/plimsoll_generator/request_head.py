"""The last check before a request head reaches the socket: nothing a CR wrote may split it.

Every request the generator sends is written by `client.build_request` (and the
WebSocket upgrade by `websocket.py`); both ask `head_problem` first. The model already
refuses CR, LF, NUL, non-token header names and non-ASCII values
(`plimsoll.api.bounded`), so this only fires when something reached the generator
without the model: a TrialRequest built by hand, a bug, a replayed log line. Defence in
depth: a header injection would let whoever writes the CR smuggle a second request to
the target, or forge headers the target trusts. The patterns are the model's own, so
the two checks cannot drift apart.
"""

from __future__ import annotations

import re

from plimsoll.api.bounded import HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN

_TOKEN = re.compile(HEADER_NAME_PATTERN)
_VALUE = re.compile(HEADER_VALUE_PATTERN)
# A request target: visible ASCII, no space (it would end the target), no CR/LF.
_TARGET = re.compile(r"[\x21-\x7e]+")
# A Host header: a name or address and a port; brackets for IPv6.
_HOST = re.compile(r"[A-Za-z0-9.\-_:\[\]%]+")


class RequestRefusedError(ValueError):
    """A request head the generator will not write; the message names the part and why."""


def head_problem(method: str, target: str, host: str, headers: dict[str, str]) -> str | None:
    """What would make this request head unsafe to write; None when it is safe."""
    if not _TOKEN.fullmatch(method):
        return f"method {method!r} is not a token (letters, digits and -!#$%&'*+.^_`|~)"
    if not _TARGET.fullmatch(target):
        return f"path {target!r} holds a space, a control character or non-ASCII"
    if not _HOST.fullmatch(host):
        return f"host {host!r} is not a host name or address"
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            return f"header name {name!r} is not a token (letters, digits and -!#$%&'*+.^_`|~)"
        if not _VALUE.fullmatch(value):
            return (
                f"header {name}'s value {value!r} holds CR, LF, another control character "
                "or non-ASCII"
            )
    return None


def check_head(method: str, target: str, host: str, headers: dict[str, str]) -> None:
    """`RequestRefusedError` when `head_problem` finds something; before a byte is written."""
    problem = head_problem(method, target, host, headers)
    if problem is not None:
        raise RequestRefusedError(f"request not sent: {problem}")
