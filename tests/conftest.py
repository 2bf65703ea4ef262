"""Fixtures for the whole suite.

`mark` is for the tests that run Plimsoll's processes for real: it works from the
repository (specs name their commands relative to it) and tags every process the
test starts, so `tests.localrun.marked_processes(mark)` finds any left behind.
Modules whose every test needs it say `pytestmark = pytest.mark.usefixtures("mark")`.

One workaround lives here because it concerns every folder: looptime 0.9 asks
pytest-asyncio 1.5's policy for an event loop even around sync tests, which
creates one nobody closes; the next async test orphans it and its
ResourceWarning, an error under `filterwarnings = error`, fails a test that did
nothing wrong. Closing that implicit loop after each sync test removes the leak.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from hatch_build import stale_modules
from tests.controller.apiserver_fixtures import control_plane_installed
from tests.hostshare import (
    OVERLAPS,
    HostTime,
    hold_for_test,
    ledger_folder,
    ledger_summary,
    read_ledger,
    record,
    shared_folder,
    under_xdist,
)
from tests.localrun import ROOT
from tests.metrics.conftest import PrometheusServer

# One real control plane per session, for every folder's tests that need one.
__all__ = ["control_plane_installed"]


# Tests that judge nothing measured on this host, so any two may run at once under
# `pytest -n 2` (tests/hostshare.py). Whole folders: models, pure decisions, rendering,
# the chart, the CRD on a real API server. Single modules and tests: they wait on a real
# API server or Prometheus and judge what the operator wrote (objects, phases, steps
# kept across a restart, rights, an order, a deadline, a refusal), with pass bars no busy
# host can fail. Not the runs stopped by a signal mid-trial (test_stop_signals.py,
# test_interrupt.py): beside the real-API-server tests the runner once ignored the signal
# or exited 0. An entry is a path prefix, as in END_TO_END: a folder, a module, or
# `module::test`. Heavy set-up inside one (an image build, a control plane's cold start)
# still takes the host alone for its block.
OVERLAPPING = (
    "api/",
    "docs/",
    "decide/",
    "report/",
    "charts/",
    "shared/",  # pure helpers: JSON depth, units, histograms
    "bench/",  # the benchmarks' simulations, run on fake time
    "kube/",  # the client against in-process fake servers: retries and errors, not speed
    "test_install_hints.py",
    "test_module_size.py",  # reads the package's files
    "cli/test_help.py",
    "cli/test_krew_manifest.py",
    "cli/test_compare.py",
    "cli/test_exit_codes.py",  # reports written by hand, read back: no run
    "controller/test_apiserver_lifecycle.py",
    "controller/test_apiserver_peering.py",
    "controller/test_apiserver_rbac.py",
    "controller/test_apiserver_schema.py",
    "controller/test_apiserver_variants.py",
    "controller/test_control_plane.py",
    "controller/test_real_cluster.py",
    "controller/test_real_kubelet.py",
    "controller/test_relogin.py",
    "metrics/test_prometheus_intervals.py",  # compares with the cgroup's own counter
    "metrics/test_prometheus_real.py",  # the same, at one interval, then Prometheus gone
    "controller/test_apiserver_bad_input.py",  # refusals: conditions and admission errors
    "controller/test_apiserver_kubectl.py",  # the plugin's output from stored reports
    "controller/test_bounded_status.py",  # a status's size over 200 steps, not their verdicts
    "controller/test_operator_pod_proxy.py",  # trials reach the generators: counts, not speed
    # When each run started, and that a run past its deadline is stopped: every step's
    # verdict may be anything (the first runs without Prometheus: all invalid).
    "controller/test_apiserver_run_limits.py",
    "controller/test_apiserver_runs.py::test_a_failing_setup_job",
    "controller/test_apiserver_trigger.py",  # a second run starts: when, not how fast
    "controller/test_apiserver_flight.py",  # replicas and lags: loose bounds
    # Three shapes at 5 requests/s (40% of the smallest's capacity) and 60 (over the
    # largest's 50): every pass and fail has a wide margin, so a shared host changes
    # none of them; it waited 37 s alone in CI's e2e (2026-12-07).
    "controller/test_apiserver_shapes.py::test_each_shape_is_measured_in_its_own_pod",
    "images/",  # the builds take the host alone (tests/built_images.py); the rest is I/O
    "run/test_ensure_ready.py",  # the next step waits for a restarted target: an order
    "run/test_variant_comparison.py::test_a_variant_s_workload_reaches",
    "cli/test_run_unpinned.py",  # a refusal, and what the reports say first
    # init's written spec holds the figures its own probe printed, whatever the host
    "cli/test_init.py::test_init_",
    "cli/test_init.py::test_a_404",
    "cli/test_init_deployment.py",  # a Deployment read, a 1 s probe: what was written
    "controller/test_apiserver_apply.py",  # a second apply writes nothing: object versions
    "run/test_run_metrics_options.py",  # refusals before or at the first step
    "run/test_scrape_check.py",  # refused before any step
    "run/test_faults.py::test_a_mock_that_keeps_dying",
    "run/test_faults.py::test_cgroups_not_permitted",
    "run/test_faults.py::test_target_",
    # Real processes judged on what was sent and refused, never on how fast: a request
    # head refused before a byte, the control API's token and limits, per-user keys,
    # resolved addresses, streams held and released, an interoperable WebSocket, merged
    # histograms, SIGTERM as the first process (a 5 s bar against the kubelet's 30 s),
    # a notification's retries; and simulations and fits on seeded draws.
    "generator/test_request_head.py",
    "generator/test_control_token.py",
    "generator/test_control_limits.py",
    "generator/test_credentials.py",
    "generator/test_target_address.py",
    "generator/test_holding.py",
    "generator/test_websocket_interop.py",
    "generator/test_merge.py",
    "generator/test_first_process.py",
    "generator/test_behaviour.py",  # seeded draws of the users' model: no clock
    "cli/test_calibrate.py",  # a fit of a log drawn from a known model: no clock
    "platforms/local/test_named_mocks.py",  # addresses and figures present, no verdict
    "controller/test_apiserver_notify.py",
    "cli/test_run_baseline.py::test_bad_gate_options",  # refused before any run
    "run/test_trial_client.py::test_a_generator_without_progress",  # polled the plain way
    # The generator's answers counted, not timed: the client-IP probe's verdicts, starts
    # dropped over the in-flight cap, refused connections and 429/503 as what they are,
    # the floor probe's count, an abort's partial result, the control API's codes and two
    # processes' merged counts (their pacing per second stays alone, below).
    "generator/test_client_ip_check.py",
    "generator/test_open_model.py::test_starts_over_the_in_flight_cap",
    "generator/test_open_model.py::test_refused_connections_are_transport_errors",
    "generator/test_open_model.py::test_429_and_503_count_as_shed_load",
    "generator/test_open_model.py::test_the_floor_probe_reports_its_own_histogram",
    "generator/test_open_model.py::test_an_abort_returns_the_partial_result",
    "generator/test_control.py::test_a_trial_runs_and_reports",
    "generator/test_control.py::test_an_invalid_request_gets_422",
    "generator/test_control.py::test_a_second_trial_gets_409",
    "generator/test_control.py::test_an_unknown_trial_is_404",
    "generator/test_control.py::test_two_worker_processes_split_the_level_and_merge",
    # Counted, not timed, too: one connection per replayed client, a refused replica routed
    # around, load taken by replicas in turn, the page-view share of the users' calls, and
    # run-examples' answer read from reports written by hand.
    "generator/test_replay.py::test_each_client_keeps_one_connection",
    "generator/test_spread.py::test_a_refused_replica_is_routed_around",
    "generator/test_spread.py::test_load_spreads_evenly_over_replicas",
    "generator/test_users_mock.py::test_users_view_the_page_view_path_at_the_declared_share",
    "scripts/test_run_examples.py::test_every_level_passed_is_no_answer",
)


# Long end-to-end runs: `make e2e` runs them (CI too), `make test` leaves them out so a
# change can be checked in minutes. Image builds, the seed examples' whole runs, the
# operator against a cluster with the real images, and every test that takes over ~30 s
# on 2 cores because it runs whole capacity tests to their end (ranked by
# `pytest --durations`: the local ceilings against their analytic values, Prometheus
# gone mid-run, the mock's and the stream-memory runs, identical variants compared,
# Ctrl-C after a step, a baseline gate, a 200-step status, two variants on the
# operator). An entry is a path prefix: a folder, a module, or `module::test`.
END_TO_END = (
    "images/",
    "e2e/",
    "controller/test_real_cluster.py",
    "realnode/test_real_node.py",  # a real kubelet, containerd and the chart (tests/realnode)
    "run/test_shapes_local.py",  # a guided shape search over two real shapes: ~30 s
    "run/test_stop_signals.py",  # four real runs, each stopped mid-trial: about a minute
    "controller/test_bounded_status.py::test_a_200_step_run_keeps_a_small_status",
    "run/test_interrupt.py::test_sigint_stops_everything_and_keeps_the_steps",
    "cli/test_run_baseline.py::test_a_run_below_its_baseline_fails_the_gate",
    # three real proof runs of three replicas (a zone lost, a replica killed, a zone
    # restored), which are the kill and remove faults' own runs too: about 45 s
    "run/test_prove_local.py",
    # A real run's report.html in headless Chromium: ~25 s (the fixture's page stays in make test).
    "report/test_html_browser.py::test_a_real_runs_page_draws_every_chart_offline",
    # Over ~15 s each on 2 cores (`pytest --durations`, time held on the host), most of
    # them the operator running whole capacity tests on the real API server. `make test`
    # keeps a shorter run of each kind: a failing setup job, a delete mid-run, an invalid
    # spec, the rights of both chart modes, one real Prometheus against the cgroup.
    "controller/test_apiserver_equipment.py",  # pods deleted mid-run, a ceiling: ~40 s
    "controller/test_apiserver_variants.py",  # three two-variant runs: ~90 s in all
    "controller/test_apiserver_shapes.py",  # three shapes, two levels each: ~1 min
    "controller/test_apiserver_generators_auto.py",  # two runs, one scaled up: ~70 s
    "controller/test_apiserver_prove.py",  # two proof runs on three zones
    "controller/test_apiserver_peering.py::test_one_replica_runs_the_test_and_the_standby",
    "controller/test_apiserver_peering.py::test_a_stopped_replica_hands_over_at_once",
    "controller/test_apiserver_lifecycle.py::test_stopped_and_killed_mid_run_resumes",
    "controller/test_apiserver_lifecycle.py::test_spec_change_and_rerun_token_start_new_runs",
    # with the regression gate on the same run (it was a second, identical run)
    "controller/test_apiserver_runs.py::test_quickstart_reaches_a_cpu_bound_ceiling_gated",
    "controller/test_apiserver_rbac.py::test_namespaced_operator_runs_a_test_with_a_pod",
    "controller/test_apiserver_rbac.py::test_the_admission_policy_keeps_the_operator",
    "controller/test_apiserver_rbac.py::test_a_value_from_secret_reaches_the_target",
    "controller/test_operator_pod_proxy.py",  # trials through the pod proxy: ~16 s
    "kube/test_client_real_apiserver.py",  # its own control plane, stopped for 10 s: ~40 s
    "metrics/test_prometheus_restart.py::test_a_window_is_read_across_a_prometheus_restart",
    "run/test_faults.py::test_dead_generator_and_mock_are_started_again",  # a whole run: ~12 s
    "run/test_faults.py::test_a_mock_that_keeps_dying_stops_the_run",  # four mocks: ~14 s
    # Whole local runs of 15-18 s each (2026-12-02, `--durations` with the host to make
    # test alone): with them make test took 10 min 51 s and 11 min 01 s here.
    "run/test_generators_auto.py",  # saturated, then retried on more generators: ~18 s
    "run/test_contention.py::test_a_hog_beside_the_target_makes_a_failing_step_noisy",
    "run/test_scrape_check.py::test_a_trial_too_short_for_the_discovered_interval",
    "cli/test_run_shape_variant.py::test_run_variant_prices_the_one_shape_it_measured",
    # Real runs that hold the host 8-11 s each, where make test keeps a shorter one of the
    # kind (2026-12-06, the clean-clone make test took 8 min 55 s with them): replay's
    # timing at 1x and 2x (the calibration round trip replays through nginx too) and the
    # spec `plimsoll init` wrote, run to its end (init's probes stay).
    "generator/test_replay.py::test_replay_at_1x_reproduces_the_logged_per_second_counts",
    "generator/test_replay.py::test_replay_at_2x_doubles_the_achieved_rate",
    "cli/test_init.py::test_the_spec_init_wrote_runs_as_written",
    # The longest whole local runs left (the clean-clone ledger of 2026-12-07, held alone:
    # 16.4, 15.0 and 8.7 s), where make test ran at its 8-minute bar: the confirmation
    # experiment's three platforms (its decisions keep their unit tests in tests/decide),
    # two variants in turn and a level split over replicas, a step's timeline.
    "run/test_confirm_local.py",
    "run/test_variants_generators.py",
    "run/test_timeline_run.py",
    # 62 s by design (two 20 s trials hold the queue; with it make test took 10 min 48 s
    # here on 2026-12-04; the queue rules keep their unit tests in tests/decide), and issue
    # 52's whole run cut at its 40 s deadline (~75 s on a busy host, 2026-12-06).
    "controller/test_apiserver_run_limits.py",
    # An operator beside an undecodable CR serving another namespace's test (~40 s).
    "controller/test_apiserver_deep_objects.py::test_the_operator_skips_an_undecodable_test",
    # Issue 58: two whole runs, the second started by a new image (~15 s poll between).
    "controller/test_apiserver_trigger.py",
    # A refusal that runs a real start first (7.3 s shared), out of make test at its bar.
    "run/test_scrape_check.py::test_the_spec_interval_is_checked_without_asking_the_server",
    # Issue 57: a 30 s flight of a burst at replicas the simulated HPA scales, and the
    # recommended HPA's flight.
    "run/test_flight_local.py",
    # Issue 57: a flight on the cluster's HPA controller, scaling the operator's
    # Deployment on metrics.k8s.io through a 44 s profile: ~80 s.
    "controller/test_apiserver_flight.py",
    # Out of make test when it ran at 8 min 8 s (2026-12-08), each 8-10 s and each
    # overlapping, so it pairs in make e2e: the report page of a stored report in
    # Chromium (the fixture's page stays), a step waiting for a restarted target, a
    # variant's workload reaching the generators, --unpinned's reports.
    "controller/test_apiserver_kubectl.py::test_report_html_from_the_stored_report",
    "run/test_ensure_ready.py::test_the_next_step_waits_until_the_restarted_target_is_ready",
    "run/test_variant_comparison.py::test_a_variant_s_workload_reaches_the_generators",
    "cli/test_run_unpinned.py::test_with_unpinned_every_report_says_so_first",
)


_SESSION_STARTED = [time.monotonic()]


# Measurements whose answer depends on a quiet host: `make truth` runs them serially,
# alone, and prints one JSON line per case; neither `make test` nor `make e2e` (CI) runs
# them. Each judges a ceiling against a truth known another way: the real node's
# against the same spec run locally, the calibration round trip's fitted ceiling against
# the original's, the local shapes and local ceilings against their analytic values.
# `make e2e` keeps a short run of each kind proving the capability works.
TRUTH = (
    "realnode/test_real_node.py::test_the_quickstart_on_a_real_node_finds_the_local_ceiling",
    "e2e/test_calibration_round_trip.py::test_the_fitted_workload_finds_the_same_ceiling",
    "e2e/test_calibration_round_trip.py::test_the_fitted_parameters_come_back_within_15",
    "e2e/test_shapes_real.py",
    "e2e/test_local_ceilings.py",
    # A many-threaded target throttled at 0.5 CPU on a quiet host: no step may be called
    # busy (issue 51). It skips itself where other programs use the CPU, so only a quiet
    # host proves anything.
    "run/test_threaded_throttling.py",
    # Two identical variants must come out within noise of each other: a judgment of the
    # noise itself, which a busy host widens (it failed beside the helpers' work).
    "run/test_variant_comparison.py::test_identical_variants_are_within_noise",
    "controller/test_apiserver_shapes.py::test_the_cpu_bound_shapes_fill_status_shapes_with_analytic",
    # How closely Prometheus's CPU and memory agree with the cgroup's own counters at 1, 5
    # and 15 s scrapes: a measurement (71 s of CI's e2e); `make test` keeps one interval
    # against the cgroup, then Prometheus gone (metrics/test_prometheus_real.py).
    "metrics/test_prometheus_intervals.py",
    # A low Poisson rate at the product's defaults: every start on time, none late or
    # dropped, the step passed: a judgment of the host's quiet (8.8 s held alone in make
    # test, which ran at its 8-minute bar on 2026-12-07).
    "run/test_contention.py::test_a_low_poisson_rate_with_default_settings_passes",
)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop before a test runs old compiled code: the generator's hot path is compiled in
    place (hatch_build.py), and a compiled module shadows its edited source."""
    _SESSION_STARTED[0] = time.monotonic()
    stale = stale_modules()
    if stale:
        pytest.exit(
            f"the compiled generator hot path is older than its source ({', '.join(stale)}): "
            "run `make hot-path` (make test does it), or delete "
            "generator-image/plimsoll_generator/*.so to test the Python as it is",
            returncode=4,
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).relative_to(ROOT / "tests").as_posix()
        if f"{where}::{item.name}".startswith(OVERLAPPING):
            item.add_marker(OVERLAPS)
        if f"{where}::{item.name}".startswith(TRUTH):
            item.add_marker(pytest.mark.truth)
        elif f"{where}::{item.name}".startswith(END_TO_END):
            item.add_marker(pytest.mark.e2e)
    if config.getoption("markexpr") == "truth":
        _control_plane_last(items)
    else:
        _overlapping_first(items)


