"""kind_of: a body's apiVersion and kind find the one entry of plimsoll.kube.kinds.

The entries' plurals and scopes are checked against the real API server's
discovery in tests/controller/test_apiserver_kinds.py.
"""

from __future__ import annotations

import pytest

from plimsoll.kube.kinds import CAPACITY_TESTS, JOBS, KINDS, kind_of


def test_a_body_finds_its_kind() -> None:
    assert kind_of({"apiVersion": "batch/v1", "kind": "Job"}) is JOBS
    test = {"apiVersion": "plimsoll.dev/v1alpha1", "kind": "CapacityTest", "metadata": {}}
    assert kind_of(test) is CAPACITY_TESTS
    for kind in KINDS:
        assert kind_of({"apiVersion": kind.api_version, "kind": kind.kind}) is kind


def test_a_kind_not_listed_is_refused() -> None:
    with pytest.raises(KeyError):
        kind_of({"apiVersion": "apps/v1", "kind": "StatefulSet"})
