"""People's review of a scenario result (issue 31, item 8): an expected failure with its
expiry, comments, a verdict override; through the API and the scenario page's
CSRF-protected form, with every change kept (who, when), shown on the run and scenario
pages, left out of "Broke recently", on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx2
import pytest
from markupsafe import escape
from tests.server.dashboard_data import seed

from scenarist.store.sql.reviews import ReviewEntry, fold_reviews

pytestmark = pytest.mark.anyio

HTML = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
BILLING = "/runs/run-2/scenarios/2"  # billing broke in run-2 (dashboard_data.OUTCOMES)
API = "/api/runs/run-2/scenarios/2/reviews"
HOSTILE = '<script>window.__xss=3</script> & "quotes"'


@pytest.fixture
async def client(app_client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    await seed(app_client.app.state.store)  # type: ignore[attr-defined]
    return app_client


def _tomorrow() -> str:
    return (datetime.now(UTC) + timedelta(days=2)).date().isoformat()


async def _broken(client: httpx2.AsyncClient) -> list[tuple[str, int]]:
    page = (await client.get("/index.json")).json()
    return [(b["run_id"], b["position"]) for b in page["broken"]]


async def test_expected_failure_leaves_broke_recently_and_counts_apart(
    client: httpx2.AsyncClient,
) -> None:
    assert ("run-2", 2) in await _broken(client)
    marked = await client.post(
        API, json={"action": "expect", "expires_at": _tomorrow(), "reason": "known CRM outage"}
    )
    assert marked.status_code == 201, marked.text
    state = marked.json()
    assert state["original_status"] == "fail" and state["status"] == "fail"
    assert state["expected"]["reason"] == "known CRM outage"
    assert state["expected"]["reviewer"] == "local"  # open mode: no key exists
    assert state["badge"].startswith(f"expected failure until {_tomorrow()}, marked by local")
    assert ("run-2", 2) not in await _broken(client)

    run = (await client.get("/runs/run-2.json")).json()
    assert run["status_counts"]["fail"] == 2  # raw counts unchanged
    assert run["reviewed_counts"]["expected"] == 1
    assert run["reviewed_counts"]["fail"] == 1
    html = (await client.get("/runs/run-2", headers=HTML)).text
    assert 'id="reviewed-summary"' in html and "1 expected failure" in html
    assert "expected fail" in html

    # counted again: the mark undone (kept in the history)
    undone = await client.post(API, json={"action": "unexpect"})
    assert undone.status_code == 201
    assert undone.json()["expected"] is None
    assert [h["action"] for h in undone.json()["history"]] == ["expect", "unexpect"]
    assert ("run-2", 2) in await _broken(client)


def test_an_expected_mark_runs_out_at_its_expiry() -> None:
    now = datetime(2026, 12, 5, 12, tzinfo=UTC)
    mark = ReviewEntry(
        review_id="a",
        action="expect",
        expires_at=now + timedelta(hours=1),
        reviewer="k1",
        created_at=now - timedelta(days=1),
    )
    before = fold_reviews("r", 0, "s", "fail", [mark], now=now)
    after = fold_reviews("r", 0, "s", "fail", [mark], now=now + timedelta(hours=2))
    assert before.expected == mark and not before.counts_as_failing
    assert after.expected is None and after.expired == mark and after.counts_as_failing


async def test_an_expired_mark_counts_again_in_the_store(client: httpx2.AsyncClient) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    await store.add_review(
        "run-2",
        2,
        scenario_name="billing",
        action="expect",
        reviewer="k1",
        expires_at=datetime.now(UTC) - timedelta(minutes=1),
    )
    assert ("run-2", 2) in await _broken(client)
    page = (await client.get(f"{BILLING}.json")).json()
    assert page["review"]["expected"] is None and page["review"]["expired"]["reviewer"] == "k1"
    html = (await client.get(BILLING, headers=HTML)).text
    assert 'id="review-expired"' in html


async def test_bad_reviews_are_422_naming_the_field(client: httpx2.AsyncClient) -> None:
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    cases = [
        ({"action": "expect"}, "expires_at is required"),
        ({"action": "expect", "expires_at": yesterday}, "is not in the future"),
        ({"action": "override", "verdict": "pass"}, "reason is required"),
        ({"action": "override", "verdict": "maybe", "reason": "x"}, "verdict='maybe'"),
        ({"action": "comment"}, "reason is required for a comment"),
        ({"action": "clear_override"}, "not overridden"),
    ]
    for body, message in cases:
        answer = await client.post(API, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert message in answer.json()["error"]["message"]
    assert (await client.post(API, json={"action": "delete"})).status_code == 422
    passing = "/api/runs/run-2/scenarios/0/reviews"  # refund passed
    answer = await client.post(passing, json={"action": "expect", "expires_at": _tomorrow()})
    assert answer.status_code == 422 and "only a fail or an error" in answer.text
    missing = await client.post("/api/runs/run-2/scenarios/99/reviews", json={"action": "unexpect"})
    assert missing.status_code == 404
    assert (await client.get("/api/runs/nope/scenarios/0/reviews")).status_code == 404
    assert (await client.get(API)).json()["history"] == []  # nothing was stored


async def _form_token(client: httpx2.AsyncClient) -> str:
    page = await client.get(BILLING, headers=HTML)
    assert page.status_code == 200
    match = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
    assert match and "scenarist_csrf" in client.cookies
    return match.group(1)


async def test_the_form_overrides_and_comments_with_hostile_text_shown_as_text(
    client: httpx2.AsyncClient,
) -> None:
    token = await _form_token(client)
    override = await client.post(
        f"{BILLING}/review",
        data={"csrf_token": token, "action": "override", "verdict": "pass", "reason": HOSTILE},
    )
    assert override.status_code == 303
    assert override.headers["location"] == f"{BILLING}#review"
    comment = await client.post(
        f"{BILLING}/review.json", data={"csrf_token": token, "action": "comment", "reason": HOSTILE}
    )
    assert comment.status_code == 201
    state = comment.json()
    assert state["status"] == "pass" and state["original_status"] == "fail"
    assert state["override"]["reason"] == HOSTILE
    assert [c["reason"] for c in state["comments"]] == [HOSTILE]
    today = datetime.now(UTC).date().isoformat()
    assert state["badge"] == f"overridden by local on {today}: {HOSTILE}"

    page = (await client.get(BILLING, headers=HTML)).text
    assert HOSTILE not in page  # escaped, never markup
    assert str(escape(f"overridden by local on {today}: {HOSTILE}")) in page
    assert 'class="muted original-status">was <span class="status status-fail"' in page
    run = (await client.get("/runs/run-2", headers=HTML)).text
    assert HOSTILE not in run and "overridden by local" in run
    assert ("run-2", 2) not in await _broken(client)  # a pass override is not broken
    counts = (await client.get("/runs/run-2.json")).json()["reviewed_counts"]
    assert counts["pass"] == 3 and counts["fail"] == 1  # billing now passes, XSS still fails

    cleared = await client.post(
        f"{BILLING}/review.json", data={"csrf_token": token, "action": "clear_override"}
    )
    assert cleared.json()["status"] == "fail" and cleared.json()["override"] is None
    history = (await client.get(API)).json()["history"]
    assert [h["action"] for h in history] == ["override", "comment", "clear_override"]

    bad = await client.post(
        f"{BILLING}/review", data={"csrf_token": token, "action": "override", "verdict": "pass"}
    )
    assert bad.status_code == 422 and 'id="review-error"' in bad.text


async def test_the_form_refuses_forged_posts(client: httpx2.AsyncClient) -> None:
    token = await _form_token(client)
    form = {"action": "comment", "reason": "forged"}
    no_token = await client.post(f"{BILLING}/review", data=form)
    wrong = await client.post(f"{BILLING}/review", data={**form, "csrf_token": "0" * 64})
    other_origin = await client.post(
        f"{BILLING}/review",
        data={**form, "csrf_token": token},
        headers={"origin": "http://evil.example"},
    )
    for answer in (no_token, wrong, other_origin):
        assert answer.status_code == 403
    assert (await client.get(API)).json()["history"] == []


async def test_reviews_need_ingest_and_name_the_key(client: httpx2.AsyncClient) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    _, read_key = await store.create_api_key(["read"])
    info, key = await store.create_api_key(["ingest", "read"])
    denied = await client.post(
        API,
        json={"action": "comment", "reason": "x"},
        headers={"authorization": f"Bearer {read_key}"},
    )
    assert denied.status_code == 403
    anonymous = await client.post(API, json={"action": "comment", "reason": "x"})
    assert anonymous.status_code == 401
    made = await client.post(
        API, json={"action": "comment", "reason": "x"}, headers={"authorization": f"Bearer {key}"}
    )
    assert made.status_code == 201
    assert made.json()["comments"][0]["reviewer"] == info.key_id
