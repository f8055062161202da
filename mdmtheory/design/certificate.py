r"""Certified single-block schedules from samples: W26 Theorem 2 with K = 1 (§4.4.1, eqs. 36–38).

W26 = Wainwright (2026), *The data geometry of masking diffusion: certified-optimal
schedules via unmasking growth complexity*, arXiv 2608.13520, read in full. Every W26 item
with its place in the paper and its status: docs/theory.md §3 and §5 (the one source of
truth; this docstring cites the places). Multi-block certificates and the boundary DP
(§4.4.2): :mod:`mdmtheory.design.certificate_blocks`.

**1. Estimator** (W26 §4.3.2, eqs. 32a–b). On :math:`[t_0, T]` (default W26's canonical
:math:`[1/d, 1 - 1/d]`, §5.1) the dyadic grid :math:`v_0 < \dots < v_J` (eq. 32a) and, per
clean sample, the coupled dyadic statistic :math:`Q = \sum_j w_j \sum_i T_{ij}` (eq. 32b;
:func:`mdmtheory.information.dyadic_terms`). With the corrected weights
:math:`w_j = v_j(1 - v_{j+1})` (default), :math:`\mathbb E Q \le H(t_0, T) \le 2\,\mathbb E Q`
(derived here, proofs/dyadic_weights.md); W26's stated weights :math:`w_j = v_{j+1} - v_j`
(``weights="stated"``) break the upper half of eq. (32c) on a partial last interval
(refuted, docs/theory.md §5), and with them the certificate can fail
(tests/design/test_certificate.py, strict xfail).

**2. High-probability upper bound** :math:`B_\alpha \ge \mathbb E Q` with probability
:math:`\ge 1 - \alpha` (``confidence`` = :math:`1 - \alpha`): the one-sided
empirical-Bernstein bound of Maurer & Pontil (2009, Theorem 4) — the inequality W26's proof
of Proposition 2 uses (§6.3.2, eq. 55c) — for n iid variables in an interval of length R,

.. math::

    \mathbb E Z \le \bar Z_n + \sqrt{\frac{2 V_n \log(2/\alpha)}{n}}
      + \frac{7 R \log(2/\alpha)}{3(n-1)},

:math:`V_n` the sample variance. W26 applies it twice (:math:`\log(4/\eta)`, eq. 55c) for the
two-sided sandwich (34a); the certificate needs only the upper side (A), hence
:math:`\log(2/\alpha)`. W26 truncates Q at a level set by a *known* moment bound
:math:`B_\alpha` (eqs. 33a–b); exact-conditional laws give no such constant, so the
truncation here is ours (derived here):

* ``form="kl"`` (W26's per-sample KL, eq. 32b): the interval sum :math:`S_j = \sum_i T_{ij}`
  is cut at :math:`c_j = d(m_j \log K + \tau)`, :math:`m_j` the number of positions revealed
  in interval j (B, after A). Row i conditions on :math:`A_i = A \setminus \{i\}` and
  :math:`A_i \cup B_i`, :math:`B_i = B \setminus \{i\}`; with exact conditionals
  :math:`T_{ij} \le \ell_i := -\log p(x_{B_i} \mid x_{A_i})` pointwise
  (:math:`p(v \mid x_{A_i}) \ge p(x_{B_i} \mid x_{A_i})\, p(v \mid x_{A_i \cup B_i})`),
  and :math:`P(\ell_i > m_j\log K + s) \le e^{-s}`. Since
  :math:`(S_j - c_j)_+ \le \sum_i (\ell_i - m_j\log K - \tau)_+`, the truncation lowers
  the mean by at most :math:`d e^{-\tau}` per interval; that bias
  :math:`d e^{-\tau}\sum_j w_j` is added to :math:`B_\alpha` (``tail``, default 1e-3 nats,
  sets τ). Range :math:`R = d^2 \log K \max_j w_j + d\tau\sum_j w_j`.
* ``form="entropy"`` (ours): :math:`T_{ij} = H(C_{j,i}) - H(C_{j+1,i})`, the same mean with
  exact conditionals, surely in a range of length
  :math:`R = 2 d \log K \sum_j (c_j)_+` (:math:`c` the differences of the weights); no
  truncation, no bias term.

:math:`U = 2B_\alpha \ge 2\,\mathbb E Q \ge H(t_0, T)` is then W26's
:math:`\hat H_m + \hat r_m` (eq. 34a(A); W26's :math:`\hat H = 2\bar Q`, eq. 33b).

**3. Step count** (``rule``). :math:`L = \varphi(T) - \varphi(t_0) = \log(\psi(T)/\psi(t_0))`
(:math:`2\log(d-1)` on the canonical interval), :math:`\hat C = L\,U` (W26 eq. 36b with
K = 1); ``complexity`` = :math:`L\bar Q`, ``complexity_upper`` = :math:`L B_\alpha = \hat C/2`.

* ``"w26"`` — W26 Theorem 2 with one block, as printed: budget
  :math:`N = \max\{\lceil 8\hat C/\varepsilon\rceil, \lceil 2(1 + 2L)\rceil\}` (eq. 38 and
  Theorem 2's condition :math:`N \ge 2\{K + 2(\varphi(T) - \varphi(t_0))\}`),
  :math:`\hat\rho = \min\{1, 4L/N\}` (eq. 37a with K = 1), and the sampler runs
  :math:`\hat N = \lceil L/\log(1 + \hat\rho)\rceil \le N` rounds (proof §6.4) — ``steps``;
  the budget N is ``budget``. The grid spaces the :math:`\hat N` steps equally in log odds
  (odds ratio :math:`e^{L/\hat N} \le 1 + \hat\rho` per step). The 8 of eq. (38) is
  4 (Theorem 2's :math:`4\hat C/N`) × 2 (W26 keeps :math:`\varepsilon/2` for the
  initialization and completion terms, here 0), so the certified bound is :math:`\le
  \varepsilon/2`. (Before W26 was read in full this rule was :math:`N = \lceil 8 L B_\alpha/
  \varepsilon\rceil` equal steps, "8 = 2 × 2 × 2" — a reading the text does not support:
  W26's :math:`\hat C` already contains the sandwich factor 2; it ran twice the rounds of W26's
  sampler.)
* ``"tight"`` — the least N with :math:`(e^{L/N} - 1)\,U \le \varepsilon`,
  :math:`N = \lceil L/\log(1 + \varepsilon/U)\rceil` — the same guarantee.

Either way, with exact draws before :math:`t_0` and after T (the package's grids), W26
Theorem 1 (eq. 17a) has no boundary terms and gives, on the event
:math:`\mathbb E Q \le B_\alpha`,

.. math::

    \mathrm{KL}(p \,\|\, q_{\mathrm{grid}}) \le (e^{L/N} - 1)\, H(t_0, T)
      \le (e^{L/N} - 1) \cdot 2 B_\alpha =: \text{bound} \le \varepsilon .

**Why Theorem 2's condition** :math:`N \ge 2(K + 2L)` **is not a condition here.** In W26 it
is used only in the round count of the proof (§6.4.2:
:math:`\sum_k \hat N_k \le K + 2L + N/2 \le N`), i.e. to keep the rounds within the
budget N. The KL claim is Theorem 1 on the grid actually run, which holds for every grid.
``rule="w26"`` enforces it on the budget (as printed); ``rule="tight"`` has no budget, and
its round count is exactly ``steps`` by construction.

The certificate is exact-conditional: from a model (``mdmtheory.bridge.ModelOracle``) it
certifies the sampler run with the *model's* conditionals against the model's own law
(W26 §3, eq. 18: a learned denoiser adds a term the certificate does not estimate).

**4. From data** (:func:`certify_data`, ``mdmtheory design DATA --certify EPS``). Without a
model the only law with known conditionals is the empirical law
:math:`\hat p(x) = \#\{x\}/n` (:func:`empirical_oracle`: a mixture of point masses, one
per distinct sequence, so every conditional is a posterior over the observed sequences, at
any d); the certificate is then about sampling :math:`\hat p`, with n iid draws from
:math:`\hat p` (resampled rows). With a model the conditionals are the model's and the
data rows stand in for draws from the model's law (our reading: exact only insofar as the
model's law is the data's law).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from .._estimate import PlanRecord, Record
from .._moved import options_from
from ..information.dyadic import (
    check_oracle,
    dyadic_grid,
    dyadic_terms,
    dyadic_weights,
    FORMS,
    oracle_samples,
    psi,
    WEIGHTS,
)
from ..laws.oracles import empirical_oracle
from ..schedules.families import geometric_grid
from ..schedules.plans import Grid
from .._moved import renamed_keywords
from .._validate import float_array as _float_array, int_arg as _int_arg, LIMITS, real_arg as _real_arg, samples_array as _samples_array
from ..information.divergence import kl
from ..laws.joint import Joint
from ..samplers import sampler_law
from ..schedules.plans import compositions, Schedule
from .profile import check_model_outcomes

__all__ = [
    "Certificate",
    "CertificateOptions",
    "certify",
    "certify_data",
    "empirical_bernstein_radius",
    "exact_minimum_steps",
    "RULES",
]

#: Step-count rules: W26 Theorem 2 with K = 1 (budget ceil(8 C/eps), eq. 38) or the least N whose bound is <= eps.
RULES = ("w26", "tight")


def empirical_bernstein_radius(values, value_range: float, confidence: float) -> float:
    r"""Maurer–Pontil (2009, Thm 4) one-sided radius: :math:`\mathbb E Z \le \bar Z + r` w.p. ≥ confidence.

    :math:`r = \sqrt{2 V_n \log(2/\alpha)/n} + 7R\log(2/\alpha)/(3(n-1))`, :math:`V_n` the
    sample variance (ddof 1), R the length of an interval that surely holds every value.

    Examples
    --------
    >>> r = empirical_bernstein_radius(np.array([0.0, 1.0] * 50), 1.0, 0.95)
    >>> round(r, 4)
    0.2234
    """
    z = _float_array(values, "values", ndim=1, what="(n,)")
    n = z.shape[0]
    if n < 2:
        raise ValueError(f"values: expected at least 2 values, got shape {z.shape}")
    value_range = _real_arg(value_range, "value_range")
    if value_range < 0:
        raise ValueError(f"value_range: expected the length (>= 0) of an interval holding every value, got {value_range}")
    spread = float(z.max() - z.min())
    if spread > value_range * (1 + 1e-12):  # the radius assumes every value in an interval of that length (issue 38)
        raise ValueError(f"value_range: the values span {spread:.6g} > value_range={value_range:.6g}; give the length "
                         f"of an interval that holds every value (at least max - min)")
    conf = _confidence(confidence)
    log_term = math.log(2.0 / (1.0 - conf))
    scale = float(np.max(np.abs(z)))  # the variance of z / scale: no overflow at 1e200
    std = scale * math.sqrt(float((z / scale).var(ddof=1))) if scale > 0 else 0.0
    radius = math.sqrt(2.0 * log_term / n) * std + 7.0 * float(value_range) * log_term / (3.0 * (n - 1))
    if not math.isfinite(radius):
        raise ValueError(f"values: the radius exceeds float64 (values up to {scale:.3g}, range {value_range:.3g})")
    return radius


def _confidence(confidence) -> float:
    c = _real_arg(confidence, "confidence")
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence: expected a probability in (0, 1), e.g. 0.95, got {c}")
    return c


@dataclass(frozen=True)
class CertificateOptions(Record):
    r"""How a certificate estimates H and rounds the steps (module docstring, steps 1–3);
    ``options=`` of :func:`certify`, :func:`certify_data` and
    :func:`~mdmtheory.design.certify_blocks`.

    Attributes
    ----------
    weights : {"corrected", "stated"}
        Dyadic weights (step 1).
    form : {"kl", "entropy"} or None
        Per-sample form of Q (step 2); None: the function's default (``"kl"`` for
        :func:`certify`, ``"entropy"`` for :func:`~mdmtheory.design.certify_blocks`).
    rule : {"w26", "tight"}
        Step-count rule (step 3).
    interval : (t0, T) or None
        Default ``(1/d, 1 - 1/d)``.
    tail : float
        ``form="kl"`` only: the truncation bias allowance in nats (step 2).
    """

    weights: str = "corrected"
    form: str | None = None
    rule: str = "w26"
    interval: tuple | None = None
    tail: float = 1e-3

    def __post_init__(self):
        """Types and ranges checked where the options are made (the functions check them again:
        ``interval`` against d)."""
        for name, options in (("weights", WEIGHTS), ("form", FORMS), ("rule", RULES)):
            value = getattr(self, name)
            if not (name == "form" and value is None) and (not isinstance(value, str) or value not in options):
                raise ValueError(f"{name}: expected one of {options}{' or None' if name == 'form' else ''}, "
                                 f"got {value!r:.80}")
        if self.interval is not None:
            _interval(self.interval, 3)
        tail = _real_arg(self.tail, "tail")
        if not tail > 0:
            raise ValueError(f"tail: expected a truncation allowance > 0 (nats), got {tail}")


@dataclass(frozen=True)
class Certificate(PlanRecord):
    r"""A certified schedule (see the module docstring for every symbol).

    Attributes
    ----------
    steps : int
        N, the certificate's count of grid steps (unmasking rounds): what W26 Theorem 2's
        bound needs to *guarantee* KL ≤ eps from samples — a budget, not the steps a sampler
        needs. It can exceed d (d one-token steps are always exact, KL 0);
        :func:`exact_minimum_steps` gives the fewest steps on a small law, and
        :meth:`outside_draws` the draws the grid leaves outside :math:`[t_0, T]`.
    grid : Grid
        N equal log-odds steps on ``interval`` (exact draws before :math:`t_0`, after T).
    bound : float
        :math:`(e^{L/N} - 1) \cdot 2 B_\alpha` (nats): with probability ≥ ``confidence`` the KL
        of the sampler on ``grid`` is at most this; ≤ ``eps`` (≤ eps/2 for ``rule="w26"``).
    confidence : float
    eps : float
    estimate : float
        :math:`\bar Q` (truncated for ``form="kl"``), an estimate of :math:`\mathbb E Q`.
    stderr : float
        Its standard error.
    upper : float
        :math:`B_\alpha` = estimate + radius + tail bias.
    radius : float
        The empirical-Bernstein radius.
    complexity : float
        :math:`\hat C = L\bar Q`.
    complexity_upper : float
        :math:`L B_\alpha` (:math:`C_{ugc} \le 2 L B_\alpha = \hat C`, W26's eq. 36b, w.p. ≥ confidence).
    span : float
        :math:`L = \log(\psi(T)/\psi(t_0))`.
    interval : tuple of float
        :math:`(t_0, T)`.
    n : int
        Number of clean samples used.
    weights, form, rule : str
    truncated : float
        Fraction of (sample, interval) terms cut by the truncation (``form="kl"``).
    budget : int or None
        ``rule="w26"``: W26's budget N (eq. 38, Theorem 2's condition); ``steps`` ≤ budget.
    """

    plan_field = "grid"

    steps: int
    grid: Grid
    bound: float
    confidence: float
    eps: float
    estimate: float
    stderr: float
    upper: float
    radius: float
    complexity: float
    complexity_upper: float
    span: float
    interval: tuple
    n: int
    weights: str
    form: str
    rule: str
    truncated: float
    budget: int | None = None


    @property
    def times(self) -> tuple[float, ...]:
        return self.grid.times

    def to_dict(self) -> dict:
        """JSON-ready: ``"times"`` (readable by ``mt.Grid``), ``"steps"``, ``"bound"``, ``"confidence"``, …"""
        out = {
            "times": list(self.grid.times),
            "steps": self.steps,
            "bound": self.bound,
            "confidence": self.confidence,
            "eps": self.eps,
        }
        for k in ("estimate", "stderr", "upper", "radius", "complexity", "complexity_upper", "span"):
            out[k] = float(getattr(self, k))
        out.update(interval=list(self.interval), n=self.n, weights=self.weights, form=self.form, rule=self.rule,
                   truncated=self.truncated, budget=self.budget)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def outside_draws(self, d: int) -> tuple[float, float]:
        r"""Expected tokens the grid reveals outside :math:`[t_0, T]` for d positions:
        :math:`d\,t_0` before :math:`t_0` (the initialization) and :math:`d\,(1 - T)` after T
        (the completion). Each position's reveal time is uniform on [0, 1], so these are the
        mean counts; the bound assumes them drawn exactly, which a sampler does with one
        token per forward (with the canonical interval (1/d, 1 − 1/d): one token each)."""
        d = _int_arg(d, "d", 1)
        t0, T = self.interval
        return d * float(t0), d * (1.0 - float(T))


#: Largest number of exact sampler laws :func:`exact_minimum_steps` computes (compositions of d
#: times K^d cells); beyond it, it returns None.
EXACT_MINIMUM_WORK = 1 << 22


def exact_minimum_steps(p, eps: float, planner: str = "random") -> tuple[int, tuple, float] | None:
    r"""The fewest steps T of any schedule whose sampler has exact KL(p‖q) ≤ ``eps`` on a small
    law p (a :class:`~mdmtheory.Joint`): ``(T, sizes, kl)``, the first schedule found at the
    least T (compositions of d in lexicographic order of their cut points). Every schedule of
    d is tried, so T is the exact minimum, at most d (one token per step is exact). None when
    :math:`2^{d-1} K^d` exceeds :data:`EXACT_MINIMUM_WORK`. Set beside a :class:`Certificate`'s
    N, it shows how far the certificate's budget is above what the law needs."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint (an exact law), got {type(p).__name__}")
    eps = _real_arg(eps, "eps")
    if not eps >= 0:
        raise ValueError(f"eps: expected a KL target >= 0 nats, got {eps}")
    d, K = p.d, p.K
    if 2 ** (d - 1) * K**d > EXACT_MINIMUM_WORK:
        return None
    for T in range(1, d + 1):
        for sizes in sorted(compositions(d, T)):  # lexicographic in sizes = in cut points
            v = kl(p, sampler_law(p, Schedule(sizes), planner))
            if v <= eps:
                return T, sizes, float(v)
    return None  # pragma: no cover - T = d is exact


