"""`spec.notify`: webhooks told when a CapacityTest's verdict changes.

A verdict reaches nobody who is not looking; a webhook brings it to a chat channel or
an event bus. Each webhook names the Secret key holding its URL (a webhook URL is a
credential: Slack's and most others' authenticate by the URL alone), the body's format
(a CloudEvents 1.0 JSON event, or Slack's `{"text": ...}`) and the changes it wants.
The sender is `plimsoll.controller.notify`; the bodies come from
`plimsoll.decide.notifications`.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.env_source import KeyRef


class NotifyOn(StrEnum):
    SUCCEEDED = "Succeeded"  # a run ended with a ceiling
    FAILED = "Failed"  # a run ended without one
    REGRESSED = "Regressed"  # the Regressed condition turned True
    PROVED = "Proved"  # the Proved condition changed (held, or no longer held)


class WebhookFormat(StrEnum):
    CLOUDEVENTS = "cloudevents"  # application/cloudevents+json, structured mode
    SLACK = "slack"  # {"text": "..."}: Slack's incoming webhooks, Mattermost, Rocket.Chat


class Webhook(PlimsollModel):
    """One receiver: where (a Secret's key), in what format, on which changes."""

    url_from: KeyRef = Field(
        description="The Secret (in the CapacityTest's namespace, labelled "
        "plimsoll.dev/runs-may-read=true) and key holding the webhook URL."
    )
    format: WebhookFormat = Field(
        WebhookFormat.CLOUDEVENTS, description="'cloudevents' (JSON event) or 'slack' (text)."
    )
    on: list[NotifyOn] = Field(
        default_factory=lambda: list(NotifyOn),
        max_length=4,
        description="The changes to send: Succeeded, Failed, Regressed, Proved (default all).",
    )
