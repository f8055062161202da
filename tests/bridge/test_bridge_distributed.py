"""Two gloo processes give the single-process result (draws sharded by rank, statistics all-reduced)."""

import contextlib
import socket

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.laws import as_oracle

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
        with bridge.distributed.group_from_env() as inner:  # a group it did not create: left open
            assert (inner.rank, inner.size) == (rank, world_size)
        assert torch.distributed.is_initialized()
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
    # spawn, not fork: forking after JAX and torch have started their thread pools can deadlock
    tmp.start_processes(_worker, args=(2, _free_port(), str(out)), nprocs=2, join=True, start_method="spawn")
    got = np.load(out)
    one = _jobs(bridge.ExactModel(P), _samples())
    for key, val in one.items():
        np.testing.assert_allclose(got[key], val, rtol=1e-12, atol=1e-14, err_msg=key)


def test_world_without_a_group(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    w = bridge.distributed.world()
    assert (w.rank, w.size) == (0, 1)
    with bridge.distributed.group_from_env() as inner:  # outside torchrun: no group, a world of one
        assert (inner.rank, inner.size) == (0, 1) and not torch.distributed.is_initialized()
    assert list(w.shard(5)) == [0, 1, 2, 3, 4]
    assert list(bridge.distributed.World(1, 3).shard(8)) == [1, 4, 7]
    with pytest.raises(ValueError, match=r"^distributed: True needs"):
        bridge.estimate_profile(bridge.ExactModel(P), _samples(), n_per_level=2, distributed=True)


@pytest.mark.parametrize("fail", [False, True])
def test_group_from_env_closes_the_group_it_creates(monkeypatch, fail):
    """torchrun's environment for a world of one: the block owns the group and closes it,
    after an exception too (which propagates)."""
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(_free_port()))
    assert not torch.distributed.is_initialized()
    with pytest.raises(RuntimeError, match="inside") if fail else contextlib.nullcontext():
        with bridge.distributed.group_from_env() as w:
            assert torch.distributed.is_initialized() and (w.rank, w.size, w.backend) == (0, 1, "gloo")
            if fail:
                raise RuntimeError("inside")
    assert not torch.distributed.is_initialized()


@pytest.mark.slow  # ~10 s (torchrun, two processes); default twin: test_two_gloo_processes_equal_one (every
# estimator sharded over two real processes equals one) and the CLI estimate tests in one process
def test_estimate_command_under_torchrun_equals_one_process(tmp_path, monkeypatch, capsys):
    """The user's path: ``torchrun --nproc_per_node 2 -m mdmtheory estimate ...`` (gloo on CPU)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.path.exists(torchrun):
        pytest.skip("torchrun is not installed beside this python")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

    torch.manual_seed(0)
    ckpt = tmp_path / "m.safetensors"
    save_checkpoint(TinyMDM(TinyConfig(vocab_size=3, seq_len=4, d_model=16, n_layers=1, n_heads=2, d_ff=16)), ckpt)
    data = tmp_path / "x.npy"
    np.save(data, np.random.default_rng(0).integers(0, 3, size=(40, 4)))
    args = ["-m", "mdmtheory", "estimate", "--model", str(ckpt), "--data", str(data),
            "--n-per-level", "30", "--sizes", "2,2", "--n-path", "20", "--seed", "3", "--json"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(key, raising=False)
    from mdmtheory.cli import main  # one process, in this one (a subprocess costs ~4 s of imports)

    assert main(args[2:]) == 0
    one_stdout = capsys.readouterr().out
    two = subprocess.run([torchrun, "--nproc_per_node", "2", "--master_port", str(_free_port()), *args],
                         capture_output=True, text=True, timeout=300, env=env)
    assert two.returncode == 0, two.stderr[-2000:]
    a, b = json.loads(one_stdout), json.loads(two.stdout)  # rank 0 alone prints: one JSON object
    assert (a["world_size"], b["world_size"]) == (1, 2)
    np.testing.assert_allclose(b["values"], a["values"], rtol=1e-12)
    np.testing.assert_allclose(b["stderr"], a["stderr"], rtol=1e-9)
    assert b["path"]["value"] == pytest.approx(a["path"]["value"], rel=1e-12)


def test_bad_levels_option_is_refused_before_loading(capsys):
    # formerly int('a') raised a bare ValueError after the model was loaded
    with pytest.raises(SystemExit):
        bridge.distributed.main(["profile", "--hf", "/nonexistent", "--samples", "x.npy", "--levels", "1,a"])
    assert "--levels: expected comma-separated integers" in capsys.readouterr().err