def _interval(interval, d: int) -> tuple[float, float]:
    if interval is None:
        if d < 3:
            raise ValueError(f"interval: the canonical interval (1/d, 1 - 1/d) needs d >= 3 (d={d}); give interval")
        return 1.0 / d, 1.0 - 1.0 / d
    if isinstance(interval, (str, bytes)):
        raise ValueError(f"interval: expected a pair (t0, T) with 0 < t0 < T < 1, got {interval!r}")
    try:
        a, b = (_real_arg(v, "interval") for v in interval)
    except (TypeError, ValueError):
        raise ValueError(f"interval: expected a pair (t0, T) with 0 < t0 < T < 1, got {interval!r}") from None
    if not (math.isfinite(a) and math.isfinite(b) and 0.0 < a < b < 1.0):
        raise ValueError(f"interval: expected 0 < t0 < T < 1, got ({a}, {b})")
    return a, b


def _range_entropy(w: np.ndarray, d: int, K: int) -> float:
    c = np.concatenate([[w[0]], np.diff(w), [-w[-1]]])
    return 2.0 * d * math.log(K) * float(np.sum(np.maximum(c, 0.0)))


@renamed_keywords(law="p")
def certify(
    p,
    samples_or_n,
    eps: float,
    *,
    confidence: float = 0.95,
    options: CertificateOptions | None = None,
    seed: int = 0,
    batch: int = 256,
    **old,
) -> Certificate:
    r"""A certified step count and grid with KL ≤ ``eps`` w.p. ≥ ``confidence`` (W26 Theorem 2, K = 1).

    Parameters
    ----------
    p : Joint or conditional oracle
        Supplies the conditionals: a :class:`~mdmtheory.Joint`, a law from
        :mod:`mdmtheory.laws.oracles`, or a model through ``mdmtheory.bridge.ModelOracle``
        (only ``d``, ``K`` and ``conditionals(x, revealed)`` are needed when samples are
        given).
    samples_or_n : int or array_like (n, d)
        Clean samples (outcome indices 0..K−1), or how many to draw with ``p.sample``.
    eps : float
        Target KL in nats (> 0).
    confidence : float
        :math:`1 - \alpha` in (0, 1).
    options : CertificateOptions, optional
        ``weights`` ({"corrected", "stated"}), ``form`` ({"kl", "entropy"}, module
        docstring step 2; default ``"kl"``), ``rule`` ({"w26", "tight"}, step 3),
        ``interval`` ((t0, T), default ``(1/d, 1 - 1/d)``) and ``tail`` (``form="kl"``
        only: the truncation bias allowance in nats added to :math:`B_\alpha`, sets
        :math:`\tau = \log(d\sum_j w_j/\mathrm{tail})`). The old keywords ``weights=``,
        ``form=``, ``rule=``, ``interval=``, ``tail=`` work for one release with a
        DeprecationWarning.
    seed : int
        Seeds the reveal times U (and the samples when drawn).
    batch : int
        Samples per oracle call.

    Returns
    -------
    Certificate
        ``to_dict()`` is what ``mdmtheory design DATA --certify EPS --json`` prints:
        ``"times"`` (t_0 … t_N), ``"steps"``, ``"bound"``, ``"confidence"`` and the rest.

    Examples
    --------
    >>> import mdmtheory as mt
    >>> p = mt.families.repeated(4)
    >>> cert = certify(p, 4000, 0.05, seed=1, options=CertificateOptions(form="entropy"))
    >>> cert.steps, cert.budget, round(cert.bound, 4)
    (35, 133, 0.0244)
    >>> bool(mt.kl(p, mt.sampler_law(p, mt.Grid(cert.to_dict()["times"]))) <= 0.05)
    True
    """
    opts = options_from(CertificateOptions, options, old, where="certify", defaults={"form": "kl"})
    weights, form, rule, interval, tail = opts.weights, opts.form, opts.rule, opts.interval, opts.tail
    p = check_oracle(p)
    d, K = int(p.d), int(p.K)
    eps = _real_arg(eps, "eps")
    if eps <= 0:
        raise ValueError(f"eps: expected a target KL > 0 (nats), got {eps}")
    conf = _confidence(confidence)
    if not isinstance(weights, str) or weights not in WEIGHTS:
        raise ValueError(f"weights: expected one of {WEIGHTS}, got {weights!r}")
    if not isinstance(form, str) or form not in FORMS:
        raise ValueError(f"form: expected one of {FORMS}, got {form!r}")
    if not isinstance(rule, str) or rule not in RULES:
        raise ValueError(f"rule: expected one of {RULES}, got {rule!r}")
    tail = _real_arg(tail, "tail")
    if tail <= 0:
        raise ValueError(f"tail: expected a truncation allowance > 0 (nats), got {tail}")
    seed = _int_arg(seed, "seed", 0)
    batch = _int_arg(batch, "batch", 1)
    t0, T = _interval(interval, d)
    rng = np.random.default_rng(seed)
    if samples_or_n is None:
        raise ValueError("samples_or_n: expected clean samples (n, d) or a number of samples n to draw from p, "
                         "got None")
    if isinstance(samples_or_n, (int, np.integer)) and not isinstance(samples_or_n, (bool, np.bool_)):
        xs = oracle_samples(p, None, _int_arg(samples_or_n, "samples_or_n", 2, LIMITS["n"], " (samples to draw)"), rng)
    else:
        xs = oracle_samples(p, samples_or_n, None, rng)
    n = xs.shape[0]
    U = rng.random(xs.shape)
    v = dyadic_grid(t0, T)
    w = dyadic_weights(v, weights)
    W = float(w.sum())
    Q = np.empty(n)
    cut = 0
    if form == "kl":
        tau = max(0.0, math.log(d * W / tail))
        bias = d * math.exp(-tau) * W
        R = d * d * math.log(K) * float(w.max()) + d * tau * W
    else:
        tau, bias, R = 0.0, 0.0, _range_entropy(w, d, K)
    for s in range(0, n, batch):
        Tm, m = dyadic_terms(p, xs[s : s + batch], U[s : s + batch], v, form=form)
        if form == "kl":
            c = d * (m * math.log(K) + tau)
            cut += int(np.sum(Tm > c))
            Tm = np.minimum(Tm, c)
        Q[s : s + batch] = Tm @ w
    mean = float(Q.mean())
    radius = empirical_bernstein_radius(Q, R, conf)
    upper = mean + radius + bias
    L = float(math.log(psi(T) / psi(t0)))
    budget = None
    if upper <= 0:  # E Q <= B <= 0 forces H(t0, T) = 0: one step is exact
        N = 1
    else:
        # as a float first: a tiny eps makes it inf or beyond any grid (math.ceil(inf) raises)
        if rule == "w26":  # W26 Theorem 2, K = 1: budget (38) and the condition N >= 2(K + 2L)
            need = max(8.0 * L * 2.0 * upper / eps, 2.0 * (1.0 + 2.0 * L))
            steps = need / 4.0  # ~ the rounds ceil(L / log(1 + 4L/N)); the limit check below
        else:
            steps = max(1.0, L / math.log1p(eps / (2.0 * upper)) - 1e-12)
        if not steps <= LIMITS["steps"]:
            raise ValueError(
                f"eps: {eps:g} needs about {steps:.3g} steps (upper bound B = {upper:.3g} nats), beyond the "
                f"documented limit steps <= {LIMITS['steps']}; give a larger eps or more samples"
            )
        if rule == "w26":
            budget = math.ceil(need)
            rho = min(1.0, 4.0 * L / budget)  # (37a) with K = 1
            N = max(1, math.ceil(L / math.log1p(rho) - 1e-12))
        else:
            N = max(1, math.ceil(steps))
    bound = math.expm1(L / N) * 2.0 * max(upper, 0.0)
    while bound > eps:  # rounding guard; never taken by the rules' arithmetic
        N += 1
        bound = math.expm1(L / N) * 2.0 * upper
    return Certificate(
        steps=N,
        grid=geometric_grid(t0, T, steps=N),
        bound=float(bound),
        confidence=conf,
        eps=eps,
        estimate=mean,
        stderr=float(Q.std(ddof=1) / math.sqrt(n)),
        upper=float(upper),
        radius=float(radius),
        complexity=L * mean,
        complexity_upper=L * float(upper),
        span=L,
        interval=(t0, T),
        n=n,
        weights=weights,
        form=form,
        rule=rule,
        truncated=cut / max(1, n * (v.shape[0] - 1)),
        budget=budget,
    )


