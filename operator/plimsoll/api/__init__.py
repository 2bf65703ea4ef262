"""Plimsoll's API: pydantic models of everything that crosses a process boundary.

The CapacityTest spec and status, the generators' trial request and result, and
the mock upstream's configuration. The CRD is generated from these models
(`plimsoll crd`), so the cluster and the code cannot disagree.
"""

# The entry point for user input; the models are imported from their own modules.
from plimsoll.api.resource import SpecError, load_capacity_test

__all__ = ["SpecError", "load_capacity_test"]
