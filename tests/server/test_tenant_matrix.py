"""Projects are tenants: every route × {own project, other project} × {ingest, read, admin
key}, on SQLite and PostgreSQL, through the real HTTP server (issue 29).

One server per back end (module scope) holds two projects, ``alpha`` and ``beta``, each
seeded through the API with a global admin key with one of everything: a complete and an
incomplete run log, a Veval trace, an OTLP trace, scenario items, a Veval scenario run, a
snapshot, pins, keys, and the same names in both (suite and scenario ``support``, snapshot
``baseline``). Beta's content carries a secret string. The callers are alpha's three keys
(``ingest``, ``read``, ``admin``, each limited to alpha) and alpha's dashboard sessions.

The routes come from the app itself (``fastapi.routing.iter_route_contexts``): a route with
no entry in :mod:`tests.server.tenant_routes` fails
``test_every_route_has_a_matrix_entry``. The entries cover REST ``/api``, Veval ``/v1``,
OTLP (``/otlp/v1/traces`` and OTLP bodies at ``/v1/traces``), the dashboard pages and their
``.json`` twins, and the forms (items, trace actions, settings). In short (the scope each
needs in brackets):

- reads [read]: ``GET /api/runs``, ``/api/runs/{id}``, ``/api/runs/{id}/compare``,
  ``/api/traces``, ``/api/scenarios/{name}/history``, ``/v1/traces/{id}`` (Veval and OTLP
  traces), ``/v1/scenarios/{name}/items`` and ``…/runs``, ``/v1/snapshots[/{name}]``;
  ``POST /v1/judge`` of a stored trace reads it [ingest and read];
- writes that create with an id the caller chooses [ingest]: ``POST /api/runs``,
  ``POST /v1/traces`` (a Veval body, an OTLP body), ``POST /otlp/v1/traces``,
  ``POST /v1/scenarios/{name}/runs``; ``POST /v1/snapshots`` of a stored trace, which
  answers its steps [ingest and read];
- changes and deletes [ingest]: scenario items (``PUT``/``POST …/items``,
  ``PUT``/``DELETE …/items/{id}``), trace actions (``POST /api/traces/{id}/item`` and
  ``…/snapshot``), pins (``POST``/``DELETE /api/runs|traces/{id}/pin``);
- admin [admin]: ``GET``/``POST /api/keys``, ``DELETE /api/keys/{id}``,
  ``POST /api/retention/prune``, ``GET /settings[.json]``, ``POST /settings`` (create,
  revoke);
- dashboard pages and their ``.json`` twins [read]: ``/``, ``/index.json``,
  ``/suites/{name}``, ``/runs/{id}`` (``/scenarios/{n}``, ``/compare[.json]``),
  ``/traces/{id}``, ``/scenarios/{name}``, ``/items/{name}``; forms [ingest]:
  ``POST /items/{name}`` (create, delete), ``POST /traces/{id}/item`` and ``…/snapshot``;
- public, no project data: ``/docs``, ``/redoc``, ``/openapi.json``, ``/api/health``,
  ``/login``, ``/logout``, ``/static``.

Each cell is one entry, one of alpha's keys, one way of calling:

- ``own`` (and ``own session``, through alpha's dashboard session): alpha's object →
  the entry's status when the key has the scope, else 403; what it creates lands in
  alpha (not ``default``); a key it makes opens alpha only.
- ``common``: the name both projects hold → alpha's object only.
- ``id``: beta's object by its id or name, naming no project → the same status and body
  shape as a free id gets (an id taken in beta must look free), and what it creates is
  alpha's own object of that id.
- ``query`` / ``header``: beta named by ``?project=beta`` or ``X-Scenarist-Project: beta``
  → 403 or 404.
- ``cookie`` / ``session``: the ``scenarist_project`` cookie naming beta, with alpha's key
  or alpha's session. A remembered project the caller's key does not open counts as
  naming none (so a stale cookie never locks a browser out of its own project): these
  cells are ``id`` cells sent with that cookie, answered in alpha as a free id is.
- extras: alpha's run against beta's baseline, an item naming beta's trace, a snapshot of
  alpha's trace under beta's snapshot name, a scenario run with the id of beta's
  incomplete run log, an OTLP ``scenarist.record`` naming beta's trace, a run log whose
  header names beta, a key for beta, revoking a key that opens every project.

In every cell nothing of beta's shows (its secret, ids, key ids) unless the request sent
it, and a cell that can change data leaves beta's objects byte-identical (read back with
the global key; pins from the database, no route shows them) and every list of beta's
and ``default``'s, and every key that is not alpha's, as they were.

The real clients: the veval-sdk 1.4.0 (side venv, a subprocess) and the OTel SDK's
OTLP/HTTP exporter, with alpha's key, see and change alpha's data only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.limits import HANG_S
from tests.server.tenant_matrix import (
    ALPHA,
    BETA,
    COMMON,
    SECRET,
    Call,
    Harness,
    Obj,
    Reply,
    forbidden,
    free_obj,
    placeholders,
    shape,
)
from tests.server.tenant_routes import ENTRIES, PUBLIC, Entry, Extra

from scenarist.server.app import create_app
from scenarist.server.threaded import ThreadedServer

pytest.importorskip("uvicorn", reason="the server extra is not installed")

KEYS = ("ingest", "read", "admin")
NAMING = ("query", "header", "cookie", "session")
AS_ID = ("id", "cookie", "session")  # a cookie naming a project the key does not open: ignored
OWN = ("own", "own session", "common")
HERE = Path(__file__).parent


@dataclass(frozen=True)
class Cell:
    entry: Entry
    key: str
    variant: str  # own, common, id, query, header, cookie, session, or an extra's name
    extra: Extra | None = None

    @property
    def allowed(self) -> bool:
        return self.key == "admin" or set(self.entry.scopes) <= {self.key}

    @property
    def fresh(self) -> bool:
        """Whether it works on objects made for it alone (a call that may change them)."""
        return self.entry.changes and self.allowed

    @property
    def id(self) -> str:
        return f"{self.entry.name} | {self.key} key | {self.variant}"


def _cells() -> list[Cell]:
    cells = []
    for entry in ENTRIES:
        for key in KEYS:
            variants = ["own", "own session", *(["common"] if entry.named else []), "id", *NAMING]
            for variant in variants:
                if "session" in variant and key == "ingest":
                    continue  # an ingest key cannot sign in
                cells.append(Cell(entry, key, variant))
            cells += [Cell(entry, key, extra.name, extra) for extra in entry.extras]
    return cells


CELLS = _cells()


# -- the server and its data ---------------------------------------------------------------


def _echo_judge(messages: list[Any]) -> dict[str, Any]:
    """A judge that repeats what it was shown: a trace it should not have read shows."""
    shown = " ".join(str(getattr(m, "content", m)) for m in messages)
    return {"passed": True, "reason": shown[-2000:], "score": 1.0}


@dataclass
class Matrix:
    harness: Harness
    objects: dict[str, tuple[Obj, Obj]] = field(default_factory=dict)
    baseline: dict[str, Any] | None = None

    def pair(self, cell: Cell) -> tuple[Obj, Obj]:
        """Alpha's object and the target (beta's, or a global key) for ``cell``."""
        if cell.id in self.objects:
            return self.objects[cell.id]
        target = "*" if cell.extra is not None and cell.extra.target == "*" else BETA
        return self.harness.shared[ALPHA], self.harness.shared[target]

    def prepare(self) -> None:
        """Every changing cell's own objects, made before any cell runs."""
        for number, cell in enumerate(CELLS):
            if not cell.fresh or not cell.entry.needs:
                continue
            tag = f"c{number}"
            needs = cell.entry.needs
            if cell.variant in OWN:
                alpha = self.harness.make(ALPHA, needs, tag)
                self.objects[cell.id] = (alpha, alpha)
                continue
            target = cell.extra.target if cell.extra is not None else BETA
            alpha = self.harness.shared[ALPHA]
            if cell.extra is not None:
                alpha = self.harness.make(ALPHA, needs, tag)
            made = self.harness.make(target, needs, tag)
            self.objects[cell.id] = (alpha, made)
            if cell.variant in AS_ID or (cell.extra is not None and cell.extra.as_free):
                # alpha may rightly hold an object of the same id after this cell: seeing
                # that id in alpha's lists is no leak
                self.harness.claimed |= made.ids()
        self.baseline = self.harness.whole()

    def unchanged(self) -> list[str]:
        """What changed in beta's lists, ``default``'s, or keys not alpha's, since the
        last look (then taken as the new baseline, so one cell's harm is reported once)."""
        now = self.harness.whole()
        before, self.baseline = self.baseline or {}, now
        return [f"{name} changed: {_diff(before.get(name), value)}"
                for name, value in now.items() if before.get(name) != value]  # fmt: skip


