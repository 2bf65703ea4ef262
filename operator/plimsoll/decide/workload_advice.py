"""Warnings about a workload that is valid but does not model what its seed describes.

Pure: a `Workload` in, sentences out. `plimsoll validate` prints them and a run
puts them in the report's warnings, so a spec that silently measures less than
its author meant says so before anyone reads its ceiling.

The MCP-gateway seed's users make tool calls, re-list tools, reconnect, and view
a dashboard page with 5% of their calls, a page whose queries read the usage
store; the re-lists and reconnects come from `users`, the calls from `mix`. A
mix of nothing but `call` operations leaves the page to `users.pageViewPath`,
whose default is the target's root: a page view of "/" costs the target what
its index costs, not what the seed's dashboard costs, so that is warned about.
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
            "and with only 'call' operations in 'mix' each one GETs '/', the target's root; "
            "the seed's users view a dashboard whose queries read the usage store: set "
            "users.pageViewPath to the page your users open (or add 'request' operations "
            "to 'mix' for several pages, or set users.pageViewFraction to 0 for none)"
        ]
    return []
