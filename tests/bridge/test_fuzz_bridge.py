"""Fuzz of the torch/data side: bridge models and estimators, tiny models, training,
attention, datasets, checkpoints and diagnostics, with hostile arguments and hostile files.

Contract (the harness of tests/contract/test_fuzz.py, :func:`guarded`): a call either answers, within
its time limit, or raises a ``ValueError`` whose message starts with the argument's name.
Sizes beyond the documented maxima (``MAX_*`` constants) must be refused before any work, so
the hostile values here include 10**12, 2**40 and 2**63; valid values stay tiny (d <= 5,
d_model <= 16) so that accepted calls are fast. Accepted calls are checked against
invariants (finite estimates, non-negative standard errors, attention shares in [0, 1] that
sum to 1 over a partition, round trips of files and checkpoints).

Two profiles per property (:func:`twice`): fast and derandomized in ``make test``, and a
``slow`` one (``pytest -m slow tests/bridge/test_fuzz_bridge.py -s`` prints the call count).
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from hypothesis import strategies as st  # noqa: E402
from fuzz_harness import _deep as _deep_lists  # noqa: E402
from fuzz_harness import guarded, twice  # noqa: E402

import mdmtheory as mt  # noqa: E402
from mdmtheory import bridge
from mdmtheory.data import datasets
from mdmtheory.samplers import diagnostics  # noqa: E402
from mdmtheory.bridge import attention as att  # noqa: E402
from mdmtheory.report import plots  # noqa: E402
from mdmtheory.bridge import distributed as dist  # noqa: E402
from mdmtheory.bridge import tiny  # noqa: E402
from mdmtheory.bridge import train as tr  # noqa: E402

torch.set_num_threads(1)
THREADS = torch.get_num_threads()
COUNT = {"n": 0}


def call(fn, *args, **kw):
    COUNT["n"] += 1
    try:
        return guarded(fn, *args, **kw)
    finally:
        if torch.get_num_threads() != THREADS:  # train(num_threads=...) sets the global count
            torch.set_num_threads(THREADS)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print(f"\nbridge fuzz: {COUNT['n']} generated calls")


# -- fixtures built once (tiny) ---------------------------------------------------------------
def _deep(n):
    """A list nested n deep with integer leaves (test_fuzz's, shared)."""
    return _deep_lists(n, leaf=(1, 0))


torch.manual_seed(0)
CFG = tiny.TinyConfig(vocab_size=3, seq_len=4, d_model=8, n_layers=1, n_heads=2, d_ff=8)
MDM = tiny.TinyMDM(CFG).eval()
AR = tiny.TinyMDM(tiny.TinyConfig(vocab_size=3, seq_len=4, d_model=8, n_layers=1, n_heads=2, d_ff=8, causal=True)).eval()
LAW = mt.Joint(np.random.default_rng(1).dirichlet(np.ones(8)).reshape(2, 2, 2))
EXACT = bridge.ExactModel(LAW)
XS = np.random.default_rng(2).integers(0, 3, (6, 4))
XE = np.asarray(EXACT.law.sample(6, np.random.default_rng(3)), dtype=np.int64)
TMP = tempfile.mkdtemp(prefix="mdm-fuzz-bridge-")
CKPT = os.path.join(TMP, "good.safetensors")
tiny.save_checkpoint(MDM, CKPT, info={"seed": 0})

HOSTILE = [
    None, True, False, np.bool_(True), "3", "0.5", "", "nope", b"2", 2**31, 2**40, 2**63, 2**64, 10**12, 10**400,
    -(2**63), -1, 0, 1.5, 2.0, -0.0, math.nan, math.inf, -math.inf, 1e-300, 1e300, Fraction(1, 3),
    Decimal("1e400"), 1 + 1j, [], [1], [[1, "x"]], {}, {"a": 1}, object(), np.array([1, 2]),
    np.array([0.5, 0.5]), np.array(["a", "b"]), np.zeros((2, 2), dtype=object), _deep(40), _deep(3000),
    [[0, 1], [0]], torch.zeros(2, 4), torch.ones(1, 4, dtype=torch.bool), np.full((2, 4), -1),
    np.full((2, 4), 2**62, dtype=np.int64), np.array([[2**64 - 1] * 4], dtype=np.uint64),
]
hostile = st.sampled_from(HOSTILE)


def maybe(valid):
    return st.one_of(valid, valid, hostile)


seeds = maybe(st.integers(0, 5))
tiny_counts = maybe(st.integers(2, 4))
samples = maybe(st.sampled_from([XS, XS[:2], XS.tolist(), torch.as_tensor(XS)]))
models = maybe(st.sampled_from([MDM, EXACT, "mdm-wrapped"]))
devices = st.one_of(st.just(None), st.just("cpu"), st.sampled_from(["nope", "cuda:99", "meta", 3, torch.float32]), hostile)
dtypes = st.one_of(st.just(None), st.just(torch.float64), st.sampled_from(["float", torch.int64, float, "float32"]), hostile)
mask_ids = st.one_of(st.just(3), st.sampled_from([99, 2**31, 4, 0]), hostile)
vocabs = st.one_of(st.none(), st.just([0, 1, 2]), st.sampled_from([[0, 1, 3], [0, 0], [7, 8], [-1, 0], [0.0, 1.0],
                                                                     "abc", [2**63, 1]]), hostile)


def _model(m):
    return bridge.as_masked_model(MDM) if isinstance(m, str) and m == "mdm-wrapped" else m


def _xs_for(m):
    return XE if m is EXACT else XS


# -- targets: (name, function of drawn args) ---------------------------------------------------
def bridge_calls(draw):
    k = draw(st.integers(0, 20))
    m = draw(models)
    xs = draw(samples)
    if isinstance(xs, np.ndarray) and xs is not None and m is EXACT and xs.shape[-1:] == (4,):
        xs = XE if draw(st.booleans()) else xs
    seed = draw(seeds)
    if k == 0:
        return "MaskedModel", lambda: bridge.MaskedModel(
            draw(st.sampled_from([MDM, EXACT, AR, lambda ids: torch.zeros(ids.shape + (4,)), 5, "m"])),
            mask_id=draw(mask_ids), vocab=draw(vocabs), shift=draw(maybe(st.booleans())),
            max_batch=draw(maybe(st.integers(1, 4))), device=draw(devices), dtype=draw(dtypes))
    if k == 1:
        return "estimate_profile", lambda: bridge.estimate_profile(
            _model(m), xs, levels=draw(st.one_of(st.none(), st.just([0, 2]), st.just([5]), st.just([1, 1]), hostile)),
            n_per_level=draw(tiny_counts), seed=seed, distributed=draw(st.one_of(st.none(), st.just(False), hostile)))
    if k == 2:
        return "compare_plans", lambda: bridge.compare_plans(
            _model(m), xs, draw(maybe(st.sampled_from([[[2, 2], [1, 3]], [2, 2], [[1, 1, 1, 1]], mt.Schedule([2, 2]),
                                                       [[3, 3]], [[2, 1]], [mt.Grid((0.5,))]]))),
            n=draw(tiny_counts), seed=seed)
    if k == 3:
        return "estimate_path_cross_entropy", lambda: bridge.estimate_path_cross_entropy(
            _model(m), xs, draw(maybe(st.sampled_from([[2, 2], [4], [1, 3]]))), n=draw(tiny_counts), seed=seed)
    if k == 4:
        return "estimate_factorization_error", lambda: bridge.estimate_factorization_error(
            _model(m), xs, draw(maybe(st.sampled_from([[2, 2], [4], None]))),
            draw(maybe(st.sampled_from(["random", "confidence", "margin", "entropy", "bogus"]))),
            n=draw(st.one_of(st.none(), tiny_counts)), seed=seed)
    if k == 5:
        return "estimate_learning_error", lambda: bridge.estimate_learning_error(
            draw(maybe(st.just(EXACT))), draw(maybe(st.just(LAW))),
            levels=draw(st.one_of(st.none(), st.just([0, 2]), hostile)), n_per_level=draw(tiny_counts), seed=seed)
    if k == 6:
        return "estimate_dyadic", lambda: bridge.estimate_dyadic(
            _model(m), xs, draw(maybe(st.sampled_from([0.1, 0.25]))), draw(maybe(st.sampled_from([0.5, 0.9]))),
            weights=draw(maybe(st.sampled_from(["corrected", "stated"]))), n=draw(st.one_of(st.none(), tiny_counts)),
            seed=seed)
    if k == 7:
        est = bridge.estimate_profile(EXACT, XE, n_per_level=3, seed=0)
        return "optimal_schedule_estimate", lambda: bridge.optimal_schedule_estimate(
            draw(maybe(st.just(est))), draw(maybe(st.integers(1, 3))), n_resamples=draw(maybe(st.integers(1, 5))),
            seed=seed, confidence=draw(maybe(st.floats(0.01, 0.99))))
    if k == 8:
        mm = bridge.as_masked_model(EXACT)
        return "MaskedModel.log_probs/score", lambda: (
            mm.log_probs(draw(maybe(st.sampled_from([np.full((2, 3), -1), XE[:2], np.zeros((1, 3), int)])))),
            mm.score(draw(maybe(st.sampled_from([np.full((2, 3), -1)]))), draw(maybe(st.sampled_from([XE[:2]])))))
    if k == 9:
        return "ModelOracle", lambda: bridge.ModelOracle(draw(maybe(st.just(EXACT))), d=draw(st.one_of(st.none(), maybe(st.just(3))))).conditionals(
            draw(maybe(st.just(XE[:2]))), draw(maybe(st.just(np.ones((2, 3), bool)))))
    if k == 10:
        return "ExactModel.forward", lambda: EXACT(draw(maybe(st.sampled_from([torch.full((1, 3), 2), torch.zeros((2, 3), dtype=torch.long)]))))
    if k == 11:
        return "TinyConfig/TinyMDM", lambda: tiny.TinyMDM(tiny.TinyConfig(
            vocab_size=draw(maybe(st.integers(2, 5))), seq_len=draw(maybe(st.integers(1, 5))),
            d_model=draw(maybe(st.sampled_from([4, 8, 16]))), n_layers=draw(maybe(st.integers(1, 2))),
            n_heads=draw(maybe(st.sampled_from([1, 2, 4]))), d_ff=draw(maybe(st.sampled_from([4, 16]))),
            causal=draw(maybe(st.booleans()))))
    if k == 12:
        return "TinyMDM.forward", lambda: draw(st.sampled_from([MDM, AR]))(
            draw(maybe(st.sampled_from([torch.zeros((2, 4), dtype=torch.long), torch.full((1, 4), 3), torch.zeros((1, 7), dtype=torch.long)]))),
            output_attentions=draw(maybe(st.booleans())))
    if k == 13:
        return "train", lambda: tr.train(
            _fresh(draw(maybe(st.just("fresh")))), draw(samples),
            steps=draw(maybe(st.integers(1, 2))), batch_size=draw(maybe(st.integers(1, 4))),
            lr=draw(maybe(st.sampled_from([1e-3, 1e-2]))), seed=seed,
            weighting=draw(maybe(st.sampled_from(["elbo", "mean"]))), weight_decay=draw(maybe(st.just(0.0))),
            log_every=draw(maybe(st.integers(1, 2))), num_threads=draw(st.one_of(st.none(), st.just(1), hostile)),
            progress=draw(st.one_of(st.just(False), hostile)))
    if k == 14:
        g = torch.Generator().manual_seed(0)
        return "mdm_loss/ar_loss", lambda: (
            tr.mdm_loss(draw(maybe(st.just(MDM))), draw(maybe(st.just(torch.as_tensor(XS)))), draw(maybe(st.just(g))),
                        weighting=draw(maybe(st.just("elbo")))),
            tr.ar_loss(draw(maybe(st.just(AR))), draw(maybe(st.just(torch.as_tensor(XS))))))
    if k == 15:
        return "checkpoints", lambda: _checkpoint_call(draw)
    if k == 16:
        return "World/world/all_reduce_sum", lambda: (
            dist.World(draw(maybe(st.just(0))), draw(maybe(st.integers(1, 3))), draw(st.one_of(st.none(), hostile))).shard(
                draw(maybe(st.integers(0, 9)))),
            dist.world(draw(st.one_of(st.none(), st.just(False), hostile))),
            dist.all_reduce_sum(draw(maybe(st.just(dist.World()))), draw(maybe(st.just([np.zeros(2), [1.0]])))))
    if k == 17:
        return "run_profile", lambda: dist.run_profile(EXACT, draw(maybe(st.just(XE))), n_per_level=draw(tiny_counts), seed=seed)
    if k == 18:
        return "from_pretrained", lambda: bridge.from_pretrained(
            draw(st.one_of(st.just(TMP), hostile)), mask_id=draw(mask_ids), shift=draw(maybe(st.booleans())),
            trust_remote_code=draw(st.one_of(st.just(False), hostile)), device=draw(devices), dtype=draw(dtypes))
    if k == 19:
        pr = bridge.estimate_profile(EXACT, XE, n_per_level=2)
        return "ProfileEstimate.ci", lambda: pr.ci(draw(maybe(st.floats(0.01, 0.99))))
    return "as_masked_model", lambda: bridge.as_masked_model(draw(maybe(st.sampled_from([MDM, EXACT]))),
                                                               **draw(st.sampled_from([{}, {"mask_id": 3}, {"mask_id": 99}, {"shift": "no"}])))


def _fresh(m):
    """A new tiny model for "fresh" (training changes it in place), else the hostile value."""
    return tiny.TinyMDM(CFG) if isinstance(m, str) and m == "fresh" else m


def _checkpoint_call(draw):
    k = draw(st.integers(0, 3))
    if k == 0:
        return tiny.load_checkpoint(draw(st.one_of(st.just(CKPT), st.just(CKPT[:-12] + ".json"), hostile)), device=draw(devices))
    if k == 1:
        return tiny.read_checkpoint_info(draw(st.one_of(st.just(CKPT), hostile)))
    if k == 2:
        return tiny.load_pretrained(draw(maybe(st.sampled_from(tiny.PRETRAINED))), device=draw(devices))
    path = draw(st.one_of(st.just(os.path.join(TMP, "w.safetensors")), st.just(os.path.join(TMP, "missing", "w.safetensors")),
                          st.just(os.path.join(TMP, "w.pt")), hostile))
    return tiny.save_checkpoint(draw(maybe(st.just(MDM))), path,
                                info=draw(st.one_of(st.none(), st.just({"a": 1}), st.just({"x": object()}), st.just({"n": math.nan}),
                                                    st.just({"d": _deep(3000)}), hostile)))


def _check_answer(name, out):
    """Invariants of accepted answers."""
    if isinstance(out, bridge.ProfileEstimate):
        assert np.all(np.isfinite(out.values)) and np.all(out.stderr >= 0), name
        if out.quantity == "learning_error":
            assert np.all(out.values >= -1e-12), name
    if isinstance(out, bridge.PlanComparison):
        assert np.all(np.isfinite(out.values)) and np.allclose(out.difference, -out.difference.T), name
    if isinstance(out, (bridge.PathEstimate, bridge.FactorizationEstimate, bridge.DyadicModelEstimate)):
        assert math.isfinite(out.value) and out.stderr >= 0, name
    if isinstance(out, bridge.ScheduleEstimate):
        assert 0 <= out.stability <= 1 and sum(out.alternatives.values()) == out.n_resamples, name


@twice(150, 3500, st.data())
def _bridge_hostile(data):
    name, thunk = bridge_calls(data.draw)
    ok, out = call(thunk)
    if ok:
        _check_answer(name, out)


test_bridge_hostile, test_bridge_hostile_slow = _bridge_hostile


# -- attention and diagnostics ----------------------------------------------------------------
def _maps(rng, B=2, L=4):
    a = rng.random((B, L, L)) + 1e-3
    return a / a.sum(-1, keepdims=True)


MAPS = _maps(np.random.default_rng(0))
maps_s = maybe(st.sampled_from([MAPS, MAPS[0], torch.as_tensor(MAPS), MAPS * 2, -MAPS, MAPS.tolist()]))
sets_s = maybe(st.sampled_from([[0], [1, 3], np.array([True, False, False, True]), [4], [-1], [0.5], np.ones((3, 4), bool)]))


def attention_calls(draw):
    k = draw(st.integers(0, 16))
    eps = draw(maybe(st.sampled_from([0.0, 1.0, 3.0])))
    if k == 0:
        return "received_attention", lambda: att.received_attention(draw(maps_s))
    if k == 1:
        return "anchors", lambda: att.anchors(draw(maybe(st.sampled_from([MAPS[0, 0], MAPS.mean(1)]))), eps=eps)
    if k == 2:
        return "absorption", lambda: att.absorption(draw(maps_s), draw(sets_s))
    if k == 3:
        return "absorption_stats", lambda: att.absorption_stats(draw(maybe(st.just(np.ones((3, 2))))), axis=draw(maybe(st.integers(-2, 1))))
    if k == 4:
        return "drift", lambda: att.drift(draw(maybe(st.just(MAPS.mean(1)))), eps=eps)
    if k == 5:
        return "row_entropy", lambda: att.row_entropy(draw(maps_s))
    if k == 6:
        return "masked_share", lambda: att.masked_share(draw(maps_s), draw(sets_s), queries=draw(maybe(st.sampled_from(["all", "masked"]))))
    if k == 7:
        return "summarize_maps", lambda: att.summarize_maps(
            draw(maybe(st.just(MAPS[:, None]))), draw(maybe(st.sampled_from([np.array([[True, False, True, False]] * 2),
                                                                             np.array([[0.5] * 4] * 2), [[1, 0, 1, 0]] * 2]))))
    if k == 8:
        return "attention_maps", lambda: att.attention_maps(
            draw(maybe(st.sampled_from([MDM, AR]))), draw(maybe(st.sampled_from([np.zeros((2, 4), int), [[0, 1, 2, 3]], np.zeros((2, 4)),
                                                                                 np.full((1, 4), -1)]))),
            batch_size=draw(maybe(st.integers(1, 3))))
    if k == 9:
        return "trace_forward", lambda: att.trace_forward(
            AR, draw(maybe(st.just(np.zeros((2, 4), int)))), revealed=draw(st.one_of(st.none(), maybe(st.just(np.ones((2, 4), bool))))),
            keep=draw(maybe(st.sampled_from(["full", "summary"]))), batch_size=draw(maybe(st.integers(1, 3))))
    if k == 10:
        base = draw(maybe(st.sampled_from([MDM, bridge.as_masked_model(MDM)])))
        wrap = draw(st.one_of(st.none(), st.fixed_dictionaries(
            {"mask_id": mask_ids, "vocab": vocabs, "shift": maybe(st.booleans())})))  # the model's own options

        def model():
            return base if wrap is None else bridge.MaskedModel(MDM, **wrap)

        return "trace_sampling", lambda: att.trace_sampling(
            model(), draw(maybe(st.just(4))),
            draw(maybe(st.sampled_from([mt.Schedule([2, 2]), None, [1, 3]]))),
            draw(maybe(st.sampled_from(["random", "confidence", "threshold"]))),
            n=draw(maybe(st.integers(1, 3))), seed=draw(seeds), keep=draw(maybe(st.sampled_from(["full", "summary"]))),
            batch_size=draw(maybe(st.integers(1, 3))), targets=draw(st.one_of(st.none(), maybe(st.just(XS[:2])))))
    if k == 11:
        trace = att.trace_forward(AR, np.zeros((2, 4), int))
        return "floating_summary", lambda: att.floating_summary(draw(maybe(st.just(trace))), eps=eps,
                                                                queries=draw(maybe(st.sampled_from(["all", "masked"]))))
    if k == 12:
        return "conditional_mutual_information", lambda: att.conditional_mutual_information(
            draw(maybe(st.just(LAW))), draw(maybe(st.integers(0, 2))), draw(maybe(st.integers(0, 2))),
            draw(st.one_of(st.just(()), st.just([2]), hostile)))
    if k == 13:
        return "revealed_information", lambda: att.revealed_information(
            draw(maybe(st.just(LAW))), draw(maybe(st.sampled_from([np.array([0, 1, 0]), np.array([0.0, 1.0, 0.0])]))),
            draw(maybe(st.sampled_from([np.array([True, False, True]), np.array([0.5, 0.0, 1.0])]))),
            kind=draw(maybe(st.sampled_from(["pointwise", "average"]))))
    if k == 14:
        return "plots", lambda: (plots.plot_received(draw(maybe(st.just(MAPS.mean(1)))), eps=eps,
                                                   title=draw(st.one_of(st.none(), hostile)), ax=draw(st.one_of(st.none(), hostile))),
                                 plots.plot_absorption(draw(maybe(st.sampled_from([{"a": (np.ones(2) / 2, np.zeros(2))}, {"a": 1},
                                                                                  {"a": (np.ones(2), np.ones(3))}])))))
    if k == 15:
        return "diagnostics", lambda: (
            diagnostics.reveal_statistics(draw(maybe(st.sampled_from([np.eye(3), np.ones((3, 2)), [["1", "0"], ["0", "1"]]])))),
            diagnostics.empirical_reveal_matrix(draw(maybe(st.sampled_from([np.array([[1, 2], [2, 1]]), np.array([[10**12, 1]])]))),
                                                n_cols=draw(st.one_of(st.none(), maybe(st.integers(1, 4))))))
    table = diagnostics.comparison_table({"p": LAW}, ["random"], [1, 3])
    return "comparison_table", lambda: (
        diagnostics.comparison_table(draw(maybe(st.sampled_from([{"p": LAW}, {1: LAW}, {"p": 3}]))),
                                     draw(maybe(st.sampled_from([["random"], {"r": "random"}, [], 5]))),
                                     draw(maybe(st.sampled_from([[1, 3], [9], "12", []])))),
        table.value(draw(maybe(st.just("p"))), draw(maybe(st.sampled_from([1, 3, 2]))), draw(maybe(st.just("random")))),
        table.ratio(draw(maybe(st.just("random"))), draw(maybe(st.just("random")))),
        table.format(draw(maybe(st.integers(0, 6)))))


@twice(120, 3000, st.data())
def _attention_hostile(data):
    name, thunk = attention_calls(data.draw)
    ok, out = call(thunk)
    if ok and name in ("received_attention",):
        np.testing.assert_allclose(out.sum(-1), 1.0, atol=1e-9)
    if ok and name in ("absorption", "masked_share"):
        assert np.all((out >= -1e-12) & (out <= 1 + 1e-12))


test_attention_hostile, test_attention_hostile_slow = _attention_hostile


# -- datasets and data files -------------------------------------------------------------------
def _npy_with_header(path, shape, descr="<i8", payload=b""):
    """A .npy file whose header claims ``shape`` (the payload may be far shorter)."""
    header = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)}).encode()
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + b" " * pad + b"\n"
    with open(path, "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload)


@st.composite
def data_files(draw):
    """A path to a (possibly hostile) data file, and the rows it should hold when valid."""
    k = draw(st.integers(0, 9))
    path = os.path.join(TMP, f"data{k}-{draw(st.integers(0, 3))}")
    rows = draw(st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3), min_size=1, max_size=4))
    if k == 0:
        np.save(path + ".npy", np.array(rows, dtype=draw(st.sampled_from([np.int64, np.int8, np.uint16]))))
        return path + ".npy", rows
    if k == 1:
        with open(path + ".txt", "w") as fh:
            fh.write("\n".join(draw(st.sampled_from([" ", ","])).join(map(str, r)) for r in rows) + "\n")
        return path + ".txt", rows
    if k == 2:  # header claims a huge array
        _npy_with_header(path + ".npy", draw(st.sampled_from([(2**30, 8), (10**12, 10**6), (2**62, 4)])), payload=b"\0" * 64)
    elif k == 3:  # truncated or odd dtypes
        _npy_with_header(path + ".npy", (4, 3), descr=draw(st.sampled_from(["<i8", "<f8", "|O", "<U3", "|b1"])), payload=b"\0" * 8)
    elif k == 4:  # garbage bytes
        with open(path + ".npy", "wb") as fh:
            fh.write(draw(st.binary(max_size=80)))
    elif k == 5:  # big token builds a big alphabet
        with open(path + ".txt", "w") as fh:
            fh.write(draw(st.sampled_from(["0 1\n1 1000000000\n", "0 1_0\n1 2\n", "0 \u0663\n1 2\n", "1 " + "9" * 5000 + "\n",
                                            "0 1\n1\n", "# only\n", "", "0 -1\n"])))
        return path + ".txt", None
    elif k == 6:
        with open(path + ".txt", "wb") as fh:
            fh.write(draw(st.binary(max_size=60)))
        return path + ".txt", None
    elif k == 7:
        np.save(path + ".npy", np.array([1.5, 2.0]) if draw(st.booleans()) else np.zeros((2, 0), dtype=int))
    elif k == 8:
        return draw(hostile), None
    else:
        return TMP, None  # a folder
    return path + ".npy", None


