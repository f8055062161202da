"""One name per concept (docs/design.md, "Vocabulary"): old keywords work for one release.

``_moved.renamed_keywords`` maps an old keyword to its new name with a DeprecationWarning;
each renamed keyword of the public API gives the same result as the new one.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

from mdmtheory import _moved


def _f(p, steps=1, *, max_iter=10):
    return (p, steps, max_iter)


def _renamed():
    return _moved.renamed_keywords(law="p", maxiter="max_iter")(_f)


def test_new_keywords_and_positional_calls_do_not_warn():
    f = _renamed()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(1, 2, max_iter=3) == (1, 2, 3)
        assert f(p=1) == (1, 1, 10)


def test_old_keyword_gives_the_same_call_and_warns():
    f = _renamed()
    with pytest.warns(DeprecationWarning, match=r"_f\(law=\.\.\.\) is now _f\(p=\.\.\.\); the old keyword "
                                                r"works for one release"):
        assert f(law=1, steps=2) == (1, 2, 10)
    with pytest.warns(DeprecationWarning, match=r"maxiter=.*max_iter="):
        assert f(1, maxiter=7) == (1, 1, 7)


def test_old_and_new_keyword_together_is_a_type_error_naming_both():
    f = _renamed()
    with pytest.raises(TypeError, match=r"'law'.*'p'"):
        f(law=1, p=2)


def test_signature_and_name_are_the_new_ones():
    f = _renamed()
    assert f.__name__ == "_f"
    assert list(inspect.signature(f).parameters) == ["p", "steps", "max_iter"]
    assert f.__renamed_keywords__ == {"law": "p", "maxiter": "max_iter"}


def test_a_rename_to_a_missing_parameter_or_from_a_live_one_is_refused():
    with pytest.raises(ValueError, match="no parameter 'q'"):
        _moved.renamed_keywords(law="q")(_f)
    with pytest.raises(ValueError, match="old parameter 'steps'"):
        _moved.renamed_keywords(steps="p")(_f)
    with pytest.raises(ValueError, match="different parameter"):
        _moved.renamed_keywords(p="p")


def test_the_pytest_filter_turns_a_stray_old_keyword_into_an_error():
    """pyproject's filterwarnings matches the message, so the package and tests use new names."""
    f = _renamed()
    with pytest.raises(DeprecationWarning, match="the old keyword works for one release"):
        f(law=1)
