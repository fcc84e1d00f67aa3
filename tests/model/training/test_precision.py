"""`--precision auto` (model/training/precision.py): bf16 only on hardware with native bf16, with flags injected."""

from __future__ import annotations

import pytest

from model.training.precision import choose_precision, cpu_flags, cpu_model

EPYC_FLAGS = frozenset({"fpu", "sse2", "avx2", "avx512f", "avx512bw"})  # AVX-512 but no bf16 instructions


@pytest.mark.parametrize(
    "device, cuda_bf16, flags, expected",
    [
        ("cuda", True, frozenset(), "bf16"),
        ("cuda", False, EPYC_FLAGS, "fp32"),
        ("cpu", True, EPYC_FLAGS, "fp32"),  # a CUDA answer says nothing about the CPU
        ("cpu", False, EPYC_FLAGS | {"avx512_bf16"}, "bf16"),
        ("cpu", False, EPYC_FLAGS | {"amx_bf16", "amx_tile"}, "bf16"),
        ("cpu", False, frozenset(), "fp32"),
    ],
)
def test_auto_picks_bf16_only_with_native_support(device, cuda_bf16, flags, expected):
    precision = choose_precision("auto", device, cuda_bf16, flags)
    assert precision.name == expected and precision.autocast == (expected == "bf16")
    assert precision.reason.startswith("auto:")


def test_the_reason_names_the_flag_found():
    assert "amx_bf16" in choose_precision("auto", "cpu", False, frozenset({"amx_bf16"})).reason


@pytest.mark.parametrize("requested", ["bf16", "fp32"])
def test_an_explicit_precision_is_kept_on_any_hardware(requested):
    for device in ("cpu", "cuda"):
        precision = choose_precision(requested, device, False, frozenset())
        assert precision.name == requested and "asked for" in precision.reason


def test_unknown_precision_is_a_clear_error():
    with pytest.raises(ValueError, match="precision must be one of"):
        choose_precision("fp16", "cpu", False, frozenset())


def test_flags_and_model_are_read_from_a_cpuinfo_file(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx512_bf16 sse2\n\n"
        "processor\t: 1\nflags\t\t: fpu\n"
    )
    assert cpu_flags(cpuinfo) == frozenset({"fpu", "avx512_bf16", "sse2"})
    assert cpu_model(cpuinfo) == "Test CPU 9000"
    assert cpu_flags(tmp_path / "missing") == frozenset() and cpu_model(tmp_path / "missing") == "unknown"
