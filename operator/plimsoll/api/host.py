"""The machine a run measured on, as report.json and report.md describe it.

The seeds say their figures are lower bounds for their host; so are Plimsoll's, and a
reader comparing two reports needs to know whether they came from the same kind of
machine. Filled by a platform that can see its host (`DescribesHost`): the local one.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel


class HostDescription(PlimsollModel):
    """The host's CPU, cores, memory, kernel and whether it is virtual."""

    cpu_model: str = Field("", description="The CPU's model name, as the kernel reports it.")
    cores: int = Field(description="CPUs this process may run on (its affinity).")
    memory_bytes: int | None = Field(None, description="The host's memory (MemTotal).")
    kernel: str = Field("", description="The kernel's release.")
    virtualization: str = Field(
        "",
        description="'none' (bare metal), a hypervisor's name, or 'virtual machine' "
        "when the CPU says so but not which; '' when unknown.",
    )

    def line(self) -> str:
        """One line for report.md: 'Intel Xeon ..., 2 cores, 24 GiB, Linux 6.1, KVM'."""
        parts = [self.cpu_model or "CPU model unknown", f"{self.cores} cores"]
        if self.memory_bytes:
            parts.append(f"{self.memory_bytes / 2**30:,.0f} GiB")
        if self.kernel:
            parts.append(f"Linux {self.kernel}")
        if self.virtualization:
            bare = self.virtualization == "none"
            parts.append("bare metal" if bare else f"virtualised ({self.virtualization})")
        return ", ".join(parts)
