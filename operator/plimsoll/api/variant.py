"""A variant: one configuration of the target, tested side by side with the others.

A comparison needs to change more than an env variable: the target's image,
command, args, env and pod shape; its services (PostgreSQL instead of an
embedded store: add, remove or replace by name); the mock upstream; the
workload (another protocol revision). Whatever a variant does not name it
inherits from the spec. `Variant.target_for` and `Variant.services_for` apply
one variant to the spec's pieces; `CapacityTestSpec.for_variant` composes them
into the spec as the variant sees it, the one place platforms and the runner
read it from.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from plimsoll.api.autoscale import Autoscaler
from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import EnvName, ImageRef
from plimsoll.api.target import NAME_PATTERN, PodShape, Service, Target
from plimsoll.api.unique import raise_duplicates
from plimsoll.api.upstream import Upstream
from plimsoll.api.workload import Workload


class Variant(PlimsollModel):
    """One configuration of the target tested side by side with the others."""

    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.services) || "
                    "(!has(self.addServices) && !has(self.removeServices))",
                    "message": "give either services (the whole list) or "
                    "addServices/removeServices (changes to spec.services), not both",
                },
            ]
        }
    }

    name: str = Field(
        pattern=NAME_PATTERN,
        max_length=30,
        description="The variant's name: lower-case, used in pod names and the report.",
    )
    description: str = Field("", description="What the variant changes, in words, for the report.")
    value: float | None = Field(
        None,
        description="The amount of a feature this variant stands for (e.g. 10 sensors): the "
        "comparison reports the cost per unit of it against the baseline.",
    )
    value_unit: str = Field("", description="What `value` counts, e.g. 'sensors'.")
    image: ImageRef | None = Field(None, description="The target image this variant runs instead.")
    command: list[str] | None = Field(
        None, min_length=1, description="The target command this variant runs instead (local)."
    )
    args: list[str] | None = Field(
        None, description="The target arguments this variant uses instead."
    )
    env: dict[EnvName, str] = Field(default_factory=dict, description="Merged into target.env.")
    resources: PodShape | None = Field(None, description="Replaces target.resources.")
    autoscaler: Autoscaler | None = Field(
        None,
        description="Replaces target.autoscaler: another HPA flown at the same profile (a "
        "flight's recommended HPA is proven as such a variant).",
    )
    services: list[Service] | None = Field(None, description="Replaces spec.services.")
    add_services: list[Service] = Field(
        default_factory=list,
        description="Added to spec.services; one with the name of a spec service replaces it.",
    )
    remove_services: list[str] = Field(
        default_factory=list, description="Names of spec.services this variant runs without."
    )
    upstream: Upstream | None = Field(None, description="Replaces spec.upstream.")
    workload: Workload | None = Field(None, description="Replaces spec.workload.")

    @model_validator(mode="after")
    def _service_changes(self) -> Variant:
        if self.services is not None and (self.add_services or self.remove_services):
            raise ValueError(
                "give either 'services' (the whole list) or "
                "'addServices'/'removeServices' (changes to spec.services), not both"
            )
        added = [s.name for s in self.add_services]
        raise_duplicates(added, "addServices", "service")
        if self.services is not None:
            raise_duplicates([s.name for s in self.services], "services", "service")
        both = sorted(set(added) & set(self.remove_services))
        if both:
            raise ValueError(
                f"{both} is both removed and added; to replace a "
                "service, list it in addServices only"
            )
        return self

    def target_for(self, target: Target) -> Target:
        """`target` with this variant's overrides; validated again, so a variant that makes
        the target unrunnable (a command on a target.url) is an error naming the fields."""
        if target.url is not None and (self.image or self.command or self.resources):
            raise ValueError(
                "image, command or resources are set, but target.url drives a service "
                "that already runs: nothing is started to change"
            )
        changes: dict[str, object] = {"env": {**target.env, **self.env}}
        if self.image is not None:
            changes["image"] = self.image
        if self.command is not None:
            changes["command"] = self.command
        if self.args is not None:
            changes["args"] = self.args
        if self.resources is not None:
            changes["resources"] = self.resources
        if self.autoscaler is not None:
            changes["autoscaler"] = self.autoscaler
        return Target.model_validate({**dict(target), **changes})

    def services_for(self, services: list[Service]) -> list[Service]:
        """The services this variant runs: its own list, or the spec's with its changes."""
        if self.services is not None:
            return list(self.services)
        known = {s.name for s in services}
        unknown = sorted(set(self.remove_services) - known)
        if unknown:
            raise ValueError(
                f"removeServices names {unknown}, which spec.services "
                f"does not list ({sorted(known)})"
            )
        replaced = {s.name for s in self.add_services}
        kept = [
            s for s in services if s.name not in self.remove_services and s.name not in replaced
        ]
        return kept + list(self.add_services)
