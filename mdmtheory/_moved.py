"""Old import paths, kept for one release: the one table of what moved where.

The layout of docs/design.md ("Layout") replaced 27 flat modules by wings. An old module path
(``import mdmtheory.structured``, ``from mdmtheory.blocks import design_blocks``) and an old
attribute (``mt.ConfidencePlanner``, ``mt.schedules.sqrt_rule_schedule``) still work and
warn with a :class:`DeprecationWarning` naming the new place (a module path when it is
first imported). Nothing else in
the package refers to the old paths.

Old keyword names (docs/design.md, "Vocabulary": one name per concept) are kept the same way
by :func:`renamed_keywords` on the function that renamed them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.util
import inspect
import sys
import types
import warnings

#: Old module -> the modules its names now live in (searched in order).
MODULES = {
    "mdmtheory.joint": ("mdmtheory.laws.joint",),
    "mdmtheory.families": ("mdmtheory.laws.families",),
    "mdmtheory.structured": ("mdmtheory.laws.oracles",),
    "mdmtheory.prompted": ("mdmtheory.laws.prompts", "mdmtheory.samplers.prompted"),
    "mdmtheory.entropies": ("mdmtheory.information.entropies",),
    "mdmtheory.profile": ("mdmtheory.information.profile",),
    "mdmtheory.ugc": ("mdmtheory.information.ugc",),
    "mdmtheory.dyadic": ("mdmtheory.information.dyadic",),
    "mdmtheory.divergence": ("mdmtheory.information.divergence",),
    "mdmtheory.integrations": ("mdmtheory.exports",),
    "mdmtheory.integrations.diffusers": ("mdmtheory.exports.diffusers",),
    "mdmtheory.integrations.llada": ("mdmtheory.exports.llada",),
    "mdmtheory.integrations.dream": ("mdmtheory.exports.dream",),
    "mdmtheory.integrations.mdlm": ("mdmtheory.exports.mdlm",),
    "mdmtheory.integrations.dllm": ("mdmtheory.exports.dllm",),
    "mdmtheory.datasets": ("mdmtheory.data.datasets",),
    "mdmtheory.tokenized": ("mdmtheory.data.tokenized",),
    "mdmtheory.diagnostics": ("mdmtheory.samplers.diagnostics",),
    "mdmtheory.sampler_eval": ("mdmtheory.samplers.metrics",),
    "mdmtheory.random_sizes": ("mdmtheory.samplers.randomized", "mdmtheory.schedules.plans",
                               "mdmtheory.optimal.randomized"),
    "mdmtheory.tightness": ("mdmtheory.bounds.tightness",),
    "mdmtheory.blocks": ("mdmtheory.optimal.blocks", "mdmtheory.design.blocks"),
    "mdmtheory.certificate": ("mdmtheory.design.certificate", "mdmtheory.laws.oracles"),
    "mdmtheory.certificate_blocks": ("mdmtheory.design.certificate_blocks",),
    "mdmtheory.plots": ("mdmtheory.report.plots",),
}

#: (module that still exists, old attribute) -> (module, new name).
NAMES = {
    ("mdmtheory.schedules", "sqrt_rule_schedule"): ("mdmtheory.optimal.card", "sqrt_rule_schedule"),
    ("mdmtheory.blocks", "BlockPlan"): ("mdmtheory.optimal.blocks", "BlockCandidate"),
    ("mdmtheory.optimal", "BlockPlan"): ("mdmtheory.optimal.blocks", "BlockCandidate"),
    ("mdmtheory.bridge.attention", "plot_received"): ("mdmtheory.report.plots", "plot_received"),
    ("mdmtheory.bridge.attention", "plot_absorption"): ("mdmtheory.report.plots", "plot_absorption"),
    ("mdmtheory.bridge.attention", "MAX_PLOT_CELLS"): ("mdmtheory.report.plots", "MAX_PLOT_CELLS"),
}

#: Names the top level re-exported before the layout, now only in their wing.
_TOP = {
    "mdmtheory.information": ("subset_entropies", "entropy_coefficients", "total_correlation",
                              "dual_total_correlation", "sum_of_entropies", "sum_mutual_information",
                              "tse_complexity", "card_gain_coefficients", "reverse_kl", "off_support_mass",
                              "step_path_kl"),
    "mdmtheory.samplers": ("register_planner", "RandomPlanner", "LeftToRightPlanner", "ConfidencePlanner",
                           "MarginPlanner", "EntropyPlanner", "SemiAutoregressivePlanner", "ThresholdPlanner",
                           "EntropyBudgetPlanner", "DilatedPlanner", "PositionCalibratedPlanner", "prompted_kl"),
    "mdmtheory.design": ("certify_blocks", "BlockCertificate"),
}
for _mod, _names in _TOP.items():
    for _name in _names:
        NAMES[("mdmtheory", _name)] = (_mod, _name)


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(f"{old} moved to {new}; the old path works for one release (docs/design.md, 'Layout')",
                  DeprecationWarning, stacklevel=stacklevel)


def _find(old_module: str, name: str):
    for new in MODULES[old_module]:
        module = importlib.import_module(new)
        if hasattr(module, name):
            return module, getattr(module, name)
    key = (old_module, name)
    if key in NAMES:
        new_module, new_name = NAMES[key]
        return importlib.import_module(new_module), getattr(importlib.import_module(new_module), new_name)
    raise AttributeError(f"module {old_module!r} has no attribute {name!r}")


class _Alias(types.ModuleType):
    """What ``import <old path>`` gives: every attribute read from the new modules."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _find(self.__name__, name)[1]

    def __dir__(self):
        out = set()
        for new in MODULES[self.__name__]:
            out |= set(getattr(importlib.import_module(new), "__all__", ()))
        return sorted(out)


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _Alias(spec.name)
        module.__path__ = []  # old packages (integrations) have submodules
        return module

    def exec_module(self, module):
        _warn(module.__name__, MODULES[module.__name__][0], stacklevel=2)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MODULES:
            return importlib.util.spec_from_loader(fullname, _Loader())
        return None


