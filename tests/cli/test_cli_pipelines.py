"""The new user's path of issue 18, end to end: a local Hugging Face masked-diffusion folder,
its tokenizer and a JSONL of prompt/response pairs → one ``mdmtheory design`` command (the
one docs/guide.md prints, run as written with the paths of this test) → a block design with forwards and KL
per candidate and a saved scheduler → diffusers' own ``LLaDA2Pipeline`` commits exactly the
designed counts. Everything is built here (``tokenizers``, a random-config BERT): no download.
"""

from __future__ import annotations

import json
import pathlib
import re
import shlex
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
diffusers = pytest.importorskip("diffusers")
tokenizers = pytest.importorskip("tokenizers")

from mdmtheory.cli import main  # noqa: E402
from mdmtheory.exports.diffusers import load_scheduler  # noqa: E402

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide.md"
WORDS = list("abcdefgh")


def _folder(path: pathlib.Path) -> transformers.PreTrainedTokenizerFast:
    from pipeline_reference import word_level_bert_folder

    return word_level_bert_folder(path, WORDS, 32)[0]  # no mask_token_id in the config: the tokenizer's


def _pairs(path: pathlib.Path, n: int = 40) -> None:
    rng = np.random.default_rng(0)
    with path.open("w") as fh:
        for _ in range(n):
            p = rng.choice(WORDS, size=int(rng.integers(5, 10)))
            r = [WORDS[(WORDS.index(p[-1]) + k) % 8] for k in range(int(rng.integers(6, 10)))]
            fh.write(json.dumps({"prompt": " ".join(p), "response": " ".join(r)}) + "\n")


def _guide_command() -> list[str]:
    text = GUIDE.read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "--jsonl" in b)
    return shlex.split(block.replace("\\\n", " "))