def certify_data(
    samples,
    eps: float,
    *,
    K: int | None = None,
    model=None,
    confidence: float = 0.95,
    seed: int = 0,
    **kw,
) -> tuple[Certificate, str]:
    r"""A certificate from data (module docstring, step 4): the empirical law's, or a model's.

    Parameters
    ----------
    samples : int array (n, d), outcome indices 0..K−1, n >= 2.
    eps, confidence, seed : as in :func:`certify`.
    K : alphabet size (default max + 1, at least 2; the model's with ``model``).
    model : optional; a torch MDM (a TinyMDM, an ``nn.Module`` with ``mask_id``, a
        ``MaskedModel``) or a ``mdmtheory.bridge.ModelOracle``.
    **kw : passed to :func:`certify` (``options=CertificateOptions(...)``, ``batch``).

    Returns
    -------
    (Certificate, str)
        The certificate and a sentence saying which law it is about.
    """
    x = _samples_array(samples, "samples", min_rows=2)
    n, d = x.shape
    seed = _int_arg(seed, "seed", 0)
    if model is None:
        law = empirical_oracle(x, K)
        draws = x[np.random.default_rng([seed, 1]).integers(0, n, size=n)]
        cert = certify(law, draws, eps, confidence=confidence, seed=seed, **kw)
        note = (
            f"certificate about sampling the empirical law of the {n} sequences ({law.M} distinct): its exact "
            f"conditionals, {n} iid draws from it (resampled rows)"
        )
        return cert, note
    if all(hasattr(model, a) for a in ("d", "K", "conditionals")) and not hasattr(model, "forward"):
        oracle = model
    else:
        from ..bridge import ModelOracle  # torch only here

        oracle = ModelOracle(model, d=d)

    check_model_outcomes(oracle, max(int(x.max()) + 1, 2) if K is None else int(K))
    cert = certify(oracle, x, eps, confidence=confidence, seed=seed, **kw)
    note = (
        f"certificate about the model's own law (its conditionals through the bridge); the {n} data "
        "sequences stand in for draws from it, so it holds for the data insofar as the model fits them"
    )
    return cert, note
