"""The MFU numerator (model/training/flops.py) equals PyTorch's own count of a training step's matrix products."""

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from model.core.config import TransformerConfig
from model.training.flops import peak_flops, training_flops
from model.core.transformer import Transformer


@pytest.mark.parametrize("layers", [(2, 3), (1, 1)])
def test_training_flops_equal_flop_counter_of_forward_and_backward(layers):
    config = TransformerConfig(
        vocab_size=50,
        d_model=32,
        n_heads=4,
        n_encoder_layers=layers[0],
        n_decoder_layers=layers[1],
        d_ff=64,
        dropout=0.0,
        attention_dropout=0.0,
    )
    model = Transformer(config)
    src, tgt = torch.randint(4, 50, (3, 7)), torch.randint(4, 50, (3, 5))  # no padding: every token is real
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:  # math: attention as counted matmuls
        model(src, tgt).sum().backward()
    expected = training_flops(config, torch.full((3,), 7), torch.full((3,), 5))
    assert counter.get_total_flops() == pytest.approx(expected, rel=1e-9)


def test_padding_is_not_counted_and_lengths_add_up():
    config = TransformerConfig(vocab_size=50, d_model=32, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=64)
    one = training_flops(config, torch.tensor([7]), torch.tensor([5]))
    two = training_flops(config, torch.tensor([7, 3]), torch.tensor([5, 2]))
    assert two == pytest.approx(one + training_flops(config, torch.tensor([3]), torch.tensor([2])))


def test_peak_flops_by_device_name():
    assert peak_flops("NVIDIA H100 80GB HBM3") == 989.4e12
    assert peak_flops("NVIDIA H100 PCIe") == 756.0e12
    assert peak_flops("some CPU") is None


def test_cpu_peak_is_fma_units_times_lanes_times_two_times_clock(tmp_path):
    """The CPU float32 peak that benchmarks/train_speed.py divides by: 2 FMA units x lanes x 2 FLOPs x clock."""
    from model.training.flops import cpu_clock_hz, cpu_peak_flops

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\ncpu MHz\t\t: 2445.406\nflags\t\t: fpu avx avx2 fma\n", encoding="utf-8")
    assert cpu_clock_hz(cpuinfo) == 2445.406e6
    avx2, avx512 = frozenset({"avx", "avx2", "fma"}), frozenset({"avx2", "fma", "avx512f"})
    assert cpu_peak_flops(1, 2.445e9, avx2) == 2 * 8 * 2 * 2.445e9
    assert cpu_peak_flops(2, 3.0e9, avx512) == 2 * 2 * 16 * 2 * 3.0e9
    assert cpu_peak_flops(1, 0.0, avx2) is None  # no clock read: no peak, no MFU
    assert cpu_clock_hz(tmp_path / "missing") is None
