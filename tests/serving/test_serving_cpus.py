"""The default worker count comes from the CPUs the process may use, not the machine's core count
(serving/cpus.py): affinity capped by the cgroup CPU quota, v2 and v1, on any ancestor cgroup.
Fake cgroup trees in tmp_path; nothing reads the real /sys."""

from __future__ import annotations

import pytest

from serving import cpus, default_workers
from serving.pool import WORKERS_ENV


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    "affinity, quota, expected",
    [
        (16, None, 16),  # no quota: every CPU the process may run on
        (16, 2.0, 2),  # a Space's 2 vCPUs on a 16-core host
        (16, 1.5, 1),  # rounded down: two workers would be throttled
        (16, 0.5, 1),  # at least one
        (2, 8.0, 2),  # affinity is the tighter limit
    ],
)
def test_usable_cpus_is_the_tighter_of_affinity_and_quota(affinity, quota, expected):
    assert cpus.usable_cpus(affinity, quota) == expected


def test_cgroup_v2_quota_of_the_process_cgroup(tmp_path):
    write(tmp_path / "kubepods" / "pod1" / "cpu.max", "200000 100000\n")
    assert cpus.cgroup_cpu_quota("0::/kubepods/pod1\n", tmp_path) == 2.0


def test_cgroup_v2_tightest_ancestor_wins_and_max_is_no_limit(tmp_path):
    write(tmp_path / "cpu.max", "max 100000\n")
    write(tmp_path / "kubepods" / "cpu.max", "150000 100000\n")
    write(tmp_path / "kubepods" / "pod1" / "cpu.max", "max 100000\n")
    assert cpus.cgroup_cpu_quota("0::/kubepods/pod1\n", tmp_path) == 1.5
    assert cpus.cgroup_cpu_quota("0::/\n", tmp_path) is None  # the root says max
    assert cpus.cgroup_cpu_quota("0::/\n", tmp_path / "missing") is None  # no cgroup files at all


def test_cgroup_v1_quota_and_unlimited(tmp_path):
    write(tmp_path / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us", "400000\n")
    write(tmp_path / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_period_us", "100000\n")
    text = "12:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n"
    assert cpus.cgroup_cpu_quota(text, tmp_path) == 4.0
    write(tmp_path / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us", "-1\n")
    assert cpus.cgroup_cpu_quota(text, tmp_path) is None


def test_default_workers_uses_the_process_cpus_unless_pinned(monkeypatch):
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    monkeypatch.setattr("serving.pool.process_cpus", lambda: 3)
    assert default_workers() == 3
    monkeypatch.setenv(WORKERS_ENV, "0")  # pinned (the deploy sets it per hardware)
    assert default_workers() == 0


def test_this_process_gets_at_least_one_cpu_and_no_more_than_its_affinity():
    import os

    assert 1 <= cpus.process_cpus() <= len(os.sched_getaffinity(0))
