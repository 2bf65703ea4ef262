"""The cluster's policy on a spec, beyond the model: one module, two entry points.

Who: the operator's supervisor (a spec past it ends in `SpecValid=False`) and
`plimsoll validate` (unless `--local`), so "valid" there means the operator accepts
it. Why here: the checks need the operator's own pod shapes (`KNOWN_SHAPES`) to size
a run as its namespace quota will. So far it holds the admin's limits
(`plimsoll.decide.run_limits`, issue 52); the other operator-only checks (PromQL
scoping, `target.url` literals) are still applied by the platform when a run starts.
"""

from __future__ import annotations

from plimsoll.api.resource import CapacityTest
from plimsoll.decide.run_budget import run_budget
from plimsoll.decide.run_limits import RunLimits, limit_problems
from plimsoll.kube.manifests import KNOWN_SHAPES


def policy_problems(test: CapacityTest, limits: RunLimits) -> list[str]:
    """Each limit the test's run would go past, naming the limit and its value."""
    every_variant = list(test.spec.variant_specs().values())
    return limit_problems(every_variant, run_budget(every_variant, KNOWN_SHAPES), limits)
