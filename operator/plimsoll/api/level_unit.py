"""What a level counts, and how a sentence says it: one table for every report and
decision (issue 53: four copies of it had drifted, two without replay's unit).

`CapacityTestSpec.unit` names the unit of a run's levels; `unit_words` says it in full
("requests per second") or short ("requests/s", in a proof's tight lines).
"""

from __future__ import annotations

from plimsoll.api.replay import REPLAY_UNIT

RPS = "rps"
USERS = "users"

# unit -> (in full, short)
_WORDS = {
    RPS: ("requests per second", "requests/s"),
    USERS: ("modeled users", "modeled users"),
    REPLAY_UNIT: ("percent of the logged speed", "% of the logged speed"),
}


def unit_words(unit: str, *, short: bool = False) -> str:
    """`unit` in words; a unit not in the table as it is written."""
    full, brief = _WORDS.get(unit, (unit, unit))
    return brief if short else full
