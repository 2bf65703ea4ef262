"""Request bodies of declared sizes: a weighted size mix and JSON padded to a size.

An operation's `bodySizes` (`plimsoll.api.workload.BodySize`) is turned into a
`SizeMix` once per trial; every request draws a size by weight. Bodies are JSON
objects of exactly the drawn number of bytes, built once per size and shared
(sizes are bounded to 4 MiB and at most 16 per operation, so the memory is too).
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
from functools import lru_cache

from plimsoll.api.workload import BodySize

_SKELETON = b'{"pad":""}'


@lru_cache(maxsize=64)
def padded_json(size: int) -> bytes:
    """A JSON object of exactly `size` bytes: {"pad":"xx..."} (plain x's below its
    skeleton's 10 bytes, which no JSON object fits in)."""
    if size < len(_SKELETON):
        return b"x" * size
    return _SKELETON[:-2] + b"x" * (size - len(_SKELETON)) + b'"}'


def padded_arguments(size: int) -> object:
    """Tool arguments whose JSON (compact, as the generator sends it) is `size` bytes."""
    return json.loads(padded_json(max(size, len(_SKELETON))))


class SizeMix:
    """Draws body sizes by weight."""

    __slots__ = ("cumulative", "sizes", "total")

    def __init__(self, sizes: list[BodySize]) -> None:
        self.sizes = [s.size for s in sizes]
        self.cumulative = list(itertools.accumulate(s.weight for s in sizes))
        self.total = self.cumulative[-1]

    def draw(self, rng: random.Random) -> int:
        if len(self.sizes) == 1:
            return self.sizes[0]
        index = bisect.bisect_left(self.cumulative, rng.random() * self.total)
        return self.sizes[min(index, len(self.sizes) - 1)]
