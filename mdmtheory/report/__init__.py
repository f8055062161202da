"""The report (:mod:`.report`: one HTML page of every number for a law or a model) and its
figures (:mod:`.plots`, matplotlib imported on use)."""

from . import report as _report_module
from .report import *  # noqa: F401,F403

__all__ = [*_report_module.__all__]
