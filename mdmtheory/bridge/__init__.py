"""Bridge to real models (torch, extra ``bridge``): imported lazily by its submodules.

Placeholder until the bridge core (issue 10) lands; :mod:`mdmtheory.bridge.attention`
holds the attention diagnostics (issue 13).
"""
