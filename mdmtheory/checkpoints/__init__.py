"""Trained tiny checkpoints shipped as package data (see mdmtheory.bridge.tiny.load_pretrained).

Each ``NAME.safetensors`` has a ``NAME.json`` beside it with its config and the command and
seed that trained it (benchmarks/train_checkpoints.py).
"""
