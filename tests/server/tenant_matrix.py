"""The tenant matrix's harness: the seeded server, the objects of each project, and how to
read them back. The route table is in :mod:`tests.server.tenant_routes`; the cells in
``test_tenant_matrix.py``.

Two projects, ``alpha`` and ``beta``, each hold one of everything (:class:`Obj`): a
complete run log, an incomplete one, a Veval trace, an OTLP trace, scenario items, a
Veval scenario run, a snapshot, pins, a key. Everything of beta's carries :data:`SECRET`
in its content, so a response that shows beta's data to alpha is caught by a substring.
Everything is written through the HTTP API with a global admin key (``?project=``).
"""

from __future__ import annotations

import json
import re
import secrets
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

import httpx2
from anyio.from_thread import start_blocking_portal

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import RunLog, run_log_from_suite_result
from scenarist.store.sql.store import SqlStore

__all__ = [
    "ALPHA",
    "ALPHA_TEXT",
    "BETA",
    "COMMON",
    "DEFAULT",
    "KINDS",
    "SECRET",
    "Call",
    "Harness",
    "Obj",
    "Reply",
    "forbidden",
    "free_obj",
    "otlp_document",
    "placeholders",
    "scenario_run",
    "shape",
    "veval_trace",
]

ALPHA, BETA, DEFAULT = "alpha", "beta", "default"
SECRET = "beta-secret-0f5c91"
"""In every beta object's content and in the name of every key alpha must not see."""
ALPHA_TEXT = "alpha-content"
KINDS = frozenset(
    {"run", "runs", "old", "trace", "otlp", "items", "scenario_run", "snapshot", "key",
     "pinned", "unpinned"}
)  # fmt: skip
OLD = timedelta(days=30)  # "old" objects: older than the prune cells' retention (7 days)


def _hex() -> str:
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Obj:
    """One project's objects, by id and name (``""``: not made). ``project`` ``"*"``: a
    global key (``key_id`` only)."""

    project: str
    tag: str = ""
    run_id: str = ""  # a run log (incomplete when made alone, complete in "runs")
    base_run_id: str = ""  # another run of the project (a compare baseline)
    suite: str = ""
    scenario: str = ""  # a scenario of the run logs, and of the items and scenario runs
    trace_id: str = ""  # a Veval trace
    otlp_hex: str = ""  # an OTLP trace (stored as ``tr_<hex>``)
    item_id: str = ""
    scenario_run_id: str = ""
    snapshot: str = ""
    key_id: str = ""
    kinds: frozenset[str] = frozenset()

    @property
    def otlp_trace_id(self) -> str:
        return f"tr_{self.otlp_hex}" if self.otlp_hex else ""

    def ids(self) -> set[str]:
        """Every id and name it holds that another project could not guess."""
        values = {
            self.run_id, self.base_run_id, self.trace_id, self.otlp_hex, self.item_id,
            self.scenario_run_id, self.key_id,
        }  # fmt: skip
        return {v for v in values if v}


COMMON = Obj(project=ALPHA, tag="common", suite="support", scenario="support", snapshot="baseline")
"""The names both projects hold (alpha's reads of them must show alpha's objects only)."""


def free_obj(tag: str) -> Obj:
    """Ids and names nobody holds (the answer a forged id must look like)."""
    stem = f"free-{tag}-{uuid.uuid4().hex[:6]}"
    return Obj(
        project=ALPHA,
        tag=tag,
        run_id=f"{stem}-run",
        base_run_id=f"{stem}-base",
        suite=f"{stem}-suite",
        scenario=f"{stem}-scn",
        trace_id=f"{stem}-trace",
        otlp_hex=_hex(),
        item_id="item_" + secrets.token_hex(10),
        scenario_run_id=f"{stem}-srun",
        snapshot=f"{stem}-snap",
        key_id=secrets.token_hex(6),
    )


