"""The process-wide default client and the module-level ``run_scenario`` functions.

Made on first use (a local store unless a server is configured), replaced with
:func:`set_client` (the pytest plugin's ``scenarist_client`` fixture installs a
``TestClient`` this way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scenarist.veval.client import Client

if TYPE_CHECKING:
    from scenarist.model.items import ScenarioItem
    from scenarist.veval.assertions import Assertion
    from scenarist.veval.execution import Agent
    from scenarist.veval.results import ScenarioRunResult

__all__ = ["get_client", "run_scenario", "run_scenario_async", "set_client"]

_default_client: Client | None = None


def get_client() -> Client:
    """The process-wide default client (local store unless a server is configured)."""
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client


def set_client(client: Client | None) -> Client | None:
    """Replace the default client (``None`` makes a fresh one on next use); return the
    previous one (``None`` if none was made yet), so a caller can put it back."""
    global _default_client
    previous, _default_client = _default_client, client
    return previous


async def run_scenario_async(
    scenario_name: str,
    agent: Agent,
    scenario_assertions: Sequence[Assertion] | None = None,
    items: Sequence[ScenarioItem] | None = None,
    mock_model_steps: bool = False,
    max_concurrency: int = 1,
    *,
    live_model_steps: bool = False,
    executor: Any = None,
) -> ScenarioRunResult:
    """:meth:`Client.run_scenario_async` on the default client."""
    return await get_client().run_scenario_async(
        scenario_name,
        agent,
        scenario_assertions,
        items,
        mock_model_steps,
        max_concurrency,
        live_model_steps=live_model_steps,
        executor=executor,
    )


def run_scenario(
    scenario_name: str,
    agent: Agent,
    scenario_assertions: Sequence[Assertion] | None = None,
    items: Sequence[ScenarioItem] | None = None,
    mock_model_steps: bool = False,
    max_concurrency: int = 1,
    *,
    live_model_steps: bool = False,
    executor: Any = None,
) -> ScenarioRunResult:
    """:meth:`Client.run_scenario` on the default client."""
    return get_client().run_scenario(
        scenario_name,
        agent,
        scenario_assertions,
        items,
        mock_model_steps,
        max_concurrency,
        live_model_steps=live_model_steps,
        executor=executor,
    )
