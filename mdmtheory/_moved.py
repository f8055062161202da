"""Old import paths, kept for one release: the one table of what moved where.

The layout of docs/design.md ("Layout") replaced 27 flat modules by wings. An old module path
(``import mdmtheory.structured``, ``from mdmtheory.blocks import design_blocks``) and an old
attribute (``mt.ConfidencePlanner``, ``mt.schedules.sqrt_rule_schedule``) still work and
warn with a :class:`DeprecationWarning` naming the new place (a module path when it is
first imported). Nothing else in the package refers to the old paths.

Old keyword names (docs/design.md, "Vocabulary": one name per concept) are kept the same way,
with one warning (:func:`_warn_keyword`): :func:`renamed_keywords` on the function that renamed
them; :func:`renamed_keyword` inside a function that takes ``**old``; :func:`options_from`
where keywords became the fields of an options record (``CertificateOptions``,
``AttentionOptions``).
"""

from __future__ import annotations

import dataclasses
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
    # issue 36 item 6: one home per helper; the functions of a reveal time below, in schedules
    ("mdmtheory.information.ugc", "as_profile"): ("mdmtheory.information.profile", "as_profile"),
    ("mdmtheory.bounds.tightness", "compositions"): ("mdmtheory.schedules.plans", "compositions"),
}
#: Functions of a reveal time are a schedules concern (issue 36 item 6); reveal_odds was psi.
for _old, _new in (("log_odds", "log_odds"), ("from_log_odds", "from_log_odds"), ("reveal_odds", "psi")):
    NAMES[("mdmtheory.information.ugc", _old)] = ("mdmtheory.schedules.odds", _new)
    NAMES[("mdmtheory.information", _old)] = ("mdmtheory.schedules.odds", _new)

#: Renamed functions (docs/design.md, "Vocabulary": one verb for designing blocks,
#: ``design_blocks``; one name per meaning of a profile estimate): old name -> (module, new name),
#: readable from the wing and from the module that defines the new name.
_RENAMED = {
    "block_design": ("mdmtheory.design.from_data", "design_blocks_from_data"),
    "estimate_block_design": ("mdmtheory.design.blocks", "estimate_design_blocks"),
    "estimate_profile": ("mdmtheory.design.profile", "estimate_cross_entropy_profile"),
}
for _old, (_mod, _new) in _RENAMED.items():
    NAMES[("mdmtheory.design", _old)] = (_mod, _new)
    NAMES[(_mod, _old)] = (_mod, _new)

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
                    _warn_keyword(name, f"{old}=...", f"{new}=...", stacklevel=3)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__renamed_keywords__ = dict(old_to_new)
        return wrapper

    return decorate


def _warn_keyword(where: str, old: str, new: str, stacklevel: int = 4) -> None:
    """The one warning of a renamed keyword: "where(old) is now where(new); the old keyword
    works for one release" (pytest's filter turns it into an error in the package's tests)."""
    warnings.warn(f"{where}({old}) is now {where}({new}); the old keyword works for one release "
                  "(docs/design.md, 'Vocabulary')", DeprecationWarning, stacklevel=stacklevel)


# -- options records and renamed keywords (one release of the old spellings) ------------------
def options_from(cls, options, old: dict, *, where: str, name: str = "options", defaults: dict | None = None,
                 prefix: str = ""):
    """The options record of ``where``: ``options`` (a ``cls`` or None for the defaults), or
    one built from the old keyword arguments ``old`` (each ``prefix`` + a field of ``cls``),
    which warn with a :class:`DeprecationWarning` for one release. ``defaults`` fills fields
    left None in the record (a function's own default for a shared record)."""
    if options is not None and not isinstance(options, cls):
        raise ValueError(f"{name}: expected a {cls.__module__.split('.')[1]}.{cls.__name__}, got {type(options).__name__}")
    fields = {f.name for f in dataclasses.fields(cls)}
    for key in old:
        if not key.startswith(prefix) or key[len(prefix):] not in fields:
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")
    out = cls() if options is None else options
    if old:
        if options is not None:
            raise ValueError(f"{name}: give either {name}={cls.__name__}(...) or the old keywords "
                             f"{', '.join(sorted(old))}, not both")
        _warn_keyword(where, ", ".join(f"{k}=" for k in sorted(old)),
                      f"{name}={cls.__name__}({', '.join(f'{k[len(prefix):]}=...' for k in sorted(old))})")
        out = dataclasses.replace(out, **{k[len(prefix):]: v for k, v in old.items()})
    if defaults:
        out = dataclasses.replace(out, **{k: v for k, v in defaults.items() if getattr(out, k) is None})
    return out


def renamed_keyword(old: dict, old_name: str, new_name: str, value, default, *, where: str):
    """The value of the keyword ``new_name`` (``value``; ``default`` when not given), or of
    its old spelling ``old_name`` popped from ``old``, which warns with a
    :class:`DeprecationWarning` for one release (both given: a ValueError)."""
    if old_name not in old:
        return value
    given = old.pop(old_name)
    if value is not default:
        raise ValueError(f"{new_name}: give either {new_name} or its old name {old_name}, not both")
    _warn_keyword(where, f"{old_name}=...", f"{new_name}=...")
    return given
