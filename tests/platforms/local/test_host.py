"""This machine described from the kernel's files; what cannot be read stays empty."""

from pathlib import Path

import pytest

from plimsoll.platforms.local import host as host_module
from plimsoll.platforms.local.host import describe_host

CPUINFO = """processor\t: 0
model name\t: Intel(R) Xeon(R)   Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu vme hypervisor avx2
processor\t: 1
model name\t: Intel(R) Xeon(R)   Platinum 8375C CPU @ 2.90GHz
"""


def _proc(folder: Path, cpuinfo: str, meminfo: str) -> Path:
    folder.mkdir()
    (folder / "cpuinfo").write_text(cpuinfo)
    (folder / "meminfo").write_text(meminfo)
    return folder


def test_the_model_memory_and_a_virtual_cpu_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_module.shutil, "which", lambda name: None)  # no systemd here
    proc = _proc(tmp_path / "proc", CPUINFO, "MemTotal:       16384000 kB\nMemFree: 1 kB\n")
    host = describe_host(proc)
    assert host.cpu_model == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    assert host.memory_bytes == 16384000 * 1024
    assert host.virtualization == "virtual machine"  # the flag says so, not which
    assert host.cores >= 1
    assert host.kernel


def test_unreadable_files_leave_fields_empty_never_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_module.shutil, "which", lambda name: None)
    host = describe_host(tmp_path / "missing")
    assert (host.cpu_model, host.memory_bytes, host.virtualization) == ("", None, "")


def test_this_machine_is_described() -> None:
    host = describe_host()
    assert host.cores >= 1
    assert host.memory_bytes is not None
    assert host.memory_bytes > 0
