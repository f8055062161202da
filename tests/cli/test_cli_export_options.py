"""Export options as the user types them (issue 39 item 8): the LLaDA refusal names the option
that exists, and ``--format sglang`` takes ``--block-length`` with ``--steps``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mdmtheory.cli import main
from mdmtheory.exports import to_llada


def test_llada_refusal_names_the_current_option():
    with pytest.raises(ValueError, match="^block_length:") as e:
        to_llada([1, 3], block_length=2)
    assert "--block-length B" in str(e.value) and "--block-lengths" not in str(e.value)


def _rows(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(300, 4))
    np.save(tmp_path / "x.npy", x)
    return tmp_path / "x.npy"


def test_sglang_block_length_with_steps(tmp_path, capsys):
    data = _rows(tmp_path)
    capsys.readouterr()
    # 4 one-token steps in blocks of 2: SGLang runs it (threshold 1.0, block_size 2)
    assert main(["design", "--data", str(data), "--steps", "4", "--block-length", "2", "--format", "sglang",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    e = out["export"]
    assert out["sizes"] == [1, 1, 1, 1]
    assert e["block_length"] == 2 and e["num_blocks"] == 2 and e["dllm_algorithm_config"]["block_size"] == 2
    assert e["counts"] == [[1, 1], [1, 1]]
    # without --block-length: one block of the response
    assert main(["design", "--data", str(data), "--steps", "4", "--format", "sglang", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["export"]["block_length"] == 4
    # still refused where it means nothing: one-block formats
    assert main(["design", "--data", str(data), "--steps", "4", "--block-length", "2", "--format", "dream"]) == 2
    err = capsys.readouterr().err
    assert "--block-length" in err and "llada or sglang" in err
