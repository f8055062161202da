r"""Corruption beyond masks, exactly: uniform-noise, hybrid and renoise samplers over the K^d states.

**Forward process** (convention of this module; docs/theory.md §15). Every token is corrupted
independently. Corruption events arrive at hazard :math:`-\tfrac{d}{dt}\log\alpha_t`, so a
token is untouched at time t with probability :math:`\alpha_t` (:math:`\alpha_0 = 1`,
:math:`\alpha_1 = 0`); each event is, with probability ``mix``, a **mask** (absorbing, token
id K), else a **uniform redraw** (a token drawn uniformly from the K tokens, possibly the
same one). The one-token kernel is then, for a clean token :math:`x_0` and
:math:`a_t = \alpha_t^{\,\text{mix}}`, :math:`u_t = \alpha_t^{\,1-\text{mix}}`,

.. math::

    k_t(\text{mask} \mid x_0) = 1 - a_t, \qquad
    k_t(y \mid x_0) = a_t \big(u_t\,\delta_{y x_0} + (1 - u_t)/K\big), \quad y \in [K],

and the process is Markov: from s to t (:math:`\alpha_t \le \alpha_s`) the same kernel with
:math:`\alpha_t/\alpha_s` acts on a visible token, and a mask stays a mask (derived here).
``mix = 1`` is masked diffusion (MDLM: :math:`\alpha_t x + (1-\alpha_t)\,m`); ``mix = 0`` is
uniform-state diffusion (UDLM/Duo: :math:`\alpha_t x + (1-\alpha_t)/K`, the marginal in
``DUO_BASE._compute_posterior`` of ``s-sahoo/duo`` ``algo.py``, commit 0299855).

**Exact denoiser.** For a joint law p on :math:`[K]^d`,
:math:`p(x_0 \mid x_t) \propto p(x_0) \prod_i k_t(x_{t,i} \mid x_{0,i})`
(:func:`corruption_denoiser`), and its per-position marginals :math:`\mu_i(\cdot \mid x_t)` are what an
ideal factorized model outputs (:func:`corruption_marginals`).

**Ancestral sampler** (:func:`corruption_law`): times :math:`t_k = k/T`, :math:`x_1` drawn from
the prior (all masks if ``mix > 0``, else uniform), and from t to s every position drawn
independently from the exact one-token reverse kernel given the current sequence,

.. math::

    r_i(y \mid x_t) = \sum_{x_0} \mu_i(x_0 \mid x_t)\,
        \frac{k_s(y \mid x_0)\, k_{t|s}(x_{t,i} \mid y)}{k_t(x_{t,i} \mid x_0)},

the step of MDLM (``mix = 1``) and of UDLM/Duo's ancestral update (``mix = 0``). Duo's
``_compute_posterior(x, x_t, α_s, α_t)`` is this step when its ``x`` is
:math:`\mu_i(x_0)/k_t(x_{t,i}\mid x_0)` renormalized — the minimizer of its loss — rather than
:math:`\mu_i` itself (derived here; ``tests/samplers/test_uniform.py`` checks the identity).
The law is a chain on the noisy states: one :math:`(S \times S)` transition per step,
:math:`S = K^d` or :math:`(K+1)^d` with masks, so :math:`S \le` :data:`MAX_NOISY_STATES`.
Mass at a noisy state of probability 0 under the forward process (reachable only through a
factorized step, with masks) has no exact denoiser and is kept apart as ``lost``.

**Renoise sampler of DiffusionGemma** (:func:`renoise_law`): transformers 5.24.0,
``models/diffusion_gemma/generation_diffusion_gemma.py``: ``EntropyBoundSampler`` and
``DiffusionGemmaGenerationMixin._denoising_step``. The canvas starts uniform; at each of the
``steps`` steps (``cur_step`` = steps..1) the model reads the canvas, its logits are divided by
the temperature :math:`t_{\min} + (t_{\max}-t_{\min})\,\text{cur\_step}/\text{steps}`, every
position draws a token, the positions of lowest entropy with
:math:`\sum_{j\le k} H_j - \max_{j \le k} H_j \le` ``entropy_bound`` keep their draw, and
**every other position is renoised with a uniform random token**. The answer is the argmax of
the last step's logits. The model is given no time, so its exact denoiser here is the
**time-free** posterior :math:`p(x_0 \mid x) \propto p(x_0)\int_0^1 \prod_i k_\alpha(x_i \mid
x_{0,i})\,d\alpha` (α uniform on [0, 1]: our choice, the noise law of its training was not
read), integrated exactly (the integrand is a polynomial of degree d in α: Gauss–Legendre
with :math:`\lfloor d/2\rfloor + 1` nodes). Adaptive stopping
(``StableAndConfidentStoppingCriteria``) is not modeled: every run takes ``steps`` steps (in
transformers: ``stability_threshold=steps``). Entropy ties are broken by the lower position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import entr

from .._moved import renamed_keywords
from .base import Run
from .._validate import choice_arg, prob_arg, real_arg, size_arg, work_bound
from ..laws.joint import Joint, joint_arg
from .select import tempered

__all__ = [
    "MAX_NOISY_STATES",
    "MAX_TEMPERATURE",
    "CORRUPTION_SCHEDULES",
    "CorruptionRun",
    "corruption_kernel",
    "corruption_alphas",
    "corruption_denoiser",
    "corruption_marginals",
    "time_free_marginals",
    "corruption_reverse_kernels",
    "corruption_run",
    "corruption_law",
    "renoise_law",
]

#: Largest number of noisy states (K^d, or (K+1)^d with masks) the exact engine takes: one
#: step is an (S x S) float64 matrix (128 MiB at S = 4096).
MAX_NOISY_STATES = 4096
#: Largest steps * S**2 (work of one run) the exact engine takes.
MAX_RUN_WORK = 1 << 33
#: Noise schedules: alpha(t) = 1 - t ("linear", MDLM/Duo log-linear without its epsilon) or
#: cos(pi t / 2) ("cosine", Duo's CIFAR-10 scripts).
CORRUPTION_SCHEDULES = ("linear", "cosine")


@dataclass(frozen=True)
class CorruptionRun(Run):
    """Exact run of a corruption sampler.

    Attributes
    ----------
    law : the output law (a :class:`~mdmtheory.Joint`; ``lost``: mass that reached a noisy
        state of probability 0, masks only).
    steps : the number of steps (= ``forwards``: the model runs once per step).
    mix : fraction of corruption events that are masks (1: masked, 0: uniform).
    noise : the noise schedule's name (:data:`CORRUPTION_SCHEDULES`).
    alphas : (steps + 1,) alpha at t_k = k/steps, k = 0..steps.
    """

    steps: int
    mix: float
    noise: str
    alphas: np.ndarray


def _joint(p) -> Joint:
    return joint_arg(p)


def _states(d: int, K: int, mix: float) -> int:
    S = (K + (1 if mix > 0 else 0)) ** d
    work_bound(S, MAX_NOISY_STATES, "p", "the number of noisy states " + ("(K+1)**d" if mix > 0 else "K**d"))
    return S


def corruption_kernel(K: int, alpha, mix=0.0) -> np.ndarray:
    r"""One-token forward kernel :math:`k_t(y \mid x_0)`, shape (K, K') with K' = K (``mix``
    = 0) or K + 1 (slot K the mask): the module docstring's convention, α the probability
    that the token is untouched.

    >>> corruption_kernel(2, 0.5, 0.0)
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    K = size_arg(K, "K", 2)
    alpha = prob_arg(alpha, "alpha")
    mix = prob_arg(mix, "mix")
    return _kernel(K, alpha, mix)


def _kernel(K: int, alpha: float, mix: float) -> np.ndarray:
    a = alpha ** mix if mix > 0 else 1.0
    u = alpha ** (1.0 - mix) if mix < 1 else 1.0
    k = a * (u * np.eye(K) + (1.0 - u) / K)
    if mix > 0:
        k = np.concatenate([k, np.full((K, 1), 1.0 - a)], axis=1)
    return k


def _step_kernel(K: int, ratio: float, mix: float) -> np.ndarray:
    """(K', K') transition of one token from s to t, ratio = alpha_t / alpha_s (mask absorbing)."""
    k = _kernel(K, ratio, mix)
    if mix > 0:
        last = np.zeros((1, K + 1))
        last[0, K] = 1.0
        k = np.concatenate([k, last], axis=0)
    return k


@renamed_keywords(schedule="noise")
def corruption_alphas(steps: int, noise: str = "linear") -> np.ndarray:
    r""":math:`\alpha(t_k)` at :math:`t_k = k/T`, k = 0..T (so ``alphas[0] = 1``,
    ``alphas[T] = 0``); ``noise`` the noise schedule's name (:data:`CORRUPTION_SCHEDULES`;
    ``schedule=`` is its old keyword, for one release: a plan is a ``plan`` everywhere else).

    >>> corruption_alphas(4).tolist()
    [1.0, 0.75, 0.5, 0.25, 0.0]
    """
    steps = size_arg(steps, "steps", 1)
    noise = choice_arg(noise, "noise", CORRUPTION_SCHEDULES)
    t = np.arange(steps + 1) / steps
    if noise == "linear":
        a = 1.0 - t
    else:
        a = np.cos(0.5 * np.pi * t)
    a[0], a[-1] = 1.0, 0.0
    return a


def _noisy_values(d: int, Kp: int) -> np.ndarray:
    """(Kp**d, d) values of every noisy state, C order (position 0 the slowest axis)."""
    return np.array(np.unravel_index(np.arange(Kp**d), (Kp,) * d)).T


def _likelihood(k: np.ndarray, d: int) -> np.ndarray:
    r"""(S', K^d) matrix :math:`\prod_i k(x_{t,i} \mid x_{0,i})`, rows noisy, columns clean (C order)."""
    K, Kp = k.shape
    L = np.ones((1, 1))
    for _ in range(d):
        L = np.einsum("ab,cd->acbd", L, k.T).reshape(L.shape[0] * Kp, L.shape[1] * K)
    return L


def _posterior(p: Joint, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior matrix (rows normalized; NaN rows where the noisy state has probability 0)
    and the noisy law."""
    L = _likelihood(k, p.d) * p.table.reshape(-1)[None, :]
    z = L.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        post = L / z[:, None]
    post[z <= 0] = np.nan
    return post, z


def corruption_denoiser(p, alpha, mix=0.0) -> np.ndarray:
    r"""Exact denoiser :math:`p(x_0 \mid x_t)` at untouched-probability α, as an (S', K^d)
    matrix: row = noisy state (C order over ``(K',)*d``, slot K the mask), column = clean
    state (C order over ``(K,)*d``). Rows of noisy states of probability 0 are NaN.

    >>> import mdmtheory as mt
    >>> corruption_denoiser(mt.families.parity(2), 1.0)[0].round(3).tolist()  # noiseless: x_0 = x_t
    [1.0, 0.0, 0.0, 0.0]
    """
    p = _joint(p)
    alpha = prob_arg(alpha, "alpha")
    mix = prob_arg(mix, "mix")
    _states(p.d, p.K, mix)
    return _posterior(p, _kernel(p.K, alpha, mix))[0]


def _marginals(post: np.ndarray, d: int, K: int) -> np.ndarray:
    P = post.reshape((post.shape[0],) + (K,) * d)
    return np.stack([P.sum(axis=tuple(a + 1 for a in range(d) if a != i)) for i in range(d)], axis=1)


def corruption_marginals(p, alpha, mix=0.0) -> np.ndarray:
    r"""Per-position marginals :math:`\mu_i(x_{0,i} \mid x_t)` of :func:`corruption_denoiser`, shape
    (S', d, K): what a factorized model trained to optimality outputs (NaN rows where the
    noisy state has probability 0)."""
    p = _joint(p)
    alpha = prob_arg(alpha, "alpha")
    mix = prob_arg(mix, "mix")
    _states(p.d, p.K, mix)
    return _marginals(_posterior(p, _kernel(p.K, alpha, mix))[0], p.d, p.K)


def time_free_marginals(p) -> np.ndarray:
    r"""Per-position marginals of the time-free uniform-noise denoiser,
    :math:`p(x_0 \mid x) \propto p(x_0) \int_0^1 \prod_i k_\alpha(x_i \mid x_{0,i})\,d\alpha`
    (``mix`` = 0, α uniform on [0, 1]), shape (K^d, d, K): the exact model of a denoiser that
    is not told the noise level (DiffusionGemma's). Every canvas has positive probability.
    The integral is exact: Gauss–Legendre with ⌊d/2⌋ + 1 nodes on a degree-d polynomial."""
    p = _joint(p)
    _states(p.d, p.K, 0.0)
    nodes, weights = np.polynomial.legendre.leggauss(p.d // 2 + 1)
    L = sum(0.5 * w * _likelihood(_kernel(p.K, 0.5 * (x + 1.0), 0.0), p.d) for x, w in zip(nodes, weights))
    L = L * p.table.reshape(-1)[None, :]
    return _marginals(L / L.sum(axis=1)[:, None], p.d, p.K)


def corruption_reverse_kernels(p, alpha_t, alpha_s, mix=0.0) -> np.ndarray:
    r"""The one-token reverse kernels :math:`r_i(y \mid x_t)` from untouched-probability
    ``alpha_t`` to ``alpha_s`` (``alpha_t <= alpha_s``), shape (S', d, K'); NaN rows where the
    noisy state has probability 0 (module docstring)."""
    p = _joint(p)
    at = prob_arg(alpha_t, "alpha_t")
    as_ = prob_arg(alpha_s, "alpha_s")
    if at > as_:
        raise ValueError(f"alpha_t: the reverse step goes from alpha_t to alpha_s >= alpha_t, got {at} > {as_}")
    mix = prob_arg(mix, "mix")
    _states(p.d, p.K, mix)
    return _reverse(p, at, as_, mix)


def _reverse_weights(K: int, at: float, as_: float, mix: float, xt: np.ndarray) -> np.ndarray:
    r"""w[s, i, x0, y] = :math:`k_s(y \mid x_0)\, k_{t|s}(x_{t,i} \mid y) / k_t(x_{t,i} \mid x_0)`
    (0 where k_t is 0) for noisy rows ``xt`` (S, d): the reverse kernel is
    :math:`r_i(y) = \sum_{x_0} \mu_i(x_0)\, w[\cdot, i, x_0, y]` (here and in
    :func:`mdmtheory.bridge.ancestral_samples`)."""
    kt, ks = _kernel(K, at, mix), _kernel(K, as_, mix)
    kts = _step_kernel(K, at / as_ if as_ > 0 else 1.0, mix)  # (K', K'): y -> x_t
    with np.errstate(invalid="ignore", divide="ignore"):
        w = ks[None, None, :, :] * kts.T[xt][:, :, None, :] / kt.T[xt][:, :, :, None]
    return np.where(np.isfinite(w), w, 0.0)


def _reverse(p: Joint, at: float, as_: float, mix: float) -> np.ndarray:
    K, d = p.K, p.d
    kt = _kernel(K, at, mix)
    mu = _marginals(_posterior(p, kt)[0], d, K)  # (S, d, K)
    ratio = _reverse_weights(K, at, as_, mix, _noisy_values(d, kt.shape[1]))
    mu0 = np.where(np.isnan(mu), 0.0, mu)
    r = np.einsum("sia,siay->siy", mu0, ratio)
    r[np.isnan(mu[:, 0, 0])] = np.nan
    return r


def _transition(r: np.ndarray) -> np.ndarray:
    """(S, S'') matrix prod_i r[x, i, y_i] of independent per-position draws; zero rows where r is NaN."""
    S, d, Kp = r.shape
    r = np.where(np.isnan(r), 0.0, r)
    P = np.ones((S, 1))
    for i in range(d):
        P = (P[:, :, None] * r[:, i, None, :]).reshape(S, -1)
    return P


def _prior(d: int, K: int, mix: float) -> np.ndarray:
    if mix > 0:
        pi = np.zeros((K + 1) ** d)
        pi[-1] = 1.0  # every position masked
        return pi
    return np.full(K**d, 1.0 / K**d)


@renamed_keywords(schedule="noise")
def corruption_run(p, steps: int, *, mix=0.0, noise: str = "linear") -> CorruptionRun:
    r"""Exact output law of the ancestral sampler with the exact per-position denoiser, T =
    ``steps`` equal time steps of the schedule (module docstring).

    >>> import mdmtheory as mt
    >>> p = mt.families.parity(2)
    >>> run = corruption_run(p, 1, mix=1.0)   # one masked step: the product of the marginals
    >>> run.law.table.round(3).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    p = _joint(p)
    steps = size_arg(steps, "steps", 1)
    mix = prob_arg(mix, "mix")
    alphas = corruption_alphas(steps, noise)
    S = _states(p.d, p.K, mix)
    work_bound(steps * S * S, MAX_RUN_WORK, "steps", "steps * (noisy states)**2")
    pi = _prior(p.d, p.K, mix)
    lost = 0.0
    for k in range(steps, 0, -1):
        r = _reverse(p, float(alphas[k]), float(alphas[k - 1]), mix)
        dead = np.isnan(r[:, 0, 0])
        lost += float(pi[dead].sum())
        pi = pi @ _transition(r)
    # at alpha = 1 every noisy state is visible: slot K carries no mass
    out = pi.reshape((p.K + (1 if mix > 0 else 0),) * p.d)[(slice(0, p.K),) * p.d]
    table = np.clip(out, 0.0, None)
    lost = min(max(lost, 0.0), 1.0)
    table = table * ((1.0 - lost) / table.sum()) if table.sum() > 0 else table
    return CorruptionRun(law=Joint(table, lost=lost), forwards=float(steps), steps=steps, mix=mix, noise=noise,
                         alphas=alphas)


@renamed_keywords(schedule="noise")
def corruption_law(p, steps: int, *, mix=0.0, noise: str = "linear") -> Joint:
    """The output law of :func:`corruption_run`."""
    return corruption_run(p, steps, mix=mix, noise=noise).law


def _eb_accept(H: np.ndarray, bound: float) -> np.ndarray:
    """(S, d) bool: the lowest-entropy positions with cumsum - max <= bound (ties: lower position)."""
    order = np.argsort(H, axis=1, kind="stable")
    Hs = np.take_along_axis(H, order, axis=1)
    keep = (np.cumsum(Hs, axis=1) - Hs) <= bound
    acc = np.zeros_like(keep)
    np.put_along_axis(acc, order, keep, axis=1)
    return acc


#: Largest temperature accepted by the renoise sampler: transformers computes the temperature
#: in float32 from a tensor step, so t_min + (t_max - t_min) * step / steps cancels to 0 when
#: the two differ by many orders of magnitude.
MAX_TEMPERATURE = 100.0


def _renoise_args(entropy_bound, t_min, t_max) -> tuple[float, float, float]:
    """The checked (entropy_bound, t_min, t_max) of the renoise sampler (here and in
    :func:`mdmtheory.bridge.renoise_samples`)."""
    bound = real_arg(entropy_bound, "entropy_bound")
    if bound <= 0:
        raise ValueError(f"entropy_bound: expected a float > 0 (transformers' EntropyBoundSamplerConfig), got {bound}")
    out = [bound]
    for name, t in (("t_min", t_min), ("t_max", t_max)):
        t = real_arg(t, name)
        if not 0 < t <= MAX_TEMPERATURE:
            raise ValueError(f"{name}: temperatures must lie in (0, {MAX_TEMPERATURE:g}], got {t}")
        out.append(t)
    return out[0], out[1], out[2]


def renoise_law(p, steps: int, *, entropy_bound=0.1, t_min=0.4, t_max=0.8) -> Joint:
    r"""Exact output law of DiffusionGemma's entropy-bound renoise sampler (module docstring)
    driven by the exact time-free denoiser of p: ``steps`` steps, the answer the argmax of the
    last step's logits (first token on ties). Defaults: transformers'
    ``DiffusionGemmaGenerationConfig._get_default_generation_params`` (entropy bound 0.1,
    temperatures 0.4..0.8; its 48 steps are ``steps=48``).

    >>> import mdmtheory as mt
    >>> q = renoise_law(mt.families.parity(2), 3)
    >>> round(float(q.table.sum()), 12)
    1.0
    """
    p = _joint(p)
    steps = size_arg(steps, "steps", 1)
    bound, t_min, t_max = _renoise_args(entropy_bound, t_min, t_max)
    S = _states(p.d, p.K, 0.0)
    work_bound(steps * S * S, MAX_RUN_WORK, "steps", "steps * K**(2d)")
    mu = time_free_marginals(p)  # (S, d, K)
    d, K = p.d, p.K
    pi = np.full(S, 1.0 / S)
    for cur in range(steps, 1, -1):  # the last step's draws are not used: its argmax is the answer
        temp = t_min + (t_max - t_min) * cur / steps
        pr = tempered(mu, temp)
        H = entr(pr).sum(axis=2)
        acc = _eb_accept(H, bound)[:, :, None]
        r = acc * pr + (~acc) * (1.0 / K)
        pi = pi @ _transition(r)
    am = np.argmax(mu, axis=2)  # (S, d), argmax is invariant to the temperature
    idx = np.ravel_multi_index(tuple(am.T), (K,) * d)
    out = np.bincount(idx, weights=pi, minlength=K**d)
    return Joint(out.reshape((K,) * d) / out.sum())