class _Adapter(torch.nn.Module):
    """The interface LLaDA2Pipeline calls (``model(x, attention_mask=, position_ids=).logits``)
    on top of the same BERT: a bidirectional model needs neither argument."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    @property
    def device(self):
        return next(self.bert.parameters()).device

    @property
    def dtype(self):
        return next(self.bert.parameters()).dtype

    def forward(self, x, attention_mask=None, position_ids=None):
        return SimpleNamespace(logits=self.bert(input_ids=x).logits)


def test_guide_command_designs_blocks_and_the_pipeline_commits_the_design(tmp_path, capsys):
    hf = tmp_path / "my-mdm"
    tok = _folder(hf)
    _pairs(tmp_path / "pairs.jsonl")
    argv = _guide_command()
    assert argv[:2] == ["mdmtheory", "design"]
    subst = {"pairs.jsonl": str(tmp_path / "pairs.jsonl"), "./my-mdm": str(hf),
             "./designed-scheduler": str(tmp_path / "designed-scheduler")}
    args = [subst.get(a, a) for a in argv[1:]] + ["--n-per-level", "20", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    # one block design: every candidate with its forwards and an estimated KL with its CI
    assert out["design"] == "blocks" and out["method"] == "estimated"
    assert out["view"] == "truncated"  # --format diffusers: scored as LLaDA2Pipeline runs the model (issue 39 item 1)
    assert [c["block_length"] for c in out["candidates"]] == [8, 4]
    for c in out["candidates"]:
        assert c["forwards"] == 4 and c["path_kl_ci"][0] <= c["path_kl"] <= c["path_kl_ci"][1]
        assert c["steps_per_block"] == 4 // (8 // c["block_length"])
    # the mask id came from the folder's own tokenizer, K from the tokens seen; both printed
    assert out["model"]["mask_id"] == tok.mask_token_id
    assert out["model"]["K"] == len(out["model"]["vocab"]) == out["K"]
    assert out["tokenized"]["n"] == 40 and out["tokenized"]["cut"] + out["tokenized"]["padded"] <= 40
    best = out["best"]
    # the saved scheduler, through diffusers' own pipeline, commits the designed counts
    sched = load_scheduler(tmp_path / "designed-scheduler")
    assert [list(c) for c in sched.counts] in ([best["counts"][0]], best["counts"])
    bert = transformers.AutoModelForMaskedLM.from_pretrained(str(hf), attn_implementation="eager")
    pipe = diffusers.LLaDA2Pipeline(model=_Adapter(bert).eval(), scheduler=sched, tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    seen = []

    def cb(pipeline, step, timestep, kw):
        seen.append(kw["transfer_index"].sum(dim=-1).tolist())
        return {}

    prompt = torch.tensor([tok.encode("a b c d e f g h", add_special_tokens=False)] * 2)
    call = dict(out["export"]["pipeline_call"])  # the arguments the export says to pass
    assert call["gen_length"] == 8  # printed with the call (the pipeline's default is 2,048)
    pipe(input_ids=prompt, output_type="seq", generator=torch.Generator().manual_seed(0),
         callback_on_step_end=cb, callback_on_step_end_tensor_inputs=["transfer_index"], **call)
    want = [k for row in best["counts"] for k in row]
    assert seen == [[k, k] for k in want]


def test_design_text_options_are_checked_by_name(tmp_path, capsys):
    hf = tmp_path / "m"
    _folder(hf)
    _pairs(tmp_path / "p.jsonl", n=5)
    (tmp_path / "t.txt").write_text("a b c\nd e f g h\n")
    base = ["design", "--forwards", "2"]
    capsys.readouterr()  # the set-up's save_pretrained progress bars
    cases = [
        (["--jsonl", str(tmp_path / "p.jsonl"), "--prompt-length", "4", "--response-length", "4"], "--tokenizer:"),
        (["--jsonl", str(tmp_path / "p.jsonl"), "--tokenizer", str(hf), "--response-length", "4"], "--response-length:"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf)], "--length:"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4", "--vocab", "all"], "--vocab:"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4", "--vocab", "0,1"], "--vocab: token id"),
        (["--text", str(tmp_path / "nope.txt"), "--tokenizer", str(hf), "--length", "4"], "--text: no such file"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(tmp_path), "--length", "4"], "--tokenizer:"),
        (["--data", str(tmp_path / "t.txt"), "--tokenizer", str(hf)], "--tokenizer: only with --text"),
        ([], "--data: give a token file"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4", "--format", "mdlm"], "--format:"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4", "--scheduler-out",
          str(tmp_path / "x")], "--scheduler-out: only with --format diffusers"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4", "--block-length", "3"],
         "--block-length: must divide"),
        (["--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4", "--mask-id", "3"], "--mask-id:"),
    ]
    for extra, match in cases:
        assert main(base + extra) == 2, extra
        err = capsys.readouterr().err.strip()
        assert err.startswith("mdmtheory design: " + match) or match in err, (extra, err)
        assert "\n" not in err


def test_text_without_a_model_designs_on_the_seen_outcomes(tmp_path, capsys):
    hf = tmp_path / "m"
    _folder(hf)
    rng = np.random.default_rng(1)
    (tmp_path / "t.txt").write_text("\n".join(" ".join(rng.choice(["a", "b"], size=4)) for _ in range(200)) + "\n")
    assert main(["design", "--text", str(tmp_path / "t.txt"), "--tokenizer", str(hf), "--length", "4",
                 "--forwards", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "exact" and out["outcomes"]["K"] == 2 and out["K"] == 2
    assert {c["block_length"] for c in out["candidates"]} == {1, 2, 4}
    assert out["best"]["forwards"] == 2


def test_block_design_of_a_token_file_with_a_prompt_exports_for_llada(tmp_path, capsys):
    import mdmtheory as mt
    from mdmtheory.optimal import design_blocks
    from mdmtheory.laws.families import empirical
    from mdmtheory.exports.llada import PlanCounts

    p = mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 6)
    rng = np.random.default_rng(0)
    x = np.stack(np.unravel_index(rng.choice(64, size=400, p=p.table.ravel()), (2,) * 6), axis=1)
    np.save(tmp_path / "x.npy", x)
    capsys.readouterr()
    assert main(["design", "--data", str(tmp_path / "x.npy"), "--prompt-length", "2", "--forwards", "2", "--block-length",
                 "2,4", "--format", "llada", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = design_blocks(empirical(x, 2), forwards=2, block_lengths=[2, 4], given=range(2))
    assert out["method"] == "exact" and out["best"]["block_length"] == ref.best.block_length
    assert [tuple(c) for c in out["best"]["counts"]] == list(ref.best.counts)
    e = out["export"]
    assert e["format"] == "llada" and e["steps"] == 2 and e["gen_length"] == 4
    pc = PlanCounts(e)  # the export goes into LLaDA's generate through integrations.llada unchanged
    mask = torch.ones((3, e["block_length"]), dtype=torch.bool)
    for b in range(e["num_blocks"]):
        assert pc(mask, e["steps_per_block"]).tolist() == [e["num_transfer_tokens"][b]] * 3


def test_estimate_reads_prompt_response_pairs(tmp_path, capsys):
    hf = tmp_path / "m"
    _folder(hf)
    _pairs(tmp_path / "p.jsonl", n=12)
    capsys.readouterr()
    assert main(["estimate", "--model", str(hf), "--jsonl", str(tmp_path / "p.jsonl"), "--tokenizer", str(hf),
                 "--prompt-length", "4", "--response-length", "4", "--n-per-level", "10", "--sizes", "2,2",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["levels"] == [0, 1, 2, 3] and out["prompt_length"] == 4 and out["d"] == 8
    assert out["model"]["mask_id"] == 9 and out["tokenized"]["n"] == 12 and out["path"]["sizes"] == [2, 2]
