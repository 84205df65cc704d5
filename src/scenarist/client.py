"""Old import path of the client, now :mod:`scenarist.veval.client` and
:mod:`scenarist.veval.default_client`; kept so existing imports work."""

from scenarist.veval.client import Client, ClientOptions
from scenarist.veval.default_client import (
    get_client,
    run_scenario,
    run_scenario_async,
    set_client,
)
from scenarist.veval.execution import Agent

__all__ = [
    "Agent",
    "Client",
    "ClientOptions",
    "get_client",
    "run_scenario",
    "run_scenario_async",
    "set_client",
]
