"""Only this user's run records are read, and only this user's processes are killed.

The next `plimsoll run` (root when it pins) kills what a dead run left. Records used
to sit in a shared `$TMPDIR/plimsoll-runs`, so anyone could plant one naming a mark
or cgroups and have root SIGKILL their choice. Real processes here: a planted record,
a directory someone else owns, and a process of another user carrying a run's mark
must all leave the victim alive; a record of one's own still reaps its run.
Needs root (to act as a second user), as the runs that pin do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plimsoll.platforms.local import leftovers

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="acts as a second user: needs root")
NOBODY = 65534


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(leftovers.STATE_DIR_ENV, str(tmp_path))
    return tmp_path / "plimsoll-runs"


def _marked(run_id: str, user: int | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, leftovers.RUN_MARK_ENV: run_id}
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], env=env, user=user
    )


@pytest.fixture
def victims() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def _record(path: Path, run_id: str) -> None:
    dead = {"runId": run_id, "runnerPid": 999_999_999, "runnerStart": "1", "cgroupRoot": None}
    path.write_text(json.dumps(dead))


def test_the_records_directory_is_private(state: Path) -> None:
    leftovers.register("quick-ab12cd", None)
    assert state.stat().st_mode & 0o777 == 0o700
    record = state / "quick-ab12cd.json"
    assert (record.stat().st_uid, record.stat().st_mode & 0o777) == (os.getuid(), 0o600)


def test_the_default_directory_is_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(leftovers.STATE_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert leftovers.state_dir().name == f"plimsoll-runs-{os.getuid()}"


def test_a_directory_someone_else_owns_is_refused_naming_it(state: Path) -> None:
    state.mkdir(mode=0o777)
    os.chown(state, NOBODY, NOBODY)
    with pytest.raises(leftovers.LeftoversError, match=str(state)):
        leftovers.reap_orphans()


def test_a_planted_record_kills_nothing(
    state: Path, victims: list[subprocess.Popen[bytes]]
) -> None:
    victims.append(_marked("planted-000000"))
    state.mkdir(mode=0o700)
    record = state / "planted-000000.json"
    _record(record, "planted-000000")
    os.chown(record, NOBODY, NOBODY)  # another user's file, in a directory we own
    done = leftovers.reap_orphans()
    assert victims[0].poll() is None, "a planted record's mark was killed"
    assert any("not a record of yours" in line for line in done), done


def test_a_record_others_may_write_is_not_read(
    state: Path, victims: list[subprocess.Popen[bytes]]
) -> None:
    victims.append(_marked("writable-000000"))
    state.mkdir(mode=0o700)
    record = state / "writable-000000.json"
    _record(record, "writable-000000")
    record.chmod(0o666)
    leftovers.reap_orphans()
    assert victims[0].poll() is None


def test_another_users_process_with_our_runs_mark_is_not_killed(
    state: Path, victims: list[subprocess.Popen[bytes]]
) -> None:
    victims.append(_marked("mine-000000", user=NOBODY))
    victims.append(_marked("mine-000000"))
    state.mkdir(mode=0o700)
    _record(state / "mine-000000.json", "mine-000000")
    done = leftovers.reap_orphans()
    victims[1].wait(timeout=10)  # our own run's leftover: reaped
    assert victims[0].poll() is None, "another user's process was killed"
    assert "killed 1 processes left by run mine-000000" in done
    assert not (state / "mine-000000.json").exists()
