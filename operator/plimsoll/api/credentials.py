"""Per-user credentials: every modeled user sends its own key, not one shared by all.

A proxy that meters per key, or a gateway whose users are seeded accounts, sees
one user when every modeled user sends the same `Authorization`. `workload.credentials`
gives each user its own: a header whose value is a template with the user's index,
`{header: Authorization, template: "Bearer sk-user-{index}"}` sending `Bearer
sk-user-0`, `Bearer sk-user-1`, ... User indexes are unique across generator
processes and pods (`TrialRequest.first_user`), so N users send N distinct values.

Nothing from the CR reaches a request head unchecked: the header name is an RFC 9110
token and not one of the headers that frame the request (the generator writes those
itself), the template is visible ASCII with one placeholder, `{index}`, and what it
becomes (digits put in) stays within the same pattern. The generator checks the head
again before writing it (`plimsoll_generator.request_head`).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import HEADER_VALUE_PATTERN, HeaderName

PLACEHOLDER = "{index}"
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

    @model_validator(mode="after")
    def _checked(self) -> Credentials:
        if self.header.lower() in FRAMING_HEADERS:
            raise ValueError(
                f"credentials.header {self.header!r} frames the request and the generator "
                "writes it itself: use the header your target reads a credential from, "
                "e.g. Authorization or X-Api-Key"
            )
        if PLACEHOLDER not in self.template:
            raise ValueError(
                f"credentials.template {self.template!r} has no '{PLACEHOLDER}': every user "
                "would send the same value; write e.g. 'Bearer sk-user-{index}'"
            )
        if "{" in self.template.replace(PLACEHOLDER, "") or "}" in self.template.replace(
            PLACEHOLDER, ""
        ):
            raise ValueError(
                f"credentials.template {self.template!r} has braces other than "
                f"'{PLACEHOLDER}', the only placeholder: remove them"
            )
        return self

    def for_user(self, user: int) -> str:
        """The value user number `user` (0-based, unique across generators) sends."""
        return self.template.replace(PLACEHOLDER, str(self.first + user))