def install() -> None:
    """Put the finder of old module paths on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def module_getattr(module: str, name: str):
    """A package's ``__getattr__``: old names of this module and old submodule paths, warning."""
    key = (module, name)
    if key in NAMES:
        new_module, new_name = NAMES[key]
        _warn(f"{module}.{name}", f"{new_module}.{new_name}", stacklevel=4)
        return getattr(importlib.import_module(new_module), new_name)
    old = f"{module}.{name}"
    if old in MODULES:
        return importlib.import_module(old)  # its loader warns
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def renamed_keywords(**old_to_new: str):
    """Decorator: the old keyword names of a function still work for one release, warning.

    ``@renamed_keywords(law="p")`` on ``f(p, ...)``: ``f(law=x)`` calls ``f(p=x)`` and warns
    with a :class:`DeprecationWarning` ("f(law=...) is now f(p=...)"); passing both ``law``
    and ``p`` is a :class:`TypeError` naming both. Positional calls are untouched. Each new
    name must be a parameter of the function (checked when the decorator is applied).
    """
    for old, new in old_to_new.items():
        if not isinstance(new, str) or not new.isidentifier() or old == new:
            raise ValueError(f"renamed_keywords: {old}={new!r} must name a different parameter")

    def decorate(func):
        params = inspect.signature(func).parameters
        for old, new in old_to_new.items():
            if new not in params:
                raise ValueError(f"renamed_keywords: {func.__qualname__} has no parameter {new!r} "
                                 f"(the new name of {old!r})")
            if old in params:
                raise ValueError(f"renamed_keywords: {func.__qualname__} still has the old parameter {old!r}")

        name = func.__qualname__.rsplit("<locals>.", 1)[-1].removesuffix(".__init__")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{name}() got both {old!r} (the old name) and {new!r}; "
                                        f"pass only {new!r}")
                    warnings.warn(f"{name}({old}=...) is now {name}({new}=...); the old "
                                  "keyword works for one release (docs/design.md, 'Vocabulary')",
                                  DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__renamed_keywords__ = dict(old_to_new)
        return wrapper

    return decorate
