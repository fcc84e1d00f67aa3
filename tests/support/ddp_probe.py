"""Run by the torchrun test (tests/model/training/test_distributed.py), one copy per rank: the training command's
`main`, each rank with its own run directory and, afterwards, its initial and final weights in PROBE_DIR.

    torchrun --standalone --nproc_per_node 2 tests/support/ddp_probe.py --data ... --out RUN ...

Each rank trains into RUN/rank<R> so the test can see which ranks wrote run files (only rank 0
should), and saves the weights it started and ended with as PROBE_DIR/{initial,final}-rank<R>.safetensors so the test
can check that DistributedDataParallel kept every rank's copy identical.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script by torchrun

from safetensors.torch import save_file  # noqa: E402

from model.training import train  # noqa: E402


class RecordedTransformer(train.Transformer):
    """The training command's Transformer, remembered so its final weights can be saved."""

    built: list["RecordedTransformer"] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initial = {name: tensor.detach().clone() for name, tensor in self.state_dict().items()}
        RecordedTransformer.built.append(self)


def run(argv: list[str]) -> int:
    rank = os.environ["RANK"]
    out = argv[argv.index("--out") + 1]
    argv = [*argv]
    argv[argv.index("--out") + 1] = str(Path(out) / f"rank{rank}")
    train.Transformer = RecordedTransformer
    code = train.main(argv)
    model = RecordedTransformer.built[-1]
    for stage, weights in (("initial", model.initial), ("final", model.state_dict())):
        save_file(
            {name: tensor.contiguous() for name, tensor in weights.items()},
            str(Path(os.environ["PROBE_DIR"]) / f"{stage}-rank{rank}.safetensors"),
        )
    return code


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
