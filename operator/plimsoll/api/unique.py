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
    return duplicate_entries([(f"{where}[{i}]", name) for i, name in enumerate(names)], what)


def duplicate_entries(entries: Sequence[tuple[str, str]], what: str) -> list[str]:
    """As `duplicate_problems`, over (place, name) pairs that may come from several lists
    (setup and teardown steps share the Job names)."""
    first: dict[str, str] = {}
    problems = []
    for place, name in entries:
        if name in first:
            problems.append(
                f"{place}.name: {name!r} is already the name of {first[name]}: "
                f"give each {what} a name of its own"
            )
        else:
            first[name] = place
    return problems


def raise_duplicates(names: Sequence[str], where: str, what: str) -> None:
    """`duplicate_problems` as the ValueError a pydantic validator raises."""
    problems = duplicate_problems(names, where, what)
    if problems:
        raise ValueError("\n".join(problems))
