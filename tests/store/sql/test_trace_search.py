"""The trace browser's query, on SQLite and PostgreSQL: every filter, text found as the
user typed it (quotes, ``%``, ``_``, any case), previews, paging with filters; the same
through ``GET /api/traces`` and ``RemoteStore`` over real HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx2
import pytest
from tests.server.conftest import LiveServer

from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _spent(usd: float) -> dict[str, object]:
    return {"steps": [Span(name="chat", kind="llm", cost_usd=usd)]}


def _trace(n: int, **fields: object) -> TraceRecord:
    base: dict[str, object] = {
        "trace_id": f"tr_{n:02d}",
        "agent_name": "support" if n % 2 else "billing",
        "input": f"question {n}",
        "output": f"answer {n}",
        "status": "success",
        "started_at": T0 + timedelta(hours=n),
        "ended_at": T0 + timedelta(hours=n, seconds=1),
    }
    return TraceRecord(**{**base, **fields})


TRACES = [
    _trace(1, input='He said "refund me" — 50% off_now', **_spent(0.02)),
    _trace(2, status="error", **_spent(0.5)),
    _trace(3, output={"answer": "Café ouvert", "n": 3}),
    _trace(4, is_replay=True, metadata={"replay_of": "tr_01"}, **_spent(0.0)),
    _trace(5, input="x" * 1000),
]


@pytest.fixture
async def store(database_url: str) -> SqlStore:
    store = SqlStore(database_url)
    for record in TRACES:
        await store.save_trace(record)
    await store.scoped("other").save_trace(_trace(9, input="question 1 elsewhere"))
    return store


def _ids(page: object) -> list[str]:
    return [t.trace_id for t in page.items]  # type: ignore[attr-defined]


async def test_each_filter_narrows_the_list(store: SqlStore) -> None:
    search = store.search_traces
    assert _ids(await search()) == ["tr_05", "tr_04", "tr_03", "tr_02", "tr_01"]
    assert _ids(await search(agent_name="billing")) == ["tr_04", "tr_02"]
    assert _ids(await search(status="error")) == ["tr_02"]
    assert _ids(await search(since=T0 + timedelta(hours=2), until=T0 + timedelta(hours=4))) == [
        "tr_03",
        "tr_02",
    ]
    assert _ids(await search(min_cost=0.01)) == ["tr_02", "tr_01"]
    assert _ids(await search(max_cost=0.1)) == ["tr_04", "tr_01"]  # unknown costs left out
    assert _ids(await search(replay=True)) == ["tr_04"]
    assert _ids(await search(replay=False)) == ["tr_05", "tr_03", "tr_02", "tr_01"]
    assert _ids(await search(agent_name="support", status="error")) == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('said "refund', ["tr_01"]),  # quotes as typed, not as JSON escapes them
        ("50%", ["tr_01"]),  # % and _ are text, not wildcards
        ("off_now", ["tr_01"]),
        ("5_%", []),
        ("REFUND ME", ["tr_01"]),  # any case
        ("café", ["tr_03"]),
        ("question 2", ["tr_02"]),
        ("elsewhere", []),  # another project's trace is not found
    ],
)
async def test_text_is_found_as_typed(store: SqlStore, text: str, found: list[str]) -> None:
    assert _ids(await store.search_traces(text=text)) == found


async def test_previews_and_replays_in_the_summary(store: SqlStore) -> None:
    page = await store.search_traces(previews=True)
    by_id = {t.trace_id: t for t in page.items}
    assert by_id["tr_01"].input_preview == 'He said "refund me" — 50% off_now'
    assert by_id["tr_03"].output_preview == '{"answer": "Café ouvert", "n": 3}'
    preview = by_id["tr_05"].input_preview
    assert preview is not None and len(preview) == 200 and preview.endswith("…")
    assert (by_id["tr_04"].is_replay, by_id["tr_04"].replay_of) == (True, "tr_01")
    plain = await store.search_traces()
    assert all(t.input_preview is None for t in plain.items)  # no documents read


async def test_paging_keeps_the_filters(store: SqlStore) -> None:
    first = await store.search_traces(replay=False, limit=3)
    assert _ids(first) == ["tr_05", "tr_03", "tr_02"]
    second = await store.search_traces(replay=False, limit=3, cursor=first.next_cursor)
    assert _ids(second) == ["tr_01"] and second.next_cursor is None


async def test_the_api_and_the_remote_store_filter_the_same(
    store: SqlStore, database_url: str
) -> None:
    from scenarist.server.app import create_app

    with LiveServer(create_app(database_url)) as server:
        remote = RemoteStore(server.url)
        page = await remote.search_traces(text="refund", previews=True)
        assert _ids(page) == ["tr_01"]
        assert page.items[0].input_preview == 'He said "refund me" — 50% off_now'
        assert _ids(await remote.search_traces(replay=True)) == ["tr_04"]
        assert _ids(await remote.search_traces(min_cost=0.01, limit=1)) == ["tr_02"]
        since = await remote.search_traces(since=T0 + timedelta(hours=4))
        assert _ids(since) == ["tr_05", "tr_04"]
        other = RemoteStore(server.url, project="other")
        assert _ids(await other.search_traces(text="question 1")) == ["tr_09"]
        bad = httpx2.get(f"{server.url}/api/traces", params={"min_cost": "-1"})
        assert bad.status_code == 422 and "min_cost" in bad.text


async def test_a_bounded_text_search_reads_a_window_and_resumes_after_it(
    store: SqlStore,
) -> None:
    """``scan_limit``: the text is looked for in at most that many traces (the newest
    after the cursor, other filters applied); when the window ends first the page says
    where it stopped and its cursor searches on (issue 31's 1M benchmark)."""
    first = await store.search_traces(text="refund", scan_limit=2)
    assert _ids(first) == [] and first.search_window == 2
    assert first.searched_to == T0 + timedelta(hours=4) and first.next_cursor is not None
    second = await store.search_traces(text="refund", scan_limit=2, cursor=first.next_cursor)
    assert _ids(second) == [] and second.searched_to == T0 + timedelta(hours=2)
    third = await store.search_traces(text="refund", scan_limit=2, cursor=second.next_cursor)
    assert _ids(third) == ["tr_01"]
    assert third.next_cursor is None and third.searched_to is None  # nothing older left
    # the limit reached inside the window: an ordinary page, no stop to report
    full = await store.search_traces(text="answer", scan_limit=4, limit=2)
    assert _ids(full) == ["tr_05", "tr_04"] and full.searched_to is None
    rest = await store.search_traces(text="answer", scan_limit=4, limit=2, cursor=full.next_cursor)
    assert _ids(rest) == ["tr_03", "tr_02"]
    # the other filters choose the window: replays left out, the window is 05, 03
    narrowed = await store.search_traces(text="question", replay=False, scan_limit=2)
    assert _ids(narrowed) == ["tr_03"] and narrowed.searched_to == T0 + timedelta(hours=3)
    # a window larger than the store searches it all; no bound without text
    assert _ids(await store.search_traces(text="refund", scan_limit=10)) == ["tr_01"]
    plain = await store.search_traces(scan_limit=1, limit=3)
    assert _ids(plain) == ["tr_05", "tr_04", "tr_03"] and plain.search_window is None


async def test_the_trace_page_searches_a_window_and_says_where_it_stopped(
    store: SqlStore, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/traces?q=`` looks in at most ``TEXT_SEARCH_WINDOW`` traces a page (10,000; 2
    here), says so, and links the search on; the JSON twin carries the same."""
    from scenarist.server.app import create_app
    from scenarist.server.dashboard import trace_list

    monkeypatch.setattr(trace_list, "TEXT_SEARCH_WINDOW", 2)
    with LiveServer(create_app(database_url)) as server:
        first = httpx2.get(f"{server.url}/traces.json", params={"q": "refund"}).json()
        assert first["traces"] == [] and first["search_window"] == 2
        assert first["searched_to"].startswith("2026-11-01T16:00:00")
        assert first["next_href"].startswith("/traces?q=refund&cursor=")
        html = httpx2.get(
            f"{server.url}/traces", params={"q": "refund"}, headers={"accept": "text/html"}
        ).text
        assert 'id="search-window"' in html and "2 newest traces" in html
        assert 'id="search-older"' in html and "Search older traces" in html
        second = httpx2.get(server.url + first["next_href"], headers={"accept": "application/json"})
        third = httpx2.get(
            server.url + second.json()["next_href"], headers={"accept": "application/json"}
        ).json()
        assert [t["trace_id"] for t in third["traces"]] == ["tr_01"]
        assert third["next_href"] is None and third["searched_to"] is None
        plain = httpx2.get(f"{server.url}/traces.json").json()  # no text: no window
        assert len(plain["traces"]) == 5 and plain["search_window"] is None
