"""Per-user credentials: every modeled user sends its own key, not one shared by all.

A proxy that meters per key, or a gateway whose users are seeded accounts, sees
one user when every modeled user sends the same `Authorization`. `workload.credentials`
gives each user its own: a header whose value is a template with the user's index,
`{header: Authorization, template: "Bearer sk-user-{index}"}` sending `Bearer
sk-user-0`, `Bearer sk-user-1`, ... User indexes are unique across generator
processes and pods (`TrialRequest.first_user`), so N users send N distinct values.
`identity` adds the headers a gateway identifies a user by beside the key (the LLM-proxy
seed's `X-User-*`, which its guard meters by and strips before the provider), each a
template of its own.

Nothing from the CR reaches a request head unchecked: the header name is an RFC 9110
token and not one of the headers that frame the request (the generator writes those
itself), the template is visible ASCII with one placeholder, `{index}`, and what it
becomes (digits put in) stays within the same pattern. The generator checks the head
again before writing it (`plimsoll_generator.request_head`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import HEADER_VALUE_PATTERN, HeaderName

PLACEHOLDER = "{index}"
MAX_IDENTITY_HEADERS = 8
Template = Annotated[str, Field(pattern=HEADER_VALUE_PATTERN, min_length=1, max_length=1024)]
# Headers the generator writes to frame each request: a credential may not replace them.
FRAMING_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"}
)


class Credentials(PlimsollModel):
    """Each modeled user's own credential, in one header built from a template."""

    header: HeaderName = Field(
        "Authorization",
        description="The header that carries each user's credential (a header name: "
        "letters, digits and -!#$%&'*+.^_`|~).",
    )
    template: str = Field(
        pattern=HEADER_VALUE_PATTERN,
        min_length=1,
        max_length=1024,
        description="The header's value, '{index}' replaced by the user's index, e.g. "
        "'Bearer sk-user-{index}' (visible ASCII; no other braces).",
    )
    first: int = Field(
        0,
        ge=0,
        le=10_000_000,
        description="The index the first user gets (users count up from it), e.g. 1 when "
        "the seeded accounts are numbered from 1.",
    )

    identity: dict[HeaderName, Template] = Field(
        default_factory=dict,
        max_length=MAX_IDENTITY_HEADERS,
        description="More headers each user sends beside its credential, each a template "
        "with '{index}', e.g. {X-User-Id: 'user-{index}'}: what a gateway identifies, "
        "meters or strips per user (at most 8).",
    )

    @model_validator(mode="after")
    def _checked(self) -> Credentials:
        headers = {"credentials.header": self.header} | {
            f"credentials.identity.{name}": name for name in self.identity
        }
        for field, name in headers.items():
            if name.lower() in FRAMING_HEADERS:
                raise ValueError(
                    f"{field} {name!r} frames the request and the generator writes it "
                    "itself: use the header your target reads, e.g. Authorization or X-Api-Key"
                )
        lowered = [name.lower() for name in headers.values()]
        if len(set(lowered)) < len(lowered):
            raise ValueError(
                "credentials.identity names a header twice or credentials.header again "
                "(header names ignore case): give each once"
            )
        _check_template("credentials.template", self.template)
        for name, template in self.identity.items():
            _check_template(f"credentials.identity.{name}", template)
        return self

    def for_user(self, user: int) -> str:
        """The value user number `user` (0-based, unique across generators) sends."""
        return self.template.replace(PLACEHOLDER, str(self.first + user))

    def headers_for(self, user: int) -> dict[str, str]:
        """Every header user number `user` sends: its credential and its identity."""
        index = str(self.first + user)
        return {
            self.header: self.for_user(user),
            **{name: t.replace(PLACEHOLDER, index) for name, t in self.identity.items()},
        }

    def header_names(self) -> list[str]:
        """The headers the credentials set (for the clash check with other headers)."""
        return [self.header, *self.identity]


def _check_template(field: str, template: str) -> None:
    """A template names '{index}', and no other braces (there is no other placeholder)."""
    if PLACEHOLDER not in template:
        raise ValueError(
            f"{field} {template!r} has no '{PLACEHOLDER}': every user would send the same "
            "value; write e.g. 'Bearer sk-user-{index}'"
        )
    if "{" in template.replace(PLACEHOLDER, "") or "}" in template.replace(PLACEHOLDER, ""):
        raise ValueError(
            f"{field} {template!r} has braces other than '{PLACEHOLDER}', the only "
            "placeholder: remove them"
        )
