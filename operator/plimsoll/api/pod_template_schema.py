"""The CRD's schema of `target.podTemplate`: every allow-listed field, typed, nothing free-form.

Who: `plimsoll.api.target` publishes it as the field's JSON schema, so `plimsoll crd`
writes it into `crds/capacitytest.yaml`.

Why: a free-form object (`x-kubernetes-preserve-unknown-fields`) lets the API server
store any nesting up to its own limit of 10,000 levels, and a CapacityTest nested
1,100 levels deep cannot be decoded by Python's `json` (RecursionError near 1,000):
kopf's watcher, and with it the operator, stopped for every tenant. Here each field
has a type down to its leaves, so the schema alone bounds the depth (about ten
levels), and a value of the wrong shape (`containers: 5`, an object where a label's
string belongs) is refused at `kubectl apply`, naming the field. A field outside the
allow-list is an unknown field: refused by `kubectl apply` (strict field
validation), pruned by clients that ask for no validation. The model's allow-list
(`plimsoll.api.pod_template`) stays the one that explains each refusal, for
`plimsoll validate`, `plimsoll run` and the operator; this is its shape only, and a
test holds the two to the same field names.
"""

from __future__ import annotations

from typing import Any


def _obj(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _list(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


_S: dict[str, Any] = {"type": "string"}
_I: dict[str, Any] = {"type": "integer"}
# A user or group id: the API server refuses 0 (root) here at admission, as the model does.
_ID: dict[str, Any] = {"type": "integer", "minimum": 1}
_B: dict[str, Any] = {"type": "boolean"}
_STRINGS = _list(_S)
_STRING_MAP: dict[str, Any] = {"type": "object", "additionalProperties": _S}

_REQUIREMENT = _obj(key=_S, operator=_S, values=_STRINGS)
_LABEL_SELECTOR = _obj(matchLabels=_STRING_MAP, matchExpressions=_list(_REQUIREMENT))
_NODE_TERM = _obj(matchExpressions=_list(_REQUIREMENT), matchFields=_list(_REQUIREMENT))
_POD_TERM = _obj(
    labelSelector=_LABEL_SELECTOR,
    namespaceSelector=_LABEL_SELECTOR,
    namespaces=_STRINGS,
    topologyKey=_S,
    matchLabelKeys=_STRINGS,
    mismatchLabelKeys=_STRINGS,
)
_POD_AFFINITY = _obj(
    requiredDuringSchedulingIgnoredDuringExecution=_list(_POD_TERM),
    preferredDuringSchedulingIgnoredDuringExecution=_list(
        _obj(weight=_I, podAffinityTerm=_POD_TERM)
    ),
)
_AFFINITY = _obj(
    nodeAffinity=_obj(
        requiredDuringSchedulingIgnoredDuringExecution=_obj(nodeSelectorTerms=_list(_NODE_TERM)),
        preferredDuringSchedulingIgnoredDuringExecution=_list(
            _obj(weight=_I, preference=_NODE_TERM)
        ),
    ),
    podAffinity=_POD_AFFINITY,
    podAntiAffinity=_POD_AFFINITY,
)
_TOLERATION = _obj(key=_S, operator=_S, value=_S, effect=_S, tolerationSeconds=_I)
_SPREAD = _obj(
    maxSkew=_I,
    topologyKey=_S,
    whenUnsatisfiable=_S,
    labelSelector=_LABEL_SELECTOR,
    minDomains=_I,
    nodeAffinityPolicy=_S,
    nodeTaintsPolicy=_S,
    matchLabelKeys=_STRINGS,
)
_KEY_TO_PATH = _obj(key=_S, path=_S, mode=_I)
_VOLUME = _obj(
    name=_S,
    configMap=_obj(name=_S, items=_list(_KEY_TO_PATH), defaultMode=_I, optional=_B),
    secret=_obj(secretName=_S, items=_list(_KEY_TO_PATH), defaultMode=_I, optional=_B),
    emptyDir=_obj(medium=_S, sizeLimit={"x-kubernetes-int-or-string": True}),
)
_KEY_REF = _obj(name=_S, key=_S, optional=_B)
_NAME_REF = _obj(name=_S, optional=_B)
_CONTAINER = _obj(
    name=_S,
    env=_list(
        _obj(
            name=_S,
            value=_S,
            valueFrom=_obj(configMapKeyRef=_KEY_REF, secretKeyRef=_KEY_REF),
        )
    ),
    envFrom=_list(_obj(prefix=_S, configMapRef=_NAME_REF, secretRef=_NAME_REF)),
    volumeMounts=_list(_obj(name=_S, mountPath=_S, readOnly=_B, subPath=_S)),
)
POD_SPEC = _obj(
    nodeSelector=_STRING_MAP,
    affinity=_AFFINITY,
    tolerations=_list(_TOLERATION),
    topologySpreadConstraints=_list(_SPREAD),
    imagePullSecrets=_list(_obj(name=_S)),
    priorityClassName=_S,
    volumes=_list(_VOLUME),
    containers=_list(_CONTAINER),
    securityContext=_obj(runAsUser=_ID, runAsGroup=_ID, fsGroup=_ID, supplementalGroups=_list(_ID)),
    terminationGracePeriodSeconds=_I,
)
POD_TEMPLATE_SCHEMA: dict[str, Any] = _obj(
    metadata=_obj(labels=_STRING_MAP, annotations=_STRING_MAP),
    spec=POD_SPEC,
)


def schema_depth(schema: dict[str, Any]) -> int:
    """How deep a value this schema admits can nest (objects and lists count one each)."""
    children: list[dict[str, Any]] = list(schema.get("properties", {}).values())
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            children.append(schema[key])
    own = 1 if schema.get("type") in ("object", "array") else 0
    return own + max((schema_depth(child) for child in children), default=0)