@dataclass(frozen=True)
class Call:
    """One request: ``form`` is a dashboard form (its CSRF token is added)."""

    method: str
    url: str
    json: Any = None
    content: bytes | None = None
    form: dict[str, str] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def sent(self) -> str:
        """What the caller itself sent (ids in it are not revealed by an echo)."""
        body = self.content.decode("latin-1") if self.content else ""
        return " ".join(
            [self.url, json.dumps(self.json) if self.json is not None else "", body,
             json.dumps(self.form) if self.form else ""]
        )  # fmt: skip


@dataclass(frozen=True)
class Reply:
    status: int
    text: str
    content_type: str
    location: str
    headers: str

    def json(self) -> Any:
        return json.loads(self.text)


# -- content ---------------------------------------------------------------------------


def _suite_result(text: str, scenarios: tuple[str, ...]) -> Any:
    built = [
        Scenario(name)
        .interact(text, lambda x: x)
        .check(Equals(expected_value=text, target_key="trace.last.outputs"))
        for name in scenarios
    ]
    return Suite(name="suite", scenarios=built).run_sync()


class Content:
    """Suite results run once and turned into run logs of any id, suite and scenario."""

    def __init__(self) -> None:
        self._results: dict[tuple[str, str], Any] = {}

    def run_log(
        self, run_id: str, *, text: str, suite: str, scenario: str, complete: bool, old: bool
    ) -> dict[str, Any]:
        key = (text, scenario)
        if key not in self._results:
            self._results[key] = _suite_result(text, (scenario, "refund"))
        result = self._results[key].model_copy(deep=True)
        result.suite_name = suite
        result.started_at = datetime.now(UTC) - (OLD if old else timedelta(0))
        log: RunLog = run_log_from_suite_result(result, run_id=run_id)
        if not complete:
            log.footer = None
        return log.model_dump(mode="json", fallback=str)


def veval_trace(trace_id: str, text: str, *, old: bool = False) -> dict[str, Any]:
    started = datetime.now(UTC) - (OLD if old else timedelta(0))
    return {
        "trace_id": trace_id,
        "agent_name": "support",
        "input": f"where is my refund? {text}",
        "output": f"answer {text}",
        "status": "success",
        "started_at": started.isoformat(),
        "completed_at": (started + timedelta(milliseconds=5)).isoformat(),
        "metadata": {"note": text},
        "steps": [
            {
                "step_id": "s1",
                "name": "classify",
                "type": "tool",
                "input": text,
                "output": {"label": text},
            }
        ],
    }


