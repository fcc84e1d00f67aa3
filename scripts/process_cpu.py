"""CPU time of a process and all its descendants, read from /proc (Linux): for the load test's server CPU.

A server with child processes counts as a whole: utime + stime of the process
and every live descendant, plus the process's cutime + cstime (children it has already reaped).
"""

from __future__ import annotations

import os
from pathlib import Path

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (field 3 onwards), or None if it has gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def descendants(pid: int) -> list[int]:
    """Live descendants of pid (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def tree_cpu_s(pid: int) -> float:
    """Seconds of CPU used so far by pid and its descendants (user + system)."""
    total = 0
    for index, member in enumerate([pid, *descendants(pid)]):
        fields = _stat_fields(member)
        if fields is None:
            continue
        utime, stime, cutime, cstime = (int(value) for value in fields[11:15])  # stat fields 14-17
        total += utime + stime + (cutime + cstime if index == 0 else 0)
    return total / TICKS_PER_S