def _overlapping_first(items: list[pytest.Item]) -> None:
    """Modules whose tests all overlap first, mixed ones next, those that run alone last.

    xdist (`--dist loadfile`) hands each worker whole modules in this order. Two tests
    that overlap run at once only when both workers are on one at the same time; a test
    that must run alone waits for the other worker's test to end, and that worker waits
    for it. Interleaved, an overlapping test often ran with the other worker idle, waiting
    to run alone (make test held the host 5.3 min shared and 4.8 alone in 9.3 min of wall
    time). Grouped, the overlapping modules pair up before the lone ones run in turn.
    Whole modules move, in order, so their module fixtures are built once."""
    kinds: dict[Path, set[bool]] = {}
    for item in items:
        kinds.setdefault(item.path, set()).add(item.get_closest_marker(OVERLAPS) is not None)
    rank = {path: 0 if k == {True} else 1 if len(k) == 2 else 2 for path, k in kinds.items()}
    first = {ROOT / "tests" / where for where in LONGEST_FIRST}
    # stable: the order is kept within each rank, the longest modules first
    items.sort(key=lambda i: (rank[i.path], i.path not in first))


# The overlapping modules that hold the host longest (the CI ledger of 2026-12-07: 60 to
# 110 s each, mostly waiting on an API server or a scrape), started first among their
# rank. Started last, one of them ran on while the other worker, done with the short ones,
# waited to run alone: 37 s of the 15 s-interval Prometheus test ran unpaired in CI.
LONGEST_FIRST = (
    "controller/test_apiserver_variants.py",
    "controller/test_apiserver_run_limits.py",
    "controller/test_apiserver_rbac.py",
    "controller/test_apiserver_shapes.py",
    "controller/test_apiserver_peering.py",
    "controller/test_apiserver_lifecycle.py",
)