def dataset_calls(draw):
    """(name, rows, thunk); every argument is drawn before anything is called."""
    k = draw(st.integers(0, 5))
    if k == 0:
        path, rows = draw(data_files())
        chars = draw(st.one_of(st.just(False), hostile))
        K = draw(st.one_of(st.none(), maybe(st.integers(5, 9))))
        return "load_sequences", rows if chars is False else None, lambda: datasets.load_sequences(path, chars=chars, K=K)
    if k == 1:
        path, _ = draw(data_files())
        ndim = draw(st.sampled_from([None, 1, 2]))
        return "read_npy", None, lambda: datasets.read_npy(path, "DATA", ndim=ndim)
    if k == 2:
        length, stress = draw(maybe(st.integers(1, 6))), draw(maybe(st.booleans()))
        return "phonemes", None, lambda: datasets.phonemes(length=length, stress=stress)
    if k == 3:
        d, K, s, seed = draw(maybe(st.integers(2, 5))), draw(maybe(st.integers(2, 4))), draw(maybe(st.floats(0, 0.9))), draw(seeds)
        n, seed2 = draw(maybe(st.integers(1, 4))), draw(seeds)
        return "markov", None, lambda: datasets.markov(d, K=K, stickiness=s, seed=seed).sample(n, seed=seed2)
    if k == 4:
        K, seed = draw(maybe(st.integers(2, 5))), draw(seeds)
        return "markov_transition", None, lambda: datasets.markov_transition(K, seed=seed)
    ds = datasets.markov(3, K=2)
    x = draw(maybe(st.sampled_from([np.zeros((2, 3), int), [[0, 1, 1]], [[-1, 0, 0]], [[0.0, 1.0, 1.0]], [[5, 0, 0]]])))
    return "Dataset.decode", None, lambda: ds.decode(x)


