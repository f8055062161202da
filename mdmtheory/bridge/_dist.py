r"""The primitives of scale-out on ``torch.distributed``: the world, the all-reduce of sums,
the group's life under torchrun (the jobs and the docs: :mod:`mdmtheory.bridge.distributed`)."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import torch

from .._validate import float_array as _float_array, int_arg as _int_arg, _short
from ._checks import MAX_DRAWS

__all__ = [
    "World",
    "world",
    "all_reduce_sum",
    "init_from_env",
    "group_from_env",
]


#: Largest world size accepted by :class:`World`.
MAX_WORLD = 1 << 20


class World:
    """Rank, size and backend of the process group in use (``(0, 1, None)`` without one)."""

    def __init__(self, rank: int = 0, size: int = 1, backend: str | None = None):
        size = _int_arg(size, "size", 1, MAX_WORLD)
        rank = _int_arg(rank, "rank", 0, size - 1)
        if backend is not None and not isinstance(backend, str):
            raise ValueError(f"backend: expected None or a backend name such as 'gloo', got {_short(backend)}")
        self.rank, self.size, self.backend = rank, size, backend

    def shard(self, n: int) -> np.ndarray:
        """The draw indices g < n of this rank: g ≡ rank (mod size); n <= MAX_DRAWS."""
        n = _int_arg(n, "n", 0, MAX_DRAWS)
        return np.arange(self.rank, n, self.size, dtype=np.int64)

    def __repr__(self) -> str:
        return f"World(rank={self.rank}, size={self.size}, backend={self.backend!r})"


def world(distributed=None) -> World:
    """The process group to shard over: ``None`` = the default group if initialized."""
    if distributed is not None and not isinstance(distributed, (bool, np.bool_)):
        raise ValueError(f"distributed: expected None (auto), True or False, got {_short(distributed)}")
    if distributed is not None and not distributed:
        return World()
    dist = torch.distributed
    ready = dist.is_available() and dist.is_initialized()
    if distributed is not None and not ready:
        raise ValueError("distributed: True needs an initialized torch.distributed process group (torchrun)")
    if not ready:
        return World()
    return World(dist.get_rank(), dist.get_world_size(), dist.get_backend())


def all_reduce_sum(w: World, arrays, device=None):
    """Sum float64 numpy arrays over the ranks (one all-reduce); unchanged when size == 1."""
    if not isinstance(w, World):
        raise ValueError(f"w: expected a World (mdmtheory.bridge.distributed.world()), got {_short(w)}")
    if not isinstance(arrays, (list, tuple)):
        raise ValueError(f"arrays: expected a list of numeric arrays, got {_short(arrays)}")
    arrays = [_float_array(a, "arrays", finite=False) for a in arrays]
    if w.size == 1:
        return arrays
    flat = np.concatenate([a.ravel() for a in arrays])
    dev = device if (w.backend == "nccl" and device is not None) else "cpu"
    t = torch.from_numpy(flat).to(dev)
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.SUM)
    flat = t.cpu().numpy()
    out, lo = [], 0
    for a in arrays:
        out.append(flat[lo : lo + a.size].reshape(a.shape))
        lo += a.size
    return out


def init_from_env() -> World:
    """Initialize the default group from torchrun's environment (nccl with CUDA, else gloo)."""
    dist = torch.distributed
    if "RANK" in os.environ and not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group(backend)
    return world()


@contextlib.contextmanager
def group_from_env():
    """:func:`init_from_env` for the length of a ``with`` block, yielding the :class:`World`.

    On leaving the block, a group this call created is closed on every rank: a barrier (no
    rank tears its connections down while another still reads them), then
    ``destroy_process_group``. A process that exits with a live gloo group can abort
    (SIGABRT) when a peer that finished first closes its sockets. After an exception the group
    is destroyed without the barrier, which the other ranks may never reach. A group
    initialized before the block is left open for its owner.
    """
    dist = torch.distributed
    owned = "RANK" in os.environ and not dist.is_initialized()
    w = init_from_env()
    try:
        yield w
    except BaseException:
        if owned and dist.is_initialized():  # no barrier: the other ranks may never reach it
            dist.destroy_process_group()
        raise
    if owned and dist.is_initialized():
        try:
            dist.barrier()
        finally:
            dist.destroy_process_group()