def _control_plane_last(items: list[pytest.Item]) -> None:
    """`make truth`: the modules that use the session's control plane run after the rest.
    Once started it stays up to the session's end, and its idle API server, etcd and
    controllers take a tenth of a core or more: the busy host a truth must not measure
    beside. Whole modules move, in order, so their module fixtures are built once."""
    on_plane = {
        i.path for i in items if "control_plane_installed" in getattr(i, "fixturenames", ())
    }
    items.sort(key=lambda i: i.path in on_plane)  # stable: the order is kept within each


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """Hold the host around the whole test, set-up of module and session fixtures
    included (they are built before any function fixture could take a lock), and put
    the time held and the time waited in the ledger (tests/hostshare.py)."""
    factory: pytest.TempPathFactory = item.config._tmp_path_factory  # type: ignore[attr-defined]
    alone = item.get_closest_marker(OVERLAPS) is None
    started, asked_at = time.monotonic(), time.time()
    if under_xdist():
        with hold_for_test(shared_folder(factory), alone=alone) as hold:
            outcome = yield
        waited = hold.waited
    else:
        outcome = yield
        waited = 0.0
    held = time.monotonic() - started - waited
    entry = HostTime(item.nodeid, alone, round(waited, 2), round(held, 2), round(asked_at, 2))
    record(ledger_folder(factory), entry)
    return outcome


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """The session's time on the host: its total, and the tests that held it longest."""
    if under_xdist():
        return
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    lines = ledger_summary(
        read_ledger(ledger_folder(factory)), wall_s=time.monotonic() - _SESSION_STARTED[0]
    )
    if lines:
        terminalreporter.section("time on the host")
        for line in lines:
            terminalreporter.write_line(line)
    cases = truth_cases(terminalreporter)
    if cases:
        terminalreporter.section("truth: one JSON line per case")
        for case in cases:
            terminalreporter.write_line(json.dumps(case))


