"""The run's headline ceiling: the baseline variant's, the one the others are compared with
(`spec.baseline`, else the first variant's)."""

from __future__ import annotations

from plimsoll.api.run_record import RunRecord
from plimsoll.api.status import Ceiling


def headline_ceiling(record: RunRecord) -> Ceiling | None:
    baseline = record.spec.baseline_name
    chosen = [c for c in record.ceilings if c.variant == baseline] or record.ceilings[:1]
    return chosen[0] if chosen else None