def _diff(before: Any, after: Any) -> str:
    if isinstance(before, list) and isinstance(after, list):

        def ids(items: list[Any]) -> dict[str, Any]:
            found = {}
            for item in items:
                if isinstance(item, dict):
                    name = item.get("run_id") or item.get("key_id")
                    name = name or (item.get("name") if "version" in item else None)
                    found[str(name or item.get("trace_id"))] = item
            return found

        old, new = ids(before), ids(after)
        added = sorted(set(new) - set(old))
        removed = sorted(set(old) - set(new))
        changed = sorted(k for k in set(old) & set(new) if old[k] != new[k])
        return f"added {added}, removed {removed}, changed {changed}"
    return f"{str(before)[:300]} -> {str(after)[:300]}"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def matrix(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Matrix]:
    from scenarist.providers.callable_provider import CallableProvider

    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("matrix") / "scenarist.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        url = f"sqlite:///{path}"
    else:
        cluster = request.getfixturevalue("pg_cluster")
        if cluster is None:
            pytest.skip("PostgreSQL binaries not found")
        name = "matrix_" + uuid.uuid4().hex[:12]
        cluster.createdb(name, template=cluster.template)
        url = cluster.url(name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCENARIST_HOME", str(tmp_path_factory.mktemp("home")))
        patch.delenv("SCENARIST_RETENTION_DAYS", raising=False)
        app = create_app(url)
        app.state.judge = CallableProvider(_echo_judge, name="echo-judge")
        with ThreadedServer(app) as server:
            harness = Harness(server.url, url)
            try:
                harness.start()
                matrix = Matrix(harness)
                matrix.prepare()
                yield matrix
            finally:
                harness.close()


# -- the cells -----------------------------------------------------------------------------


def _send(matrix: Matrix, cell: Cell, call: Call, naming: str | None = None) -> Reply:
    h = matrix.harness
    key: str | None = h.keys[cell.key]
    cookies: dict[str, str] = {}
    headers: dict[str, str] = {}
    query = None
    if naming == "query":
        query = BETA
    elif naming == "header":
        headers["X-Scenarist-Project"] = BETA
    elif naming == "cookie":
        cookies["scenarist_project"] = BETA
    elif naming in ("session", "own session"):
        key = None
        cookies["scenarist_session"] = h.sessions[cell.key]
        if naming == "session":
            cookies["scenarist_project"] = BETA
    return h.send(call, key=key, cookies=cookies, project_query=query, headers=headers)


def _created(matrix: Matrix, cell: Cell, obj: Obj, reply: Reply) -> list[str]:
    """What alpha's successful call stored is alpha's, and what it made opens alpha
    (``obj``: the objects whose ids the call used)."""
    if not _succeeded(reply):
        return []
    problems = []
    lands = cell.entry.lands if cell.extra is None else cell.extra.lands
    if lands is not None:
        problems += matrix.harness.lands_in_alpha(lands(obj))
    if cell.entry.verify is not None:
        problems += cell.entry.verify(reply, obj, matrix.harness)
    return problems


def _succeeded(reply: Reply) -> bool:
    return 200 <= reply.status < 400


def _shown(matrix: Matrix, reply: Reply, call: Call) -> list[str]:
    h = matrix.harness
    leaked = forbidden(reply, call, (h.beta_ids - h.claimed) | h.foreign_key_ids)
    return [f"shows beta's data: {leaked}"] if leaked else []


@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_tenant_cell(matrix: Matrix, cell: Cell, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in cell.entry.env.items():
        monkeypatch.setenv(name, value)  # read by the server (same process) per request
    h = matrix.harness
    entry = cell.entry
    alpha, target = matrix.pair(cell)
    problems: list[str] = []

    if cell.variant in OWN:
        obj = COMMON if cell.variant == "common" else alpha
        call = entry.build(obj, h)
        reply = _send(matrix, cell, call, "own session" if "session" in cell.variant else None)
        expected = entry.ok if cell.allowed else 403
        if reply.status != expected:
            problems.append(f"status {reply.status}, expected {expected}: {reply.text[:300]}")
        problems += _shown(matrix, reply, call)
        if cell.allowed:
            problems += _created(matrix, cell, obj, reply)
        if entry.changes and (cell.allowed or _succeeded(reply)):
            problems += matrix.unchanged()
        assert not problems, "\n".join(problems)
        return

    before = h.dump(target, entry.needs) if entry.changes else None
    if before is not None and cell.fresh:  # made for this cell: all there, or it tests nothing
        gone = [name for name, found in before.items()
                if (isinstance(found, tuple) and found[0] != 200) or found == []]  # fmt: skip
        if gone:
            problems.append(f"beta's {gone} missing before the call (lost by the seeding or "
                            "by an earlier cell)")  # fmt: skip
    free = free_obj(target.tag or "shared")
    if cell.variant in AS_ID or (cell.extra is not None and cell.extra.as_free):
        extra = cell.extra
        naming = cell.variant if cell.variant in NAMING else None

        def build(o: Obj) -> Call:
            return entry.build(o, h) if extra is None else extra.build(alpha, o, h)

        taken_call, free_call = build(target), build(free)
        taken = _send(matrix, cell, taken_call, naming)
        answer = _send(matrix, cell, free_call, naming)
        if shape(taken, placeholders(target)) != shape(answer, placeholders(free)):
            problems.append(
                f"an id taken in beta is answered {taken.status} {taken.text[:300]!r}, "
                f"a free one {answer.status} {answer.text[:300]!r}"
            )
        problems += _shown(matrix, taken, taken_call)
        if cell.allowed:
            problems += _created(matrix, cell, target, taken)
            problems += _created(matrix, cell, free, answer)
        succeeded = _succeeded(taken) or _succeeded(answer)
    else:
        naming = cell.variant if cell.variant in NAMING else None
        call = entry.build(target, h) if cell.extra is None else cell.extra.build(alpha, target, h)
        reply = _send(matrix, cell, call, naming)
        if reply.status not in (403, 404):
            problems.append(f"status {reply.status}, expected 403 or 404: {reply.text[:300]}")
        problems += _shown(matrix, reply, call)
        if cell.allowed:
            problems += _created(matrix, cell, alpha, reply)
        succeeded = _succeeded(reply)

    if before is not None:
        after = h.dump(target, entry.needs)
        problems += [f"beta's {name} changed: {before[name]!r:.300} -> {after.get(name)!r:.300}"
                     for name in before if after.get(name) != before[name]]  # fmt: skip
    if entry.changes and (cell.allowed or succeeded):  # a refused call changes nothing
        problems += matrix.unchanged()
    assert not problems, "\n".join(problems)


def test_the_seeded_objects_are_where_they_were_put(matrix: Matrix) -> None:
    """Each project's objects read back from that project with the global key, and not
    from the other (else the cells above would test nothing)."""
    h = matrix.harness
    problems = []
    for project, other in ((ALPHA, BETA), (BETA, ALPHA)):
        obj = h.shared[project]
        for name, found in h.dump(obj).items():
            if name in ("key", "pins"):
                continue
            status, text = found
            empty = name in ("items", "scenario runs") and '"items":[]' in text.replace(" ", "")
            if status != 200 or empty:
                problems.append(f"{project}'s {name} does not read back: {status} {text[:200]}")
        for name, found in h.dump(replace(obj, project=other)).items():
            if name not in ("key", "pins", "items", "scenario runs") and found[0] != 404:
                problems.append(f"{project}'s {name} reads back from {other}: {status}")
        pins = h.dump(obj)["pins"]
        if any(values != [True] for values in pins.values()):
            problems.append(f"{project}'s pins: {pins}")
    assert not problems, "\n".join(problems)


# -- every route has an entry ----------------------------------------------------------------


def _app_routes(tmp_path: Path) -> set[tuple[str, str]]:
    from fastapi.routing import iter_route_contexts
    from starlette.routing import Mount

    app = create_app(f"sqlite:///{tmp_path / 'routes.db'}")  # not started: nothing opened
    routes = set()
    for context in iter_route_contexts(app.routes):
        if isinstance(context.original_route, Mount):
            routes.add(("MOUNT", str(context.path)))
            continue
        for method in sorted(context.methods or ()):
            if method != "HEAD":
                routes.add((method, str(context.path)))
    return routes


def test_every_route_has_a_matrix_entry(tmp_path: Path) -> None:
    routes = _app_routes(tmp_path)
    covered = {entry.route for entry in ENTRIES} | set(PUBLIC)
    missing = [f"route {m} {p} has no tenant-matrix entry: add one to tests/server/"
               "tenant_routes.py (ENTRIES, or PUBLIC with the reason it holds no project data)"
               for m, p in sorted(routes - covered)]  # fmt: skip
    stale = [f"the tenant matrix has an entry for {m} {p}, which the app no longer has"
             for m, p in sorted(covered - routes)]  # fmt: skip
    assert not missing + stale, "\n".join(missing + stale)
    assert len(routes) >= 50  # the enumeration itself still finds the routes


@pytest.mark.parametrize(
    "route", sorted(r for r in PUBLIC if r[0] == "GET"), ids=lambda r: f"{r[0]} {r[1]}"
)
def test_public_routes_show_nothing_of_beta(matrix: Matrix, route: tuple[str, str]) -> None:
    call = Call("GET", route[1])
    for key in KEYS:
        for naming in (None, *NAMING[:3]):
            cell = Cell(ENTRIES[0], key, "public")
            reply = _send(matrix, cell, call, naming)
            assert reply.status < 500, reply.text[:300]
            assert not _shown(matrix, reply, call), (key, naming)


# -- the real clients ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def veval_python() -> Path:
    """The real veval-sdk 1.4.0 in its side venv (as in ``tests/compat/veval_sdk``)."""
    from tests.compat.veval_sdk.conftest import VEVAL_REQUIREMENT
    from tests.helpers.side_venv import side_venv_python

    return side_venv_python(VEVAL_REQUIREMENT)


def test_real_veval_sdk_with_alphas_key_sees_and_changes_only_alpha(
    matrix: Matrix, veval_python: Path
) -> None:
    h = matrix.harness
    beta = h.make(BETA, frozenset({"trace", "snapshot"}), "sdk")
    matrix.baseline = h.whole()
    before = h.dump(beta)
    env = {**os.environ, "VEVAL_INTERNAL_ENDPOINT": h.url, "PYTHONPATH": ""}
    args = [h.keys["sdk"], beta.trace_id, h.shared[BETA].otlp_trace_id, beta.snapshot]
    done = subprocess.run(
        [str(veval_python), str(HERE / "tenant_veval_sdk.py"), *args],
        capture_output=True, text=True, timeout=HANG_S, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    problems = []
    if SECRET in done.stdout:
        problems.append(f"the SDK was shown beta's data: {done.stdout[-2000:]}")
    for name in ("beta_trace", "beta_otlp_trace", "beta_snapshot"):
        if seen[name] is not None:
            problems.append(f"the SDK read {name}: {seen[name]}")
    if seen["common_snapshot_steps"] != ["classify"]:  # alpha's "baseline"
        problems.append(f"the SDK read the snapshot 'baseline' as {seen['common_snapshot_steps']}")
    if sorted(seen["scenario_items"]) != ["item alpha-content", "recorded alpha-content"]:
        problems.append(f"the SDK ran the items {seen['scenario_items']}")
    if seen["scenario_passed"] is not True:
        problems.append(f"the scenario failed: {seen['scenario_failures']}")
    # what it recorded is alpha's, and only alpha's
    problems += h.lands_in_alpha(f"/v1/traces/{seen['trace_id']}")
    if h.admin("GET", f"/v1/traces/{seen['trace_id']}", BETA).status != 404:
        problems.append("the SDK's trace is in beta")
    problems += h.lands_in_alpha(f"/v1/traces/{beta.trace_id}")  # its own, of that id
    problems += h.lands_in_alpha(f"/v1/snapshots/{beta.snapshot}")
    runs = h.admin("GET", f"/v1/scenarios/{COMMON.scenario}/runs", ALPHA).json()["items"]
    if len(runs) != 2 or SECRET in json.dumps(runs):  # the seeded one and the SDK's
        problems.append(f"alpha's runs of 'support' are {[r['run_id'] for r in runs]}")
    after = h.dump(beta)
    problems += [f"beta's {name} changed" for name in before if after.get(name) != before[name]]
    problems += matrix.unchanged()
    assert not problems, "\n".join(problems)


def _ids(trace_ids: list[int]) -> Any:
    """The OTel SDK's id generator, giving ``trace_ids`` first (beta's, then a new one)."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class Given(RandomIdGenerator):
        def generate_trace_id(self) -> int:
            return trace_ids.pop(0) if trace_ids else super().generate_trace_id()

    return Given()


@pytest.mark.parametrize("path", ["/v1/traces", "/otlp/v1/traces"])
def test_real_otel_exporter_with_alphas_key_lands_in_alpha_only(matrix: Matrix, path: str) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

    h = matrix.harness
    beta = h.make(BETA, frozenset({"otlp"}), f"otel{path.count('/')}")
    matrix.baseline = h.whole()
    before = h.dump(beta)
    new = uuid.uuid4().int
    exporter = OTLPSpanExporter(
        endpoint=f"{h.url}{path}",
        headers={"authorization": f"Bearer {h.keys['ingest']}"},
        timeout=60,
    )
    results: list[SpanExportResult] = []
    export = exporter.export

    def recording(spans: Any) -> SpanExportResult:
        results.append(export(spans))
        return results[-1]

    exporter.export = recording  # type: ignore[method-assign]
    provider = TracerProvider(
        resource=Resource.create({"service.name": "alpha-agent"}),
        id_generator=_ids([int(beta.otlp_hex, 16), new]),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("matrix")
    for _ in range(2):
        with tracer.start_as_current_span("agent") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("note", "alpha-content")
    provider.shutdown()
    assert results == [SpanExportResult.SUCCESS] * 2
    problems = []
    for trace_hex in (beta.otlp_hex, f"{new:032x}"):  # beta's id: alpha's own trace of it
        problems += h.lands_in_alpha(f"/v1/traces/tr_{trace_hex}")
    if h.admin("GET", f"/v1/traces/tr_{new:032x}", BETA).status != 404:
        problems.append("the exporter's new trace is in beta")
    after = h.dump(beta)
    problems += [f"beta's {name} changed" for name in before if after.get(name) != before[name]]
    problems += matrix.unchanged()  # beta's lists, default's, keys not alpha's
    assert not problems, "\n".join(problems)
