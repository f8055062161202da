r"""The rows of :func:`~mdmtheory.bounds.compare` for a speculative sampler
(:class:`~mdmtheory.samplers.SpeculativeSampler`; docs/theory.md §8): exactness (KL = 0), the
expected and largest number of model calls, calls <= d (ASSD's abstract: "upper bounded by the
number of tokens") and the rejection sampler's expected proposals E[M] >= e^TC (Zhang et al.,
:func:`~mdmtheory.bounds.zyb26.rejection_cost`) beside the expected calls.

Sources: ASSD, Guo & Ermon, arXiv 2504.20456 (abstract; code
gabeguo/any-order-speculative-decoding@83a444d); self-speculative masked diffusion, Campbell et
al., arXiv 2510.03929 (abstract and opening).
"""

from __future__ import annotations

from ._core import Bound
from .registry import _slack as slack, ComparisonRow, register_rows
from .zyb26 import rejection_cost
from ..samplers.speculative import SpeculativeSampler

__all__: list[str] = []

#: docs/theory.md §8: the status of each speculative statement, by scheme
_STATUS = {
    "assd": {"exact": "verified here", "calls": "our reading"},
    "self_speculative": {"exact": "our reading", "calls": "our reading"},
}
_SOURCE = {
    "assd": "Guo & Ermon, arXiv 2504.20456 (abstract); code gabeguo/any-order-speculative-decoding@83a444d",
    "self_speculative": "Campbell et al., arXiv 2510.03929 (abstract and opening)",
}


def _speculative(ctx) -> bool:
    return isinstance(ctx.sampler, SpeculativeSampler)


@register_rows("speculative", source=__name__, order=60, applies=_speculative)
def _speculative_rows(ctx):
    sampler, run, kl = ctx.sampler, ctx.run, ctx.kl_exact
    status, source = _STATUS[sampler.scheme], _SOURCE[sampler.scheme]
    exact_b = Bound("speculative_exact", 0.0, "kl", source, "KL(p||q) = 0: speculation samples the joint exactly")
    calls = "model calls (nfe_count)" if sampler.scheme == "assd" else "forward passes (one per iteration)"
    ef, mf, d = float(run.forwards), float(run.max_forwards), float(ctx.d)
    em = float(rejection_cost(ctx.p))
    return [
        ComparisonRow("expected_forwards", "exact", "forwards", ef, None, None, None,
                      f"E[{calls}] (samplers.speculative_run)", "exact"),
        ComparisonRow("max_forwards", "exact", "forwards", mf, None, None, None,
                      f"largest count of {calls} with positive probability", "exact"),
        ComparisonRow("speculative_exact", "upper", "kl", 0.0, kl, None, exact_b.holds(kl, scale=ctx.scale), source,
                      status["exact"]),
        ComparisonRow("speculative_calls_le_d", "upper", "max_forwards", d, mf, slack(d, mf), d >= mf,
                      source + ": calls <= tokens (d)", status["calls"]),
        ComparisonRow("rejection_vs_speculative", "reference", "expected_forwards", em, ef, slack(em, ef), None,
                      "rejection from the product of marginals: E[M] proposals (Zhang et al.; >= e^TC)",
                      "verified here"),
    ]
