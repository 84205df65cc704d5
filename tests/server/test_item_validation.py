"""Items that could never run are refused: 422 naming the field, nothing stored."""

from __future__ import annotations

import httpx2
import pytest

pytestmark = pytest.mark.anyio

BASE = "/v1/scenarios/support/items"
TRACE = {"trace_id": "tr_held", "agent_name": "support", "input": "q", "steps": []}


async def _field(response: httpx2.Response) -> tuple[str, str]:
    assert response.status_code == 422, response.text
    entry = response.json()["error"]["fields"][0]
    return entry["field"], entry["message"]


async def test_an_item_with_neither_input_nor_trace_id_is_refused(
    app_client: httpx2.AsyncClient,
) -> None:
    field, message = await _field(await app_client.post(BASE, json={"name": "empty"}))
    assert field == "input"
    assert "neither an input nor a trace_id" in message
    put = await app_client.put(BASE, json={"items": [{"name": "ok", "input": "x"}, {"name": "e"}]})
    assert (await _field(put))[0] == "items.1.input"
    assert (await app_client.get(BASE)).json() == {"items": []}


async def test_an_item_naming_a_trace_the_server_does_not_hold_is_refused(
    app_client: httpx2.AsyncClient,
) -> None:
    field, message = await _field(await app_client.post(BASE, json={"trace_id": "tr_nowhere"}))
    assert field == "trace_id"
    assert "'tr_nowhere'" in message and "not stored" in message
    put = await app_client.put(BASE, json={"items": [{"trace_id": "tr_nowhere"}]})
    assert (await _field(put))[0] == "items.0.trace_id"
    item_id = (await app_client.post(BASE, json={"input": "x"})).json()["id"]
    replaced = await app_client.put(f"{BASE}/{item_id}", json={"trace_id": "tr_nowhere"})
    assert (await _field(replaced))[0] == "trace_id"
    assert [i["input"] for i in (await app_client.get(BASE)).json()["items"]] == ["x"]


async def test_items_that_can_run_are_stored(app_client: httpx2.AsyncClient) -> None:
    assert (await app_client.post("/v1/traces", json=TRACE)).status_code == 201
    for item in ({"trace_id": "tr_held"}, {"input": ""}, {"input": None, "trace_id": "tr_held"}):
        assert (await app_client.post(BASE, json=item)).status_code == 201, item
