"""Names that must be unique in their list, each duplicate reported with both places.

Operations label latencies, routes and MCP tools are looked up by name, variants,
services and setup steps become pod and Job names: two with one name would make one
silently shadow the other, or clash in the cluster. The validators of the sections
holding those lists (workload, upstream, target, spec, variant) call
`duplicate_problems`; each line starts with the field it is about, so the formatter
(`plimsoll.api.resource.describe_validation_error`) shows its full path.
"""

from __future__ import annotations

from collections.abc import Sequence


def duplicate_problems(names: Sequence[str], where: str, what: str) -> list[str]:
    """'mix[2].name: 'get' is already the name of mix[0]: give each operation its own'."""
    first: dict[str, int] = {}
    problems = []
    for index, name in enumerate(names):
        if name in first:
            problems.append(
                f"{where}[{index}].name: {name!r} is already the name of {where}[{first[name]}]: "
                f"give each {what} a name of its own"
            )
        else:
            first[name] = index
    return problems


def raise_duplicates(names: Sequence[str], where: str, what: str) -> None:
    """`duplicate_problems` as the ValueError a pydantic validator raises."""
    problems = duplicate_problems(names, where, what)
    if problems:
        raise ValueError("\n".join(problems))
