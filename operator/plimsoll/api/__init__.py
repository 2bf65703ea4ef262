"""Plimsoll's API: pydantic models of everything that crosses a process boundary.

The CapacityTest spec and status, the generators' trial request and result, and
the mock upstream's configuration. The CRD is generated from these models
(`plimsoll crd`), so the cluster and the code cannot disagree.
"""

from plimsoll.api.resource import (
    API_VERSION,
    GROUP,
    KIND,
    PLURAL,
    VERSION,
    CapacityTest,
    SpecError,
    load_capacity_test,
)
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.api.step import LimitedBy, StepRecord, StepResult, Verdict
from plimsoll.api.trial import TrialRequest, TrialResult
from plimsoll.api.upstream import Upstream
from plimsoll.api.workload import Workload

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "PLURAL",
    "VERSION",
    "CapacityTest",
    "CapacityTestSpec",
    "CapacityTestStatus",
    "LimitedBy",
    "Phase",
    "SpecError",
    "StepRecord",
    "StepResult",
    "TrialRequest",
    "TrialResult",
    "Upstream",
    "Verdict",
    "Workload",
    "load_capacity_test",
]
