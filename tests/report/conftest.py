"""Fixtures for the report tests; the builders live in ``report_factories``."""

from __future__ import annotations

import pytest
from report_factories import erroring, failing, nochecks, passing, suite_of

from scenarist.model.results import SuiteResult


@pytest.fixture
def demo_suite() -> SuiteResult:
    """The four scenarios of giskard's observed demo suite."""
    return suite_of(passing(), failing(), erroring(), nochecks())