@twice(40, 2500, st.data())
def _datasets_hostile(data):
    name, rows, thunk = dataset_calls(data.draw)
    try:
        ok, out = call(thunk)
    except FileNotFoundError:  # documented for a path that does not exist (not a ValueError)
        return
    if ok and name == "load_sequences" and rows is not None:
        arr, alphabet = out
        np.testing.assert_array_equal(arr, np.array(rows))
        assert len(alphabet) >= max(2, np.max(rows) + 1)


test_datasets_hostile, test_datasets_hostile_slow = _datasets_hostile


# -- hostile checkpoint and Hugging Face files -------------------------------------------------
@st.composite
def checkpoint_files(draw):
    folder = tempfile.mkdtemp(dir=TMP)
    st_path, js_path = os.path.join(folder, "m.safetensors"), os.path.join(folder, "m.json")
    with open(CKPT, "rb") as fh:
        good_st = fh.read()
    with open(CKPT[:-12] + ".json") as fh:
        good_js = json.load(fh)
    k = draw(st.integers(0, 6))
    st_bytes, js_text = good_st, json.dumps(good_js)
    if k == 0:  # config claims a huge shape
        cfg = dict(good_js["config"])
        cfg[draw(st.sampled_from(["d_model", "n_layers", "seq_len", "vocab_size", "d_ff"]))] = draw(st.sampled_from([2**40, 10**12, -1, 0, True, "8", 1.5]))
        js_text = json.dumps(dict(good_js, config=cfg))
    elif k == 1:  # corrupt safetensors: cut, flipped bytes or a lying header length
        cut = draw(st.integers(0, len(good_st)))
        st_bytes = good_st[:cut] if draw(st.booleans()) else struct.pack("<Q", draw(st.sampled_from([2**40, 2**63, 7]))) + good_st[8:]
    elif k == 2:
        st_bytes = bytearray(good_st)
        for _ in range(draw(st.integers(1, 20))):
            i = draw(st.integers(0, len(st_bytes) - 1))
            st_bytes[i] = draw(st.integers(0, 255))
        st_bytes = bytes(st_bytes)
    elif k == 3:  # deep / garbage JSON
        js_text = draw(st.sampled_from(["[" * 100000 + "]" * 100000, "{", "null", '{"format": "mdmtheory.tiny/1"}',
                                        '{"format": "mdmtheory.tiny/1", "config": {"vocab_size": 3, "seq_len": 4, "extra": 1}}']))
    elif k == 4:
        js_text = draw(st.text(max_size=50))
    elif k == 5:  # a Hugging Face folder with a garbage config.json
        with open(os.path.join(folder, "config.json"), "w") as fh:
            fh.write(draw(st.sampled_from(["{", "[]", '{"model_type": "nope"}', '{"model_type": "bert", "vocab_size": 1000000000000}',
                                           '{"model_type": "bert"}', "[" * 50000 + "]" * 50000])))
        return "hf", folder
    with open(st_path, "wb") as fh:
        fh.write(st_bytes)
    with open(js_path, "w") as fh:
        fh.write(js_text)
    return "ckpt", st_path


@twice(20, 1500, checkpoint_files())
def _checkpoint_files_hostile(case):
    kind, path = case
    if kind == "hf":
        ok, out = call(bridge.from_pretrained, path, mask_id=3, device="cpu")
    else:
        ok, out = call(tiny.load_checkpoint, path)
        if ok:  # accepted (flipped bytes inside the weights give another valid model, which may
            # overflow to NaN logits): its forward runs, and the bridge refuses NaN with a ValueError
            x = torch.full((1, 4), 3)
            assert out(x).logits.shape == (1, 4, 4)
            call(bridge.estimate_profile, out, XS, n_per_level=2)


test_checkpoint_files_hostile, test_checkpoint_files_hostile_slow = _checkpoint_files_hostile