def truth_cases(terminalreporter: pytest.TerminalReporter) -> list[dict[str, object]]:
    """Each truth test's outcome and the figures it recorded (`record_property`)."""
    cases = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if "truth" not in report.keywords or report.when not in ("call", "setup"):
                continue
            if report.when == "setup" and outcome != "error":
                continue
            cases.append(
                {"case": report.nodeid, "outcome": outcome, **dict(report.user_properties)}
            )
    return cases


@pytest.fixture
def mark(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(ROOT)
    mark = uuid.uuid4().hex
    monkeypatch.setenv("PLIMSOLL_TEST_MARK", mark)
    return mark


@pytest.fixture
def prometheus_servers() -> Iterator[list[PrometheusServer]]:
    """The real Prometheus servers a test launches (`launch_prometheus`) and appends here,
    stopped and their homes removed after it; a list, so a test may launch one before
    what it scrapes exists (a run starts its own exporter)."""
    started: list[PrometheusServer] = []
    yield started
    for server in started:
        server.stop()
        shutil.rmtree(server.home, ignore_errors=True)


@pytest.fixture(autouse=True)
def _close_implicit_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if inspect.iscoroutinefunction(request.function):
        return
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = policy.get_event_loop()
        except RuntimeError:
            return
    if not loop.is_running():
        loop.close()
        policy.set_event_loop(None)