def otlp_document(
    trace_hex: str, text: str, *, record: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An OTLP/JSON export of one trace (two spans); ``record``: the ``scenarist.record``
    resource attribute (a trace record scenarist exported, with its own trace id)."""
    start = int((datetime.now(UTC) - timedelta(minutes=1)).timestamp() * 1e9)

    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    def span(number: int, name: str, parent: int | None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "traceId": trace_hex,
            "spanId": f"{number:016x}",
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start + number * 1_000_000),
            "endTimeUnixNano": str(start + number * 1_000_000 + 500_000),
            "attributes": [
                attr("gen_ai.operation.name", "invoke_agent" if parent is None else "chat"),
                attr("gen_ai.agent.name", "support"),
                attr("note", text),
            ],
        }
        if parent is not None:
            data["parentSpanId"] = f"{parent:016x}"
        return data

    resource = [attr("service.name", f"svc {text}")]
    if record is not None:
        resource.append(attr("scenarist.record", json.dumps(record)))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource},
                "scopeSpans": [{"scope": {"name": "matrix"}, "spans": [span(1, "agent", None),
                                                                       span(2, "chat", 1)]}],
            }
        ]
    }  # fmt: skip


def scenario_run(run_id: str, text: str, trace_id: str = "") -> dict[str, Any]:
    return {
        "run_id": run_id,
        "passed": False,
        "pass_count": 0,
        "fail_count": 1,
        "results": [
            {"name": f"item {text}", "passed": False, "failures": [f"failed: {text}"],
             "trace_id": trace_id or None}
        ],
    }  # fmt: skip


def text_of(project: str) -> str:
    return SECRET if project != ALPHA else ALPHA_TEXT


# -- the harness -----------------------------------------------------------------------


class Harness:
    """The seeded server: keys, each project's objects, requests and read-backs."""

    def __init__(self, url: str, database_url: str) -> None:
        self.url = url
        self.database_url = database_url
        self.http = httpx2.Client(base_url=url, timeout=600)
        self.content = Content()
        self.global_key = ""
        self.keys: dict[str, str] = {}  # alpha's keys by scope: ingest, read, admin
        self.key_ids: dict[str, str] = {}
        self.sessions: dict[str, str] = {}  # alpha's session cookies (read, admin)
        self.csrf_cookie = ""
        self.csrf_token = ""
        self.shared: dict[str, Obj] = {}
        self.fingerprint: dict[str, Any] | None = None
        # the database reads (pins) run on one event loop of their own, so one pooled
        # connection serves them all
        self._portal_context = start_blocking_portal()
        self._portal = self._portal_context.__enter__()
        self._store = SqlStore(database_url)
        self.foreign_key_ids: set[str] = set()
        self.beta_ids: set[str] = set()  # every id of beta's: alpha must never be shown one
        self.claimed: set[str] = set()  # ids of beta's that alpha may use for its own objects

    def close(self) -> None:
        self.http.close()
        try:
            self._portal.call(self._store.close)
        finally:
            self._portal_context.__exit__(None, None, None)

    # -- requests ------------------------------------------------------------------------

    def send(
        self,
        call: Call,
        *,
        key: str | None = None,
        cookies: dict[str, str] | None = None,
        project_query: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        url = call.url
        if project_query is not None:
            url += ("&" if "?" in url else "?") + f"project={project_query}"
        sent_headers = {**call.headers, **(headers or {})}
        jar = dict(cookies or {})
        content = call.content
        if call.form is not None:
            jar["scenarist_csrf"] = self.csrf_cookie
            content = urlencode({**call.form, "csrf_token": self.csrf_token}).encode()
            sent_headers["content-type"] = "application/x-www-form-urlencoded"
        if key is not None:
            sent_headers["authorization"] = f"Bearer {key}"
        if jar:
            sent_headers["cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
        self.http.cookies.clear()
        response = self.http.request(
            call.method, url, json=call.json, content=content, headers=sent_headers
        )
        self.http.cookies.clear()
        return Reply(
            status=response.status_code,
            text=response.text,
            content_type=response.headers.get("content-type", ""),
            location=response.headers.get("location", ""),
            headers=" ".join(f"{k}: {v}" for k, v in response.headers.items()),
        )

    def admin(self, method: str, url: str, project: str | None, **kwargs: Any) -> Reply:
        """A request with the global admin key, in ``project``."""
        call = Call(method, url, json=kwargs.get("json"), content=kwargs.get("content"),
                    headers=kwargs.get("headers", {}))  # fmt: skip
        return self.send(call, key=self.global_key, project_query=project)

    def _ok(self, reply: Reply, what: str) -> Reply:
        assert 200 <= reply.status < 300, f"seeding {what}: {reply.status} {reply.text[:500]}"
        return reply

    # -- seeding -------------------------------------------------------------------------

    def start(self) -> None:
        """The global admin key (open mode: the first key closes the door), alpha's
        keys, beta's keys, alpha's sessions, a CSRF token, and each project's objects."""
        created = self.send(
            Call("POST", "/api/keys", json={"scopes": ["admin"], "name": f"owner {SECRET}"})
        )
        self._ok(created, "the global admin key")
        self.global_key = created.json()["key"]
        self.foreign_key_ids.add(created.json()["key_id"])
        for scope in ("ingest", "read", "admin"):
            self.keys[scope], self.key_ids[scope] = self.make_key([scope], [ALPHA], scope)
        self.keys["sdk"], self.key_ids["sdk"] = self.make_key(["ingest", "read"], [ALPHA], "sdk")
        for scope in ("read", "admin"):
            _, key_id = self.make_key([scope], [BETA], f"beta {scope} {SECRET}")
            self.foreign_key_ids.add(key_id)
        login_page = self.send(Call("GET", "/login", headers={"accept": "text/html"}))
        token = re.search(r'name="csrf_token" value="([^"]+)"', login_page.text)
        cookie = re.search(r"scenarist_csrf=([^;]+)", login_page.headers)
        assert token and cookie, login_page.text[:500]
        self.csrf_token, self.csrf_cookie = token.group(1), cookie.group(1)
        for scope in ("read", "admin"):
            reply = self.send(
                Call("POST", "/login", form={"api_key": self.keys[scope], "next": "/"})
            )
            session = re.search(r"scenarist_session=([^;]+)", reply.headers)
            assert reply.status == 303 and session, (reply.status, reply.text[:300])
            self.sessions[scope] = session.group(1)
        every = frozenset({"runs", "trace", "otlp", "items", "scenario_run", "snapshot",
                           "pinned", "key"})  # fmt: skip
        for project in (ALPHA, BETA):
            self.shared[project] = self.make(project, every, "shared")
            self._seed_common(project)
        self.shared["*"] = self.make("*", frozenset({"key"}), "shared")

    def _seed_common(self, project: str) -> None:
        """Objects under the same names in both projects: the suite and scenario
        ``support`` (a run log, items, a scenario run) and the snapshot ``baseline``."""
        text, shared = text_of(project), self.shared[project]
        log = self.content.run_log(
            f"{project}-common-run", text=text, suite=COMMON.suite, scenario=COMMON.scenario,
            complete=True, old=False,
        )  # fmt: skip
        self._ok(self.admin("POST", "/api/runs", project, json=log), "common run")
        if project == BETA:
            self.beta_ids |= {f"{project}-common-run", f"{project}-common-srun"}
        items = {"items": [{"name": f"item {text}", "input": f"hello {text}"},
                           {"name": f"recorded {text}", "trace_id": shared.trace_id}]}  # fmt: skip
        url = f"/v1/scenarios/{COMMON.scenario}"
        self._ok(self.admin("PUT", f"{url}/items", project, json=items), "common items")
        body = scenario_run(f"{project}-common-srun", text, shared.trace_id)
        self._ok(self.admin("POST", f"{url}/runs", project, json=body), "common scenario run")
        body = {"name": COMMON.snapshot, "trace_id": shared.trace_id}
        self._ok(self.admin("POST", "/v1/snapshots", project, json=body), "common snapshot")

    def make_key(self, scopes: list[str], projects: list[str] | None, name: str) -> tuple[str, str]:
        body: dict[str, Any] = {"scopes": scopes, "name": name}
        if projects is not None:
            body["projects"] = projects
        reply = self._ok(self.admin("POST", "/api/keys", None, json=body), f"key {name}")
        return reply.json()["key"], reply.json()["key_id"]

    def make(self, project: str, kinds: frozenset[str], tag: str) -> Obj:
        """``project``'s objects of ``kinds``, with ids unique to ``tag``."""
        assert kinds <= KINDS, kinds - KINDS
        text = text_of(project)
        stem = f"{project}-{tag}"
        obj = Obj(project=project, tag=tag, kinds=kinds)
        if project == "*":  # a key that opens every project
            _, key_id = self.make_key(["read"], None, f"global {tag} {SECRET}")
            self.foreign_key_ids.add(key_id)
            return replace(obj, key_id=key_id)
        old = "old" in kinds
        if kinds & {"run", "runs", "old", "items", "scenario_run"}:
            obj = replace(obj, suite=f"{stem}-suite", scenario=f"{stem}-scn")
        if kinds & {"run", "runs", "old"}:
            obj = replace(obj, run_id=f"{stem}-run")
            self._ok(
                self.admin(
                    "POST", "/api/runs", project,
                    json=self.content.run_log(
                        obj.run_id, text=text, suite=obj.suite, scenario=obj.scenario,
                        complete="runs" in kinds or old, old=old,
                    ),
                ),
                f"run {obj.run_id}",
            )  # fmt: skip
        if "runs" in kinds:  # a second run: the compare baseline (complete, older)
            obj = replace(obj, base_run_id=f"{stem}-base")
            log = self.content.run_log(
                obj.base_run_id, text=text, suite=obj.suite, scenario=obj.scenario,
                complete=True, old=False,
            )  # fmt: skip
            self._ok(self.admin("POST", "/api/runs", project, json=log), "baseline run")
        if kinds & {"trace", "old", "items", "snapshot"}:
            obj = replace(obj, trace_id=f"{stem}-trace")
            body = veval_trace(obj.trace_id, text, old=old)
            self._ok(self.admin("POST", "/v1/traces", project, json=body), "trace")
        if "otlp" in kinds:
            obj = replace(obj, otlp_hex=_hex())
            body = otlp_document(obj.otlp_hex, text)
            self._ok(self.admin("POST", "/otlp/v1/traces", project, json=body), "otlp trace")
        if "items" in kinds:
            items = [
                {"name": f"item {text}", "input": f"hello {text}"},
                {"name": f"recorded {text}", "trace_id": obj.trace_id},
            ]
            url = f"/v1/scenarios/{quote(obj.scenario, safe='')}/items"
            reply = self._ok(self.admin("PUT", url, project, json={"items": items}), "items")
            obj = replace(obj, item_id=reply.json()["items"][0]["id"])
        if "scenario_run" in kinds:
            obj = replace(obj, scenario_run_id=f"{stem}-srun")
            url = f"/v1/scenarios/{quote(obj.scenario, safe='')}/runs"
            body = scenario_run(obj.scenario_run_id, text, obj.trace_id)
            self._ok(self.admin("POST", url, project, json=body), "scenario run")
        if "snapshot" in kinds:
            obj = replace(obj, snapshot=f"{stem}-snap")
            body = {"name": obj.snapshot, "trace_id": obj.trace_id}
            self._ok(self.admin("POST", "/v1/snapshots", project, json=body), "snapshot")
        if "pinned" in kinds:
            for what, object_id in (("runs", obj.run_id), ("traces", obj.trace_id)):
                if object_id:
                    url = f"/api/{what}/{quote(object_id, safe='')}/pin"
                    self._ok(self.admin("POST", url, project), f"pin {object_id}")
        if "key" in kinds:
            name = f"{project} {tag}" + (f" {SECRET}" if project != ALPHA else "")
            _, key_id = self.make_key(["read"], [project], name)
            obj = replace(obj, key_id=key_id)
            if project != ALPHA:
                self.foreign_key_ids.add(key_id)
        if project == BETA:
            self.beta_ids |= obj.ids()
        return obj

    # -- reading back --------------------------------------------------------------------

    def _pins(self, obj: Obj) -> dict[str, Any]:
        """Pins are not shown by any route: read from the database."""
        from sqlalchemy import text

        async def read() -> dict[str, Any]:
            engine = await self._store.engine()
            found: dict[str, Any] = {}
            async with engine.connect() as connection:
                for table, column, object_id in (
                    ("runs", "run_id", obj.run_id),
                    ("traces", "trace_id", obj.trace_id),
                ):
                    if object_id:
                        rows = await connection.execute(
                            text(
                                f"SELECT pinned FROM {table} WHERE {column} = :i AND project = :p"
                            ),
                            {"i": object_id, "p": obj.project},
                        )
                        found[f"{table} {object_id}"] = [bool(r[0]) for r in rows]
            return found

        return self._portal.call(read)

    def dump(self, obj: Obj, kinds: frozenset[str] | None = None) -> dict[str, Any]:
        """``obj``'s objects of ``kinds`` (default: all it was made with) as the global
        admin key reads them: status and bytes."""
        kinds = obj.kinds if kinds is None else kinds
        project = obj.project
        reads: dict[str, str] = {}
        if obj.run_id and kinds & {"run", "runs", "old"}:
            reads["run"] = f"/api/runs/{quote(obj.run_id, safe='')}"
            reads["run page"] = f"/runs/{quote(obj.run_id, safe='')}.json"
        if obj.base_run_id and "runs" in kinds:
            reads["base run"] = f"/api/runs/{quote(obj.base_run_id, safe='')}"
        if obj.trace_id and kinds & {"trace", "old", "items", "snapshot"}:
            reads["trace"] = f"/v1/traces/{quote(obj.trace_id, safe='')}"
        if obj.otlp_hex and "otlp" in kinds:
            reads["otlp trace"] = f"/v1/traces/{obj.otlp_trace_id}"
        scenario = quote(obj.scenario, safe="")
        if obj.scenario and "items" in kinds:
            reads["items"] = f"/v1/scenarios/{scenario}/items"
        if obj.scenario and kinds & {"scenario_run", "run"}:
            reads["scenario runs"] = f"/v1/scenarios/{scenario}/runs"
        if obj.snapshot and "snapshot" in kinds:
            reads["snapshot"] = f"/v1/snapshots/{quote(obj.snapshot, safe='')}"
        found: dict[str, Any] = {}
        for name, url in reads.items():
            reply = self.admin("GET", url, project)
            found[name] = (reply.status, reply.text)
        if obj.key_id and "key" in kinds:
            found["key"] = self._key_row(obj.key_id)
        if kinds & {"pinned", "unpinned"}:
            found["pins"] = self._pins(obj)
        return found

    def _key_row(self, key_id: str) -> Any:
        reply = self.admin("GET", "/api/keys", None)
        return [k for k in reply.json() if k["key_id"] == key_id]

    def _pages(self, url: str, project: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        while True:
            page_url = url + (f"&cursor={quote(cursor, safe='')}" if cursor else "")
            reply = self.admin("GET", page_url, project)
            assert reply.status == 200, (page_url, reply.status, reply.text[:300])
            data = reply.json()
            items.extend(data["items"])
            cursor = data.get("next_cursor")
            if not cursor:
                return items

    def whole(self) -> dict[str, Any]:
        """What alpha must never change: every list of beta's and of ``default``, and
        every key that is not alpha's own."""
        found: dict[str, Any] = {}
        for project in (BETA, DEFAULT):
            for url in ("/api/runs?limit=500", "/api/traces?limit=500", "/v1/snapshots?limit=500"):
                found[f"{project} {url}"] = self._pages(url, project)
        keys = self.admin("GET", "/api/keys", None).json()
        found["keys"] = [k for k in keys if k["projects"] != [ALPHA]]
        found["pins"] = self._pins(self.shared[BETA])
        return found

    def lands_in_alpha(self, url: str) -> list[str]:
        """Problems with an object a call of alpha's stored: it must be alpha's and
        nowhere else (``default`` included)."""
        problems = []
        mine = self.admin("GET", url, ALPHA)
        if mine.status != 200:
            problems.append(f"{url} is not in alpha ({mine.status})")
        elif SECRET in mine.text:
            problems.append(f"{url} in alpha holds beta's data")
        default = self.admin("GET", url, DEFAULT)
        if default.status != 404:
            problems.append(f"{url} landed in default ({default.status})")
        return problems


def forbidden(reply: Reply, call: Call, beta_ids: set[str]) -> list[str]:
    """What of beta's a reply shows that its request did not itself send."""
    sent = call.sent()
    shown = reply.text + " " + reply.headers
    found = [SECRET] if SECRET in shown else []
    found += sorted(i for i in beta_ids if i in shown and i not in sent)
    return found


def shape(reply: Reply, replaced: dict[str, str]) -> Any:
    """The answer with what depends on the id left out: status, content type, redirect
    (ids replaced), and for JSON the structure (keys, types, booleans, error codes)."""

    def of(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: of(v, k) for k, v in sorted(value.items())}
        if isinstance(value, list):
            return [of(v) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, str):
            return value if key in ("code", "type", "field") else "str"
        return type(value).__name__

    location = reply.location
    for old, new in replaced.items():
        location = location.replace(old, new).replace(quote(old, safe=""), new)
    body: Any = None
    if reply.content_type.startswith("application/json"):
        body = of(json.loads(reply.text))
    return (reply.status, reply.content_type.split(";")[0], location, body)


def placeholders(obj: Obj) -> dict[str, str]:
    names = ("run_id", "base_run_id", "suite", "scenario", "trace_id", "otlp_hex",
             "item_id", "scenario_run_id", "snapshot", "key_id")  # fmt: skip
    pairs = {getattr(obj, n): f"<{n}>" for n in names if getattr(obj, n)}
    return dict(sorted(pairs.items(), key=lambda kv: -len(kv[0])))
