"""How many CPUs this process may really use: the default number of model worker processes.

`os.cpu_count()` counts the machine's cores; inside a container it can be the host's (a Space on
CPU Basic reported 16 and started 16 workers, 4.7 GB, for 2 vCPUs). What the process may use is the
smaller of two limits: the CPUs it may be scheduled on (`os.sched_getaffinity`) and its cgroup's CPU
quota (cgroup v2 `cpu.max` "QUOTA PERIOD", or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), where a
quota of 150000 per 100000 µs is 1.5 CPUs. Limits may sit on any ancestor cgroup, so the whole path
from the process's cgroup up to the root is read and the tightest quota wins.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def _ancestors(directory: Path, root: Path) -> list[Path]:
    """directory, its parents, ... up to root (all inside root)."""
    chain = [directory]
    while chain[-1] != root and root in chain[-1].parents:
        chain.append(chain[-1].parent)
    return chain


def cgroup_cpu_quota(proc_cgroup: str, cgroup_root: Path = CGROUP_ROOT) -> float | None:
    """The tightest CPU quota (in CPUs) of this process's cgroups, from /proc/self/cgroup's text; None = no quota.

    cgroup v2: the line "0::/path", files cgroup_root/path/cpu.max ("max 100000" = no limit).
    cgroup v1: the line "N:cpu,cpuacct:/path", files under cgroup_root/cpu,cpuacct/ or cgroup_root/cpu/
    (a quota of -1 = no limit).
    """
    quotas = []
    for line in proc_cgroup.splitlines():
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        relative = path.strip().lstrip("/")
        if controllers == "":  # v2 unified hierarchy
            for directory in _ancestors(cgroup_root / relative, cgroup_root):
                fields = (_read(directory / "cpu.max") or "").split()
                if len(fields) == 2 and fields[0] != "max" and float(fields[1]) > 0:
                    quotas.append(float(fields[0]) / float(fields[1]))
        elif "cpu" in controllers.split(","):  # v1
            for mount in (cgroup_root / controllers, cgroup_root / "cpu"):
                for directory in _ancestors(mount / relative, mount):
                    quota, period = _read(directory / "cpu.cfs_quota_us"), _read(directory / "cpu.cfs_period_us")
                    if quota and period and float(quota) > 0 and float(period) > 0:
                        quotas.append(float(quota) / float(period))
    return min(quotas) if quotas else None


def usable_cpus(affinity: int, quota: float | None) -> int:
    """CPUs to plan for: the affinity count, capped by the quota rounded down (1.5 CPUs -> 1), at least 1."""
    cpus = affinity if quota is None else min(affinity, math.floor(quota))
    return max(1, cpus)


def process_cpus() -> int:
    """usable_cpus for this process: its CPU affinity and its cgroup quota, read from /proc and /sys."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        affinity = os.cpu_count() or 1
    return usable_cpus(affinity, cgroup_cpu_quota(_read(PROC_CGROUP) or ""))
