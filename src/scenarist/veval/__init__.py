"""The Veval half: the client, scenario items and their runner, item assertions, the wire format.

Code written for the Veval SDK finds its names at the top level (``scenarist.Client``,
``scenarist.ScenarioItem``...); this package is where they live. Every name loads on
first use (see :mod:`scenarist._lazy`): importing the package costs nothing.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes

if TYPE_CHECKING:
    from scenarist.model.items import ItemSummary, ScenarioItem, ScenarioRunRecord
    from scenarist.model.veval_wire import from_veval, to_veval
    from scenarist.veval.assertions import ITraceAssertion
    from scenarist.veval.client import Client, ClientOptions, VevalOptions
    from scenarist.veval.default_client import (
        get_client,
        run_scenario,
        run_scenario_async,
        set_client,
    )
    from scenarist.veval.results import ItemRunResult, ScenarioRunResult
    from scenarist.veval.snapshot_check import MatchesSnapshot
    from scenarist.veval.steps import Step, StepData
    from scenarist.veval.trace_assert import CustomAssertion, TraceAssert, TraceAssertionFn

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "Client": "scenarist.veval.client",
        "CustomAssertion": "scenarist.veval.trace_assert",
        "MatchesSnapshot": "scenarist.veval.snapshot_check",
        "TraceAssert": "scenarist.veval.trace_assert",
        "TraceAssertionFn": "scenarist.veval.trace_assert",
        "ClientOptions": "scenarist.veval.client",
        "VevalOptions": "scenarist.veval.client",
        "ITraceAssertion": "scenarist.veval.assertions",
        "ItemRunResult": "scenarist.veval.results",
        "ItemSummary": "scenarist.model.items",
        "ScenarioItem": "scenarist.model.items",
        "ScenarioRunRecord": "scenarist.model.items",
        "ScenarioRunResult": "scenarist.veval.results",
        "from_veval": "scenarist.model.veval_wire",
        "get_client": "scenarist.veval.default_client",
        "run_scenario": "scenarist.veval.default_client",
        "run_scenario_async": "scenarist.veval.default_client",
        "set_client": "scenarist.veval.default_client",
        "Step": "scenarist.veval.steps",
        "StepData": "scenarist.veval.steps",
        "to_veval": "scenarist.model.veval_wire",
    },
)

__all__ = [
    "Client",
    "ClientOptions",
    "CustomAssertion",
    "ITraceAssertion",
    "ItemRunResult",
    "ItemSummary",
    "MatchesSnapshot",
    "ScenarioItem",
    "ScenarioRunRecord",
    "ScenarioRunResult",
    "Step",
    "StepData",
    "TraceAssert",
    "TraceAssertionFn",
    "VevalOptions",
    "from_veval",
    "get_client",
    "run_scenario",
    "run_scenario_async",
    "set_client",
    "to_veval",
]
