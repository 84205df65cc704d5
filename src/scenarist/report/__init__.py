"""Presentation of results: the terminal report, JUnit XML and the Hub payload.

The result models in :mod:`scenarist.model.results` hold no presentation code; their
giskard-checks methods (``print_report``, ``to_junit_xml``, ``to_hub_format``, Rich's
``__rich_console__``) reach this package through one lazy import there, so
``import scenarist`` never loads Rich.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.report._console import print_report, render

if TYPE_CHECKING:
    from scenarist.report.hub import to_hub_format
    from scenarist.report.junit import to_junit_xml

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {"to_hub_format": "scenarist.report.hub", "to_junit_xml": "scenarist.report.junit"},
)

__all__ = ["print_report", "render", "to_hub_format", "to_junit_xml"]
