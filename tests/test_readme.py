"""The README's examples run and print what the README says they print."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    text = README.read_text()
    return re.findall(r"```(\w*)\n(.*?)```", text, re.S)


def test_examples_print_what_the_readme_shows():
    blocks = _blocks()
    namespace: dict = {}
    checked = 0
    for (lang, code), (next_lang, shown) in zip(blocks, blocks[1:]):
        if lang != "python" or next_lang != "" or "@given" in code:
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - our own README
        assert out.getvalue().strip() == shown.strip()
        checked += 1
    assert checked >= 2


def test_user_bound_example_runs():
    code = next(c for lang, c in _blocks() if lang == "python" and "@given" in c)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102
    namespace["test_my_bound"]()
