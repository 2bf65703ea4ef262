"""The kopf handlers: thin glue between the API server and `plimsoll.controller.supervisor`.

`plimsoll operator` (`plimsoll.cli.operator`) runs kopf with `registry`.
- login: kopf's own kubeconfig / service-account login; the same credentials
  build the `KubeClient` the runs use, so one identity needs one set of RBAC rules.
  kopf gets them as a session (`kopf_session`) that skips, and reports, an object
  nested too deep to decode instead of stopping the operator;
  Tokens expire (exec plugins, rotated ServiceAccount tokens): on a 401 the client
  runs the same login again (`fresh_login`) and retries once, and when kopf logs
  in again on its own, the client takes the new credentials too;
- startup: settings (finalizer name, annotations-only progress) and the metrics server;
- a daemon per CapacityTest: `Supervisor.run` (start, resume, rerun, invalid spec);
- delete: the finalizer deletes the run namespaces (a namespaced resource cannot
  own a Namespace) and keeps the resource until they are gone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import kopf

from plimsoll.api.resource import GROUP, PLURAL, VERSION
from plimsoll.controller.context import OperatorContext
from plimsoll.controller.kopf_session import skipping_session
from plimsoll.controller.operator_metrics import serve_metrics
from plimsoll.controller.supervisor import Supervisor, delete_run_namespaces
from plimsoll.kube.client import KubeClient

FINALIZER = "plimsoll.dev/cleanup"
KOPF_PREFIX = "plimsoll.dev"  # kopf's progress and last-handled annotations
registry = kopf.OperatorRegistry()


def _context(memo: Any) -> OperatorContext:
    ctx = memo.get("plimsoll") if isinstance(memo, dict) else getattr(memo, "plimsoll", None)
    if not isinstance(ctx, OperatorContext):
        raise kopf.PermanentError("the operator was started without its context (memo.plimsoll)")
    return ctx


def _login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


def fresh_login(**kwargs: Any) -> Any:
    """The `relogin` a client calls after a 401: kopf's login again, which re-reads the
    ServiceAccount token file or the kubeconfig (off the event loop: it reads files)."""

    async def relogin() -> kopf.ConnectionInfo | None:
        return await asyncio.to_thread(_login, **kwargs)

    return relogin


@kopf.on.login(registry=registry)
async def login(memo: Any, **kwargs: Any) -> kopf.AiohttpSession | None:
    info = await asyncio.to_thread(_login, **kwargs)  # reads token and kubeconfig files
    if info is None:
        return None
    ctx = _context(memo)
    if ctx.client is None:
        ctx.client = KubeClient.from_connection(info, relogin=fresh_login(**kwargs))
    else:  # kopf logged in again (its own 401): runs hold this client, so update it
        ctx.client.use_credentials(info)
    # kopf's own session, but one object nested too deep to decode is skipped (and
    # reported) instead of failing the watch and stopping the operator for everyone.
    return kopf.AiohttpSession(
        server=info.server,
        default_namespace=info.default_namespace,
        priority=info.priority,
        expiration=info.expiration,
        aiohttp_session=skipping_session(info, ctx.skipped.report),
    )


@kopf.on.startup(registry=registry)
async def configure(settings: kopf.OperatorSettings, memo: Any, **_: Any) -> None:
    settings.persistence.finalizer = FINALIZER
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=KOPF_PREFIX)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=KOPF_PREFIX)
    settings.posting.level = logging.WARNING
    ctx = _context(memo)
    if ctx.metrics_port:
        ctx.metrics_server = await serve_metrics(ctx.metrics, ctx.metrics_host, ctx.metrics_port)


@kopf.on.cleanup(registry=registry)
async def shutdown(memo: Any, **_: Any) -> None:
    ctx = _context(memo)
    if ctx.metrics_server is not None:
        await ctx.metrics_server.cleanup()
        ctx.metrics_server = None


# On exit kopf sets `stopped` and waits `cancellation_backoff` before it cancels the
# daemon: time for the supervisor (polling every 0.5 s) to detach the run for resuming.
@kopf.daemon(
    GROUP,
    VERSION,
    PLURAL,
    registry=registry,
    cancellation_backoff=5.0,
    cancellation_timeout=30.0,
)
async def supervise(body: kopf.Body, stopped: kopf.DaemonStopped, memo: Any, **_: Any) -> None:
    await Supervisor(_context(memo), body, stopped).run()


@kopf.on.delete(GROUP, VERSION, PLURAL, registry=registry)
async def delete(meta: kopf.Meta, memo: Any, logger: kopf.Logger, **_: Any) -> None:
    ctx = _context(memo)
    uid = meta.get("uid") or f"{meta['namespace']}/{meta['name']}"
    remaining = await delete_run_namespaces(ctx.api(), uid, wait=20.0)
    ctx.metrics.set_phase(uid, None)
    ctx.metrics.results.forget(meta["namespace"], meta["name"])
    if remaining:
        raise kopf.TemporaryError(f"waiting for namespaces to go: {', '.join(remaining)}", delay=5)
    logger.info("run namespaces deleted")
