"""Two gloo processes give the single-process result (draws sharded by rank, statistics all-reduced)."""

import socket

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.structured import as_oracle

torch = pytest.importorskip("torch")
import torch.multiprocessing as tmp  # noqa: E402

from mdmtheory import bridge  # noqa: E402

P = mt.families.dirichlet(5, 2, seed=21)
SCHED = mt.Schedule((2, 2, 1))


def _jobs(model, xs):
    prof = bridge.estimate_profile(model, xs, n_per_level=30, seed=1)
    cmp = bridge.compare_plans(model, xs, [SCHED, mt.Schedule((1, 1, 3))], n=41, seed=2)
    fac = bridge.estimate_factorization_error(model, xs, SCHED, "confidence", n=37, seed=3)
    rnd = bridge.estimate_factorization_error(model, xs, SCHED, "random", n=37, seed=3)
    dya = bridge.estimate_dyadic(model, xs, 0.3, 0.8, n=23, seed=4)
    lrn = bridge.estimate_learning_error(model, P, n_per_level=10, seed=5)
    return {
        "profile": np.concatenate([prof.values, prof.stderr, [prof.forwards]]),
        "plans": np.concatenate([cmp.values, cmp.stderr, cmp.difference_stderr.ravel(), [cmp.forwards]]),
        "factorization": np.array([fac.value, fac.stderr, fac.forwards, rnd.value, rnd.stderr]),
        "dyadic": np.array([dya.value, dya.stderr, dya.forwards]),
        "learning": np.concatenate([lrn.values, lrn.stderr]),
    }


def _samples():
    return as_oracle(P).sample(60, np.random.default_rng(0))


def _worker(rank, world_size, port, out_path):
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    try:
        res = _jobs(bridge.ExactModel(P), _samples())
        w = bridge.distributed.world()
        assert (w.rank, w.size, w.backend) == (rank, world_size, "gloo")
        if rank == 0:
            np.savez(out_path, **res)
    finally:
        torch.distributed.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_gloo_processes_equal_one(tmp_path):
    out = tmp_path / "rank0.npz"
    # fork: the children inherit the imported modules (spawn re-imports jax and torch: ~20 s)
    tmp.start_processes(_worker, args=(2, _free_port(), str(out)), nprocs=2, join=True, start_method="fork")
    got = np.load(out)
    one = _jobs(bridge.ExactModel(P), _samples())
    for key, val in one.items():
        np.testing.assert_allclose(got[key], val, rtol=1e-12, atol=1e-14, err_msg=key)


def test_world_without_a_group():
    w = bridge.distributed.world()
    assert (w.rank, w.size) == (0, 1)
    assert list(w.shard(5)) == [0, 1, 2, 3, 4]
    assert list(bridge.distributed.World(1, 3).shard(8)) == [1, 4, 7]
    with pytest.raises(ValueError, match=r"^distributed: True needs"):
        bridge.estimate_profile(bridge.ExactModel(P), _samples(), n_per_level=2, distributed=True)
