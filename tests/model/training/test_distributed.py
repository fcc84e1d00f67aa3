"""The README's several-process training (`torchrun --nproc_per_node N -m model.training.train`), run for real
with 2 processes on the CPU (gloo): DistributedDataParallel keeps every rank's weights identical and
only rank 0 writes the run files (section 5.2 trains on 8 GPUs; the same script runs on any N)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

PROBE = Path(__file__).resolve().parents[2] / "support" / "ddp_probe.py"
TINY = [
    "--d-model",
    "32",
    "--heads",
    "4",
    "--encoder-layers",
    "1",
    "--decoder-layers",
    "1",
    "--d-ff",
    "64",
    "--vocab-size",
    "400",
    "--max-tokens",
    "120",
    "--warmup",
    "5",
    "--bleu-sentences",
    "2",
    "--log-every",
    "1",
    "--threads",
    "1",
    "--precision",
    "fp32",
    "--dropout",
    "0.1",
]


@pytest.fixture
def corpus(tmp_path, pairs):
    (tmp_path / "train.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    return tmp_path / "train"


@pytest.mark.slow
def test_torchrun_two_cpu_processes_train_one_model_and_only_rank_0_writes(corpus, tmp_path):
    run, probe = tmp_path / "run", tmp_path / "probe"
    probe.mkdir()
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        str(PROBE),
        "--data",
        str(corpus),
        "--val",
        str(corpus),
        "--out",
        str(run),
        *TINY,
        "--max-steps",
        "6",
        "--eval-every",
        "3",
    ]
    environment = {**os.environ, "PROBE_DIR": str(probe), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "world 2" in result.stdout  # both processes joined one process group

    rank0, rank1 = (load_file(str(probe / f"final-rank{rank}.safetensors")) for rank in (0, 1))
    assert rank0.keys() == rank1.keys()
    for name in rank0:  # gradients were averaged across ranks at every step: one model, two copies
        torch.testing.assert_close(rank0[name], rank1[name], rtol=0, atol=0, msg=name)
    initial = load_file(str(probe / "initial-rank0.safetensors"))
    assert any(not torch.equal(initial[name], rank0[name]) for name in rank0)  # and it did train

    written = {path.relative_to(run / "rank0").as_posix() for path in (run / "rank0").rglob("*") if path.is_file()}
    assert {"training_log.json", "film.npz", "best/metrics.json", "last/training_state.json"} <= written
    assert not [path for path in (run / "rank1").rglob("*") if path.is_file()]  # rank 1 wrote nothing
