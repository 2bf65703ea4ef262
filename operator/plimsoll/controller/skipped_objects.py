"""What the operator says about an object it could not decode: a log line, and an Event.

Who: the login handler passes `SkipReporter.report` to the kopf session
(`plimsoll.controller.kopf_session`), which calls it for each object it leaves out.
Why: a skipped CapacityTest is never run, so its owner must learn why from
`kubectl describe` (a Warning Event, `UndecodableObject`), and the admin from the
operator's log. The same object is listed again at every re-list and watch restart:
it is reported once per resourceVersion. Events are best effort, as all of the
operator's are (`plimsoll.controller.events`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from plimsoll.api.resource import KIND
from plimsoll.controller.events import Event, EventRecorder, EventType
from plimsoll.controller.kopf_session import SkippedObject
from plimsoll.kube.client import KubeClient

log = logging.getLogger(__name__)
REASON = "UndecodableObject"


class SkipReporter:
    def __init__(self, client: Callable[[], KubeClient | None]) -> None:
        self._client = client
        self._seen: set[tuple[str, str, str, str]] = set()
        self._posting: set[asyncio.Task[bool]] = set()

    def report(self, skipped: SkippedObject) -> None:
        key = (skipped.namespace, skipped.name, skipped.uid, skipped.resource_version)
        if key in self._seen:
            return
        self._seen.add(key)
        log.warning("skipped: %s", skipped.describe())
        client = self._client()
        if client is None or skipped.kind != KIND or not skipped.namespace:
            return
        owner = {
            "metadata": {
                "name": skipped.name,
                "namespace": skipped.namespace,
                "uid": skipped.uid,
                "resourceVersion": skipped.resource_version,
            }
        }
        event = Event(EventType.WARNING, REASON, skipped.describe())
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # decoded off the loop: the log line has said it
            return
        task = loop.create_task(EventRecorder(client, owner).post(event))
        self._posting.add(task)  # held until done: a task nobody holds may be collected
        task.add_done_callback(self._posting.discard)
