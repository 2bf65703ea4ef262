"""JSON nesting depth measured without recursion, and a decode that cuts what is too deep.

Who: `plimsoll.controller.kopf_session`, which decodes what the API server sends kopf.
Why: CPython's `json` decoder recurses once per level and raises RecursionError near
1,000 levels, while the API server stores objects nested up to 10,000. One such object
in a list or a watch stream made kopf's watcher fail, and the operator exit, for every
tenant. Here the depth is counted by scanning brackets outside strings (a regular
expression, no recursion, so any depth is measured), and `shallow_loads` decodes a
document with every container deeper than a bound replaced by `CUT`, so the rest of it
(the other objects of a list, an object's name and namespace) can still be read.
Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A JSON string (escapes included) or a bracket: brackets inside strings are skipped.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_OPEN = frozenset("[{")
_CLOSE = frozenset("]}")
CUT = "\u0000plimsoll: nested too deep"  # no Kubernetes field holds a NUL
_CUT_JSON = json.dumps(CUT)


def nesting_depth(text: str) -> int:
    """How many containers deep `text` nests (`{}` is 1, `{"a": []}` is 2)."""
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif token in _CLOSE:
            depth -= 1
    return deepest


def deeper_than(text: str, limit: int) -> int | None:
    """The depth of `text` when it is more than `limit`, else None. A document with no
    more than `limit` brackets in all cannot be deeper, and is not scanned."""
    if text.count("{") + text.count("[") <= limit:
        return None
    depth = nesting_depth(text)
    return depth if depth > limit else None


def shallow_loads(text: str, limit: int) -> Any:
    """`text` decoded, with every container nested deeper than `limit` replaced by `CUT`."""
    pieces: list[str] = []
    depth, kept_from, cut_from = 0, 0, -1
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            if depth == limit + 1:
                pieces.append(text[kept_from : match.start()])
                cut_from = match.start()
        elif token in _CLOSE:
            if depth == limit + 1 and cut_from >= 0:
                pieces.append(_CUT_JSON)
                kept_from, cut_from = match.end(), -1
            depth -= 1
    pieces.append(text[kept_from:])
    return json.loads("".join(pieces))


def holds_cut(value: Any) -> bool:
    """True when a value from `shallow_loads` lost a part (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if item == CUT:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
