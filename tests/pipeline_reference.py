"""What the tests that run diffusers' own LLaDA2Pipeline share: a word-level tokenizer over the
binary alphabet, and the true law as the pipeline's model. Written from the dense table, with
no mdmtheory code; torch, transformers and tokenizers are imported by the caller's
importorskip first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch
import transformers


def tokenizer():
    """Tokens a = 0, b = 1, [MASK] = 2, [UNK] = 3."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"a": 0, "b": 1, "[MASK]": 2, "[UNK]": 3}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tk, mask_token="[MASK]", unk_token="[UNK]")


def word_level_bert_folder(path, words, max_positions: int) -> tuple:
    """A local Hugging Face folder as a user has one: a word-level tokenizer over ``words``
    (then [PAD], [MASK], [UNK]) and a random 1-layer BERT masked LM (seed 0) saved beside it.
    Returns (tokenizer, vocab)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(words)}
    for t in ("[PAD]", "[MASK]", "[UNK]"):
        vocab[t] = len(vocab)
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, mask_token="[MASK]", pad_token="[PAD]",
                                               unk_token="[UNK]")
    tok.save_pretrained(path)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=max_positions)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(cfg).save_pretrained(path)
    return tok, vocab


class PipelineModel(torch.nn.Module):
    """What LLaDA2Pipeline reads of a model besides its forward: ``.device`` and ``.dtype``
    (a parameterless module carries one anchor parameter for the device)."""

    def __init__(self):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    @property
    def device(self):
        return self.anchor.device

    @property
    def dtype(self):
        return torch.float32


class ExactLawModel(PipelineModel):
    """The true binary law of the last d positions as logits, the positions before them (a
    prompt block) ignored: at a masked j, log p(x_j | x_A); at a visible j the leave-one-out
    log p(x_j | x_{A minus j}) (the editing model EditingSampler assumes). ``decimals``: the
    conditionals rounded first, so that values equal in exact arithmetic give bit-identical
    logits (ties the pipeline's torch.topk then breaks); ``calls`` counts the forwards."""

    def __init__(self, p, mask_id: int, vocab: int, *, decimals: int | None = None):
        super().__init__()
        self.d, self.decimals = p.d, decimals
        self.table = torch.tensor(p.table.ravel(), dtype=torch.float64)
        self.cells = torch.tensor(np.stack(np.unravel_index(np.arange(2**p.d), (2,) * p.d), axis=1))
        self.mask_id, self.vocab = mask_id, vocab
        self.calls = 0

    def forward(self, x, attention_mask=None, position_ids=None):
        self.calls += 1
        B, L = x.shape
        d = self.d
        r = x[:, -d:]
        rev = r != self.mask_id
        match = (self.cells[None] == r[:, None, :]) | ~rev[:, None, :]  # (B, cells, d)
        out = torch.full((B, L, self.vocab), -torch.inf, dtype=torch.float64)
        for j in range(d):
            w = torch.cat([match[:, :, :j], match[:, :, j + 1:]], dim=2).all(dim=2) * self.table[None]
            for v in range(2):
                cond = (w * (self.cells[None, :, j] == v)).sum(1) / w.sum(1)
                if self.decimals is not None:
                    cond = torch.round(cond, decimals=self.decimals)
                out[:, L - d + j, v] = torch.log(cond)
        out[:, : L - d, 0] = 0.0
        return SimpleNamespace(logits=out.float())
