"""Warnings about a workload that is valid but may not model what its author meant.

Pure: a `Workload` in, sentences out. `plimsoll validate` prints them and a run
(`plimsoll.run.runner`) puts them in the report's warnings, so a spec that
silently measures less than its author meant says so before anyone reads its
ceiling.

Modeled MCP users make tool calls, re-list tools, reconnect, and view a page
with `users.pageViewFraction` of their calls; the re-lists and reconnects come
from `users`, the calls from `mix`. A mix of nothing but `call` operations leaves
the page to `users.pageViewPath`, whose default is the target's root: a page
view of "/" costs the target what its index costs, not what the page the users
really open costs (a dashboard whose queries read a store, say), so a spec that
leaves the path unset is warned about.
"""

from __future__ import annotations

from plimsoll.api.workload import LoadModel, OperationKind, Protocol, Workload


def workload_warnings(workload: Workload) -> list[str]:
    users = workload.users
    if workload.protocol is not Protocol.MCP or workload.model is not LoadModel.USERS:
        return []
    if users is None or users.page_view_fraction <= 0:
        return []
    only_calls = all(op.kind is OperationKind.CALL for op in workload.mix)
    if only_calls and "page_view_path" not in users.model_fields_set:
        return [
            f"workload.users: {users.page_view_fraction:.0%} of calls come with a page view, "
            "and with only 'call' operations in 'mix' and no users.pageViewPath each one "
            "GETs '/', the target's root, which may cost far less than the page your users "
            "open: set users.pageViewPath to that page (or add 'request' operations to "
            "'mix' for several pages, or set users.pageViewFraction to 0 for none)"
        ]
    return []
