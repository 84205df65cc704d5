"""The tenant matrix's route table: one :class:`Entry` (or more) for every route of the app.

An entry says what the route does (``read``, ``write``, ``delete``, ``admin``, or
``public``: no project data), the scope it needs (or scopes: ingest and read for a write
that answers what it read), how to call it for the objects of a project
(:class:`~tests.server.tenant_matrix.Obj`), the status a caller with the scope gets on its
own project's objects, which objects a changing call needs fresh (``needs``), and the
other ways it can reach another project's data (``extras``: alpha's run compared with
beta's baseline, an item naming beta's trace, a key for beta...).
``test_every_route_has_a_matrix_entry`` fails for a route with no entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from tests.server.tenant_matrix import (
    ALPHA_TEXT,
    Call,
    Obj,
    otlp_document,
    scenario_run,
    veval_trace,
)

if TYPE_CHECKING:
    from tests.server.tenant_matrix import Harness, Reply

__all__ = ["ENTRIES", "PUBLIC", "Entry", "Extra"]

Action = Literal["read", "write", "delete", "admin"]
Scope = Literal["ingest", "read", "admin"]
Build = Callable[[Obj, "Harness"], Call]
Verify = Callable[["Reply", Obj, "Harness"], list[str]]


def q(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


@dataclass(frozen=True)
class Extra:
    """Another way to reach the other project: ``build(alpha's obj, target, harness)``.
    ``as_free``: the answer must be the one the same call gets with a free id in the
    target's place (and the target unchanged); otherwise it must be refused (403/404).
    ``target``: whose objects (``beta``; ``*`` for a key that opens every project)."""

    name: str
    build: Callable[[Obj, Obj, Harness], Call]
    as_free: bool = True
    target: str = "beta"
    lands: Callable[[Obj], str] | None = None  # what it creates, from the target's ids


@dataclass(frozen=True)
class Entry:
    method: str
    path: str
    action: Action
    scope: Scope | tuple[Scope, ...]
    build: Build
    ok: int
    needs: frozenset[str] = frozenset()
    label: str = ""
    named: bool = False  # addressed by a name both projects hold ("support", "baseline")
    extras: tuple[Extra, ...] = ()
    lands: Callable[[Obj], str] | None = None  # where a created object must be (alpha)
    verify: Verify | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def route(self) -> tuple[str, str]:
        return (self.method, self.path)

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}" + (f" ({self.label})" if self.label else "")

    @property
    def scopes(self) -> tuple[str, ...]:
        return self.scope if isinstance(self.scope, tuple) else (self.scope,)

    @property
    def changes(self) -> bool:
        return self.action != "read"


def _needs(*kinds: str) -> frozenset[str]:
    return frozenset(kinds)


JSON = {"accept": "application/json"}
HTML = {"accept": "text/html"}


def _run_log(o: Obj, h: Harness) -> Call:
    log = h.content.run_log(
        o.run_id, text=ALPHA_TEXT, suite="made", scenario="made", complete=True, old=False
    )
    return Call("POST", "/api/runs", json=log)


def _more_records(o: Obj, h: Harness) -> dict[str, object]:
    """The next part of the project's incomplete run: one more scenario record."""
    log = h.content.run_log(
        o.run_id, text=ALPHA_TEXT, suite="made", scenario="made", complete=False, old=False
    )
    return {"scenarios": [{**log["scenarios"][0], "index": 7}]}


def _run_log_naming_beta(a: Obj, t: Obj, h: Harness) -> Call:
    log = h.content.run_log(
        a.run_id, text=ALPHA_TEXT, suite="made", scenario="made", complete=True, old=False
    )
    log["header"]["project"] = t.project
    return Call("POST", "/api/runs", json=log)


def _compare(run_id: str, baseline: str, page: str | None = None) -> str:
    """The API's compare (``page`` None), or the dashboard's (``page``: "" or ".json")."""
    prefix = "/api" if page is None else ""
    return f"{prefix}/runs/{q(run_id)}/compare{page or ''}?baseline={q(baseline)}"


def _pick(run_id: str, baseline: str, suffix: str = "") -> str:
    """The compare page's pickers (``/compare?run=&baseline=``)."""
    return f"/compare{suffix}?run={q(run_id)}&baseline={q(baseline)}"


def _key_is_alphas(reply: Reply, o: Obj, h: Harness) -> list[str]:
    """A key made by alpha's admin opens alpha only."""
    if not 200 <= reply.status < 300:
        return []
    made = reply.json()
    return [] if made.get("projects") == ["alpha"] else [f"alpha's admin made the key {made}"]


def _settings_key_is_alphas(reply: Reply, o: Obj, h: Harness) -> list[str]:
    """The settings page shows the key it made, once: that key opens alpha only."""
    import re

    made = set(re.findall(r"sk_scen_([0-9a-f]+)_", reply.text))
    keys = h.admin("GET", "/api/keys", None).json()
    return [f"alpha's admin made the key {k}" for k in keys
            if k["key_id"] in made and k["projects"] != ["alpha"]]  # fmt: skip


def _snapshot(o: Obj) -> str:
    return f"/v1/snapshots/{q(o.snapshot)}"


def _result(o: Obj) -> str:
    """The first scenario result of the project's run (its review routes)."""
    return f"/runs/{q(o.run_id)}/scenarios/0"


def _items(o: Obj) -> str:
    return f"/v1/scenarios/{q(o.scenario)}/items"


_KEY_GLOBAL = Extra(
    "global key", lambda a, t, h: Call("DELETE", f"/api/keys/{q(t.key_id)}"),
    as_free=False, target="*",
)  # fmt: skip

ENTRIES: tuple[Entry, ...] = (
    # -- REST /api -----------------------------------------------------------------------
    Entry("POST", "/api/runs", "write", "ingest", _run_log, 201, _needs("run"),
          extras=(Extra("run log naming beta", _run_log_naming_beta, as_free=False),),
          lands=lambda o: f"/api/runs/{q(o.run_id)}"),
    Entry("POST", "/api/runs/{run_id}/records", "write", "ingest", lambda o, h: Call(
              "POST", f"/api/runs/{q(o.run_id)}/records", json=_more_records(o, h)),
          200, _needs("run")),
    Entry("GET", "/api/runs", "read", "read",
          lambda o, h: Call("GET", "/api/runs?limit=500"), 200),
    Entry("GET", "/api/runs/{run_id}", "read", "read",
          lambda o, h: Call("GET", f"/api/runs/{q(o.run_id)}"), 200),
    Entry("GET", "/api/runs/{run_id}/log", "read", "read",
          lambda o, h: Call("GET", f"/api/runs/{q(o.run_id)}/log"), 200),
    Entry("GET", "/api/runs/{run_id}/compare", "read", "read",
          lambda o, h: Call("GET", _compare(o.run_id, o.base_run_id)), 200,
          extras=(
              Extra("alpha's run, beta's baseline",
                    lambda a, t, h: Call("GET", _compare(a.run_id, t.base_run_id))),
              Extra("beta's run, alpha's baseline",
                    lambda a, t, h: Call("GET", _compare(t.run_id, a.base_run_id))),
          )),
    Entry("GET", "/api/runs/{run_id}/scenarios/{position}/reviews", "read", "read",
          lambda o, h: Call("GET", f"/api{_result(o)}/reviews"), 200),
    Entry("POST", "/api/runs/{run_id}/scenarios/{position}/reviews", "write", "ingest",
          lambda o, h: Call("POST", f"/api{_result(o)}/reviews",
                            json={"action": "comment", "reason": ALPHA_TEXT}),
          201, _needs("run")),
    Entry("GET", "/api/scenarios/{name:path}/history", "read", "read",
          lambda o, h: Call("GET", f"/api/scenarios/{q(o.scenario)}/history?suite={q(o.suite)}"),
          200, named=True),
    Entry("GET", "/api/traces", "read", "read",
          lambda o, h: Call("GET", "/api/traces?limit=500"), 200),
    Entry("POST", "/api/traces/{trace_id}/item", "write", "ingest",
          lambda o, h: Call("POST", f"/api/traces/{q(o.trace_id)}/item",
                            json={"scenario_name": f"made-{o.tag}"}),
          201, _needs("trace")),
    Entry("POST", "/api/traces/{trace_id}/snapshot", "write", "ingest",
          lambda o, h: Call("POST", f"/api/traces/{q(o.trace_id)}/snapshot",
                            json={"name": o.snapshot}),
          201, _needs("snapshot"),
          extras=(Extra("alpha's trace, beta's snapshot name",
                        lambda a, t, h: Call("POST", f"/api/traces/{q(a.trace_id)}/snapshot",
                                             json={"name": t.snapshot}), lands=_snapshot),)),
    Entry("GET", "/api/keys", "read", "admin", lambda o, h: Call("GET", "/api/keys"), 200),
    Entry("POST", "/api/keys", "admin", "admin",
          lambda o, h: Call("POST", "/api/keys",
                            json={"scopes": ["read"], "name": f"made {o.tag}"}),
          201,
          extras=(
              Extra("a key for beta", lambda a, t, h: Call(
                  "POST", "/api/keys", json={"scopes": ["read"], "projects": [t.project]}),
                  as_free=False),
          ),
          verify=_key_is_alphas),
    Entry("DELETE", "/api/keys/{key_id}", "admin", "admin",
          lambda o, h: Call("DELETE", f"/api/keys/{q(o.key_id)}"), 204, _needs("key"),
          extras=(_KEY_GLOBAL,)),
    Entry("POST", "/api/traces/{trace_id}/pin", "write", "ingest",
          lambda o, h: Call("POST", f"/api/traces/{q(o.trace_id)}/pin"), 200,
          _needs("trace", "unpinned")),
    Entry("DELETE", "/api/traces/{trace_id}/pin", "write", "ingest",
          lambda o, h: Call("DELETE", f"/api/traces/{q(o.trace_id)}/pin"), 200,
          _needs("trace", "pinned")),
    Entry("POST", "/api/runs/{run_id}/pin", "write", "ingest",
          lambda o, h: Call("POST", f"/api/runs/{q(o.run_id)}/pin"), 200,
          _needs("run", "unpinned")),
    Entry("DELETE", "/api/runs/{run_id}/pin", "write", "ingest",
          lambda o, h: Call("DELETE", f"/api/runs/{q(o.run_id)}/pin"), 200,
          _needs("run", "pinned")),
    Entry("POST", "/api/retention/prune", "delete", "admin",
          lambda o, h: Call("POST", "/api/retention/prune"), 200, _needs("old"),
          env={"SCENARIST_RETENTION_DAYS": "7"}),
    # judging a stored trace reads it: ingest and read (issue 29, item 6)
    Entry("POST", "/v1/judge", "read", ("ingest", "read"),
          lambda o, h: Call("POST", "/v1/judge",
                            json={"criteria": "polite", "trace_id": o.trace_id}),
          200),
    # -- Veval /v1 -----------------------------------------------------------------------
    Entry("POST", "/v1/traces", "write", "ingest",
          lambda o, h: Call("POST", "/v1/traces", json=veval_trace(o.trace_id, ALPHA_TEXT)),
          201, _needs("trace"), label="Veval trace",
          lands=lambda o: f"/v1/traces/{q(o.trace_id)}"),
    Entry("POST", "/v1/traces", "write", "ingest",
          lambda o, h: Call("POST", "/v1/traces", json=otlp_document(o.otlp_hex, ALPHA_TEXT)),
          200, _needs("otlp"), label="OTLP/JSON",
          lands=lambda o: f"/v1/traces/{o.otlp_trace_id}"),
    Entry("GET", "/v1/traces/{trace_id}", "read", "read",
          lambda o, h: Call("GET", f"/v1/traces/{q(o.trace_id)}"), 200, label="Veval trace"),
    Entry("GET", "/v1/traces/{trace_id}", "read", "read",
          lambda o, h: Call("GET", f"/v1/traces/{o.otlp_trace_id}"), 200, label="OTLP trace"),
    Entry("GET", "/v1/scenarios/{name:path}/items", "read", "read",
          lambda o, h: Call("GET", _items(o)), 200, named=True),
    Entry("PUT", "/v1/scenarios/{name:path}/items", "write", "ingest",
          lambda o, h: Call("PUT", _items(o), json={"items": [{"input": ALPHA_TEXT}]}),
          200, _needs("items"),
          extras=(Extra("an item naming beta's trace", lambda a, t, h: Call(
              "PUT", _items(a), json={"items": [{"trace_id": t.trace_id}]})),)),
    Entry("POST", "/v1/scenarios/{name:path}/items", "write", "ingest",
          lambda o, h: Call("POST", _items(o), json={"input": ALPHA_TEXT}), 201, _needs("items"),
          extras=(Extra("an item naming beta's trace", lambda a, t, h: Call(
              "POST", _items(a), json={"trace_id": t.trace_id})),)),
    Entry("PUT", "/v1/scenarios/{name:path}/items/{item_id}", "write", "ingest",
          lambda o, h: Call("PUT", f"{_items(o)}/{q(o.item_id)}", json={"input": ALPHA_TEXT}),
          200, _needs("items"),
          extras=(Extra("alpha's scenario, beta's item id", lambda a, t, h: Call(
              "PUT", f"{_items(a)}/{q(t.item_id)}", json={"input": ALPHA_TEXT})),)),
    Entry("DELETE", "/v1/scenarios/{name:path}/items/{item_id}", "delete", "ingest",
          lambda o, h: Call("DELETE", f"{_items(o)}/{q(o.item_id)}"), 204, _needs("items"),
          extras=(Extra("alpha's scenario, beta's item id", lambda a, t, h: Call(
              "DELETE", f"{_items(a)}/{q(t.item_id)}")),)),
    Entry("POST", "/v1/scenarios/{name:path}/runs", "write", "ingest",
          lambda o, h: Call("POST", f"/v1/scenarios/{q(o.scenario)}/runs",
                            json=scenario_run(o.scenario_run_id, ALPHA_TEXT)),
          201, _needs("scenario_run", "run"),
          extras=(Extra("the id of beta's incomplete run log", lambda a, t, h: Call(
              "POST", f"/v1/scenarios/{q(a.scenario)}/runs",
              json=scenario_run(t.run_id, ALPHA_TEXT)),
              lands=lambda t: f"/api/runs/{q(t.run_id)}"),),
          lands=lambda o: f"/api/runs/{q(o.scenario_run_id)}"),
    Entry("GET", "/v1/scenarios/{name:path}/runs", "read", "read",
          lambda o, h: Call("GET", f"/v1/scenarios/{q(o.scenario)}/runs"), 200, named=True),
    # a snapshot of a stored trace (trace_id) answers its steps: ingest and read (item 6)
    Entry("POST", "/v1/snapshots", "write", ("ingest", "read"),
          lambda o, h: Call("POST", "/v1/snapshots",
                            json={"name": o.snapshot, "trace_id": o.trace_id}),
          201, _needs("snapshot"),
          extras=(
              Extra("alpha's trace, beta's snapshot name", lambda a, t, h: Call(
                  "POST", "/v1/snapshots", json={"name": t.snapshot, "trace_id": a.trace_id}),
                  lands=_snapshot),
              Extra("beta's trace, alpha's snapshot name", lambda a, t, h: Call(
                  "POST", "/v1/snapshots", json={"name": a.snapshot, "trace_id": t.trace_id})),
          ),
          lands=lambda o: f"/v1/snapshots/{q(o.snapshot)}"),
    Entry("GET", "/v1/snapshots", "read", "read",
          lambda o, h: Call("GET", "/v1/snapshots?limit=500"), 200),
    Entry("GET", "/v1/snapshots/{name:path}", "read", "read",
          lambda o, h: Call("GET", f"/v1/snapshots/{q(o.snapshot)}"), 200, named=True),
    # -- OTLP ----------------------------------------------------------------------------
    Entry("POST", "/otlp/v1/traces", "write", "ingest",
          lambda o, h: Call("POST", "/otlp/v1/traces", json=otlp_document(o.otlp_hex, ALPHA_TEXT)),
          200, _needs("otlp", "trace"),
          extras=(Extra("scenarist.record naming beta's trace", lambda a, t, h: Call(
              "POST", "/otlp/v1/traces",
              json=otlp_document(a.otlp_hex, ALPHA_TEXT, record={"trace_id": t.trace_id})),
              lands=lambda t: f"/v1/traces/{q(t.trace_id)}"),),
          lands=lambda o: f"/v1/traces/{o.otlp_trace_id}"),
    # -- dashboard pages, their JSON twins, and forms ----------------------------------
    Entry("GET", "/", "read", "read", lambda o, h: Call("GET", "/", headers=HTML), 200),
    Entry("GET", "/index.json", "read", "read", lambda o, h: Call("GET", "/index.json"), 200),
    Entry("GET", "/projects", "read", "read",
          lambda o, h: Call("GET", "/projects", headers=HTML), 200),
    Entry("GET", "/projects.json", "read", "read",
          lambda o, h: Call("GET", "/projects.json"), 200),
    Entry("GET", "/traces", "read", "read",
          lambda o, h: Call("GET", "/traces?limit=200", headers=HTML), 200),
    Entry("GET", "/traces.json", "read", "read",
          lambda o, h: Call("GET", "/traces.json?limit=200"), 200),
    Entry("GET", "/suites/{name:path}", "read", "read",
          lambda o, h: Call("GET", f"/suites/{q(o.suite)}.json"), 200, named=True),
    Entry("GET", "/runs/{run_id}", "read", "read",
          lambda o, h: Call("GET", f"/runs/{q(o.run_id)}.json"), 200),
    Entry("GET", "/runs/{run_id}/scenarios/{position}", "read", "read",
          lambda o, h: Call("GET", f"/runs/{q(o.run_id)}/scenarios/0.json"), 200),
    Entry("GET", "/traces/{trace_id}", "read", "read",
          lambda o, h: Call("GET", f"/traces/{q(o.trace_id)}", headers=HTML), 200),
    Entry("GET", "/scenarios/{name:path}", "read", "read",
          lambda o, h: Call("GET", f"/scenarios/{q(o.scenario)}.json?suite={q(o.suite)}"), 200,
          named=True),
    Entry("GET", "/broken", "read", "read",
          lambda o, h: Call("GET", "/broken", headers=HTML), 200),
    Entry("GET", "/broken.json", "read", "read", lambda o, h: Call("GET", "/broken.json"), 200),
    Entry("GET", "/flaky", "read", "read", lambda o, h: Call("GET", "/flaky", headers=HTML), 200),
    Entry("GET", "/flaky.json", "read", "read", lambda o, h: Call("GET", "/flaky.json"), 200),
    Entry("GET", "/items/{name:path}", "read", "read",
          lambda o, h: Call("GET", f"/items/{q(o.scenario)}", headers=HTML), 200, named=True),
    Entry("POST", "/items/{name:path}", "write", "ingest",
          lambda o, h: Call("POST", f"/items/{q(o.scenario)}",
                            form={"action": "create", "input": ALPHA_TEXT}),
          303, _needs("items"), label="create",
          extras=(Extra("an item naming beta's trace", lambda a, t, h: Call(
              "POST", f"/items/{q(a.scenario)}",
              form={"action": "create", "trace_id": t.trace_id})),)),
    Entry("POST", "/items/{name:path}", "delete", "ingest",
          lambda o, h: Call("POST", f"/items/{q(o.scenario)}",
                            form={"action": "delete", "item_id": o.item_id}),
          303, _needs("items"), label="delete",
          extras=(Extra("alpha's scenario, beta's item id", lambda a, t, h: Call(
              "POST", f"/items/{q(a.scenario)}",
              form={"action": "delete", "item_id": t.item_id})),)),
    Entry("POST", "/traces/{trace_id}/item", "write", "ingest",
          lambda o, h: Call("POST", f"/traces/{q(o.trace_id)}/item",
                            form={"scenario_name": f"made-{o.tag}"}),
          303, _needs("trace")),
    Entry("POST", "/traces/{trace_id}/item.json", "write", "ingest",
          lambda o, h: Call("POST", f"/traces/{q(o.trace_id)}/item.json",
                            form={"scenario_name": f"made-{o.tag}"}),
          201, _needs("trace")),
    Entry("POST", "/runs/{run_id}/scenarios/{position}/review", "write", "ingest",
          lambda o, h: Call("POST", f"{_result(o)}/review",
                            form={"action": "comment", "reason": ALPHA_TEXT}),
          303, _needs("run")),
    Entry("POST", "/runs/{run_id}/scenarios/{position}/review.json", "write", "ingest",
          lambda o, h: Call("POST", f"{_result(o)}/review.json",
                            form={"action": "comment", "reason": ALPHA_TEXT}),
          201, _needs("run")),
    Entry("POST", "/traces/{trace_id}/snapshot", "write", "ingest",
          lambda o, h: Call("POST", f"/traces/{q(o.trace_id)}/snapshot", form={"name": o.snapshot}),
          303, _needs("snapshot"),
          extras=(Extra("alpha's trace, beta's snapshot name", lambda a, t, h: Call(
              "POST", f"/traces/{q(a.trace_id)}/snapshot", form={"name": t.snapshot}),
              lands=_snapshot),)),
    Entry("GET", "/runs/{run_id}/compare", "read", "read",
          lambda o, h: Call("GET", _compare(o.run_id, o.base_run_id, ""), headers=HTML), 200,
          extras=(Extra("alpha's run, beta's baseline", lambda a, t, h: Call(
              "GET", _compare(a.run_id, t.base_run_id, ""), headers=HTML)),)),
    Entry("GET", "/runs/{run_id}/compare.json", "read", "read",
          lambda o, h: Call("GET", _compare(o.run_id, o.base_run_id, ".json")), 200,
          extras=(Extra("alpha's run, beta's baseline", lambda a, t, h: Call(
              "GET", _compare(a.run_id, t.base_run_id, ".json"))),)),
    Entry("GET", "/compare", "read", "read",
          lambda o, h: Call("GET", _pick(o.run_id, o.base_run_id), headers=HTML), 200,
          extras=(
              Extra("alpha's run, beta's baseline", lambda a, t, h: Call(
                  "GET", _pick(a.run_id, t.base_run_id), headers=HTML)),
              Extra("alpha's run, beta's baseline typed", lambda a, t, h: Call(
                  "GET", _pick(a.run_id, a.base_run_id) + f"&baseline_id={q(t.base_run_id)}",
                  headers=HTML)),
          )),
    Entry("GET", "/compare.json", "read", "read",
          lambda o, h: Call("GET", _pick(o.run_id, o.base_run_id, ".json")), 200,
          extras=(
              Extra("beta's run, alpha's baseline", lambda a, t, h: Call(
                  "GET", _pick(t.run_id, a.base_run_id, ".json"))),
          )),
    Entry("GET", "/settings", "read", "admin",
          lambda o, h: Call("GET", "/settings", headers=HTML), 200),
    Entry("GET", "/settings.json", "read", "admin",
          lambda o, h: Call("GET", "/settings.json"), 200),
    Entry("POST", "/settings", "admin", "admin",
          lambda o, h: Call("POST", "/settings",
                            form={"action": "create", "name": f"made {o.tag}", "scope": "read"}),
          201, label="create", verify=_settings_key_is_alphas),
    Entry("POST", "/settings", "admin", "admin",
          lambda o, h: Call("POST", "/settings", form={"action": "revoke", "key_id": o.key_id}),
          303, _needs("key"), label="revoke",
          extras=(Extra("global key", lambda a, t, h: Call(
              "POST", "/settings", form={"action": "revoke", "key_id": t.key_id}),
              as_free=False, target="*"),)),
)  # fmt: skip

PUBLIC: dict[tuple[str, str], str] = {
    ("GET", "/openapi.json"): "the API's description",
    ("GET", "/docs"): "the API reference page, from the OpenAPI document",
    ("GET", "/redoc"): "redirects to /docs",
    ("GET", "/api/health"): "liveness: version and database kind",
    ("GET", "/login"): "the login form",
    ("POST", "/login"): "trades a key for a session (the session cells use it)",
    ("POST", "/logout"): "ends the caller's own session",
    ("MOUNT", "/static"): "CSS, script, vendored libraries",
}
"""Routes that hold no project's data, and why (their cells check only that they show
none of beta's)."""
