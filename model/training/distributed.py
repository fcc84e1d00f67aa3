"""Several processes under torchrun (DistributedDataParallel), or one: the rank, the world and the device."""

from __future__ import annotations

import os

import torch


class Distributed:
    """torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK), or a single process."""

    def __init__(self, device_choice: str):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        cuda = torch.cuda.is_available() and device_choice in ("auto", "cuda")
        if device_choice == "cuda" and not torch.cuda.is_available():
            raise SystemExit("error: --device cuda but no CUDA device is available")
        self.device = torch.device(f"cuda:{local_rank}" if cuda else "cpu")
        if cuda:
            torch.cuda.set_device(self.device)
        if self.world > 1:
            torch.distributed.init_process_group("nccl" if cuda else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.world > 1:
            torch.distributed.barrier()
