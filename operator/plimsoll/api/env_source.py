"""`valueFrom`: an environment variable whose value stays in a Secret or ConfigMap.

`target.valueFrom` and `services[].valueFrom` map a variable name to one key of a
Secret or ConfigMap **in the CapacityTest's namespace**, so credentials stay out of
the CR, its status and its report: only the reference (object and key) is ever
written anywhere. Only `secretKeyRef` and `configMapKeyRef` exist; a field reference
or resource reference would describe the run's own pod, not the user's data.

The object must carry the label `plimsoll.dev/runs-may-read: "true"` (`CONSENT_LABEL`):
whoever may create a CapacityTest may not be allowed to read the namespace's Secrets,
and without the label the operator would hand them any Secret there, in a pod running
an image of their choice. The operator (Kubernetes only) copies the key into the run
namespace's Secret `run-env`, which the pods read; `plimsoll run` refuses it.

A map of its own beside `env` (not `env: {NAME: {valueFrom: ...}}`): a Kubernetes CRD
schema cannot let one map's values be either a string or an object.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.trial import CONTROL_TOKEN_SECRET

CONSENT_LABEL = "plimsoll.dev/runs-may-read"


CONTROL_TOKEN_REFUSAL = (
    f"may not name the run's control-token Secret ({CONTROL_TOKEN_SECRET}*): whoever "
    "holds it can drive the generators; name a Secret of your own"
)


def reads_control_token(secret_name: str) -> bool:
    """Whether a Secret name is a run's control token (each variant's has a suffix)."""
    return secret_name.startswith(CONTROL_TOKEN_SECRET)


class KeyRef(PlimsollModel):
    name: str = Field(
        max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        description="The Secret or ConfigMap, in the CapacityTest's namespace.",
    )
    key: str = Field(
        max_length=253,
        pattern=r"^[-._a-zA-Z0-9]+$",
        description="The key inside the Secret or ConfigMap whose value the variable gets.",
    )


class EnvSource(PlimsollModel):
    """Exactly one of a Secret's key or a ConfigMap's key."""

    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.secretKeyRef) != has(self.configMapKeyRef)",
                    "message": "give exactly one of secretKeyRef or configMapKeyRef",
                }
            ]
        }
    }

    secret_key_ref: KeyRef | None = Field(
        None,
        description="Read the value from this key of a Secret in the CapacityTest's namespace.",
    )
    config_map_key_ref: KeyRef | None = Field(
        None,
        description="Read the value from this key of a ConfigMap in the CapacityTest's namespace.",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> EnvSource:
        if (self.secret_key_ref is None) == (self.config_map_key_ref is None):
            raise ValueError("give exactly one of secretKeyRef or configMapKeyRef")
        if self.secret_key_ref is not None and reads_control_token(self.secret_key_ref.name):
            raise ValueError(CONTROL_TOKEN_REFUSAL)
        return self

    def kind(self) -> str:
        return "Secret" if self.secret_key_ref is not None else "ConfigMap"

    def ref(self) -> KeyRef:
        ref = self.secret_key_ref or self.config_map_key_ref
        assert ref is not None  # the validator guarantees one
        return ref

    def describe(self) -> str:
        """What is referenced, never what it holds."""
        return f"{self.kind()} {self.ref().name!r} key {self.ref().key!r}"
