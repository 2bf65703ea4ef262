"""This machine, described for the report (`plimsoll.api.host.HostDescription`).

Read from the kernel's own files: /proc/cpuinfo (the model name, and the `hypervisor`
flag a virtual CPU carries), /proc/meminfo, the release, and `systemd-detect-virt` where
systemd is there to name the hypervisor. Each read that fails leaves its field empty:
a description is never a reason for a run to stop.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

from plimsoll.api.host import HostDescription


def describe_host(proc: Path = Path("/proc")) -> HostDescription:
    model, flags = _cpuinfo(proc / "cpuinfo")
    return HostDescription(
        cpu_model=model,
        cores=len(os.sched_getaffinity(0)),
        memory_bytes=meminfo_bytes("MemTotal", proc / "meminfo"),
        kernel=platform.release(),
        virtualization=_virtualization("hypervisor" in flags),
    )


def _cpuinfo(path: Path) -> tuple[str, set[str]]:
    model, flags = "", set[str]()
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and not model:
                model = " ".join(value.split())
            elif key == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return model, flags


def meminfo_bytes(field: str, meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """One field of /proc/meminfo (`MemTotal`, `MemAvailable`), in bytes; None where the
    kernel does not say. Read here rather than through psutil, which only the benchmarks
    depend on: one field of one file."""
    try:
        for line in meminfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == field:
                return int(value.split()[0]) * 1024  # the file counts kibibytes
    except (OSError, ValueError, IndexError):
        return None
    return None


def _virtualization(hypervisor_flag: bool) -> str:
    """systemd's name for the hypervisor ('kvm', 'none'...) where it can tell; else the
    CPU's `hypervisor` flag: a virtual machine, or '' (unknown, not "bare metal")."""
    tool = shutil.which("systemd-detect-virt")
    if tool is not None:
        try:
            found = subprocess.run(
                [tool, "--vm"], capture_output=True, text=True, timeout=5, check=False
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            found = ""
        if found:
            return found
    return "virtual machine" if hypervisor_flag else ""
