"""The bridge (torch): placeholder on branch data11 until bridge10's package lands.

bridge10 owns this file; on merge take bridge10's version (it loads ``tiny`` and ``train``
lazily). Only the submodules ``tiny`` and ``train`` live on this branch.
"""

import importlib

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(f"mdmtheory.bridge needs torch: pip install 'mdmtheory[bridge]' ({exc})") from None

_LAZY = ("tiny", "train")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mdmtheory.bridge' has no attribute {name!r}")
