"""Presentation of results: the terminal report, JUnit XML and the Hub payload.

The result models in :mod:`scenarist.model.results` hold no presentation code; they call into
this package lazily, so ``import scenarist`` never loads Rich.
"""

from scenarist.report._console import print_report, render

__all__ = ["print_report", "render"]
