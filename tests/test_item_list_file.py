"""Item list files (``scenarist.formats.item_list``): the committed JSON Schema describes
them with the scenario files' check specs, and loading builds the items."""

from __future__ import annotations

from pathlib import Path

import jsonschema

from scenarist.formats.files import read_data
from scenarist.formats.item_list import is_item_list, load_item_list
from scenarist.formats.scenario_schema import json_schema

TEXT = """
x-common: &late {kind: trace_output_contains, expected: late, where: final}
scenario_name: support
agent: agent_here:agent
assertions: [{kind: trace_no_errors}]
items:
  - {name: recorded, trace_id: tr_0123, assertions: [*late]}
  - {input: "where is A1?", tags: [smoke]}
"""


def test_item_list_files_validate_against_the_schema_and_load(tmp_path: Path) -> None:
    (tmp_path / "agent_here.py").write_text("def agent(ctx):\n    return 'late'\n")
    path = tmp_path / "support.items.yaml"
    path.write_text(TEXT)
    data = read_data(path)
    assert is_item_list(data)
    validator = jsonschema.Draft202012Validator(json_schema())
    assert list(validator.iter_errors({k: v for k, v in data.items() if k != "x-common"})) == []
    typo = {**data, "items": [{"trace_id": "tr_1", "assertions": [{"kind": "trace_no_erors"}]}]}
    assert list(validator.iter_errors(typo))
    spec, agent = load_item_list(path)
    assert agent(None) == "late"
    recorded, live = spec.scenario_items()
    assert recorded.trace_id == "tr_0123" and recorded.is_trace_backed
    assert [a.kind for a in recorded.assertions] == ["trace_output_contains"]
    assert live.input == "where is A1?" and live.tags == ["smoke"]
    assert not is_item_list({"name": "s", "steps": [], "items": []})
