"""Data: token arrays from files, text and tokenizers (:mod:`.datasets`, :mod:`.tokenized`),
checked and mapped to outcome indices 0..K-1."""

from . import datasets, tokenized
from .datasets import *  # noqa: F401,F403
from .tokenized import *  # noqa: F401,F403

__all__ = [*datasets.__all__, *tokenized.__all__]
