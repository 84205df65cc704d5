"""Scenario files: the committed JSON Schema is current, and load errors name the file,
the path inside it and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from scenarist import Scenario, Suite
from scenarist.checks import Check
from scenarist.demo import build_demo_suite
from scenarist.errors import UserError
from scenarist.formats.scenario_schema import CODE_ONLY_KINDS, SCHEMA_PATH, json_schema


def test_scenario_committed_schema_is_current() -> None:
    committed = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert committed == json_schema(), (
        "src/scenarist/formats/schemas/scenario.schema.json is out of date; regenerate it with "
        "python -m scenarist.formats.scenario_schema"
    )


def test_scenario_schema_has_every_file_expressible_check_kind() -> None:
    union = json_schema()["$defs"]["Check"]["oneOf"]
    kinds = {ref["$ref"].rsplit(".", 1)[-1] for ref in union}
    builtin = {k for k in Check.kinds() if Check.kind_class(k).__module__.startswith("scenarist.")}
    assert kinds == builtin - CODE_ONLY_KINDS


def test_scenario_schema_accepts_dumped_scenarios_and_rejects_typos() -> None:
    validator = jsonschema.Draft202012Validator(json_schema())
    suite = build_demo_suite()
    suite.scenarios = [s for s in suite.scenarios if s.name != "handoff_to_a_human"]  # FnCheck
    assert list(validator.iter_errors(suite.model_dump(mode="json"))) == []
    typo = {
        "name": "t",
        "steps": [{"checks": [{"kind": "string_matching", "keywrd": "x"}]}],
    }
    assert list(validator.iter_errors(typo))


def test_scenario_file_typo_names_file_path_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(
        "name: c\nsteps:\n  - checks:\n      - {kind: string_matching, keywrd: x}\n"
        "      - {kind: equalz, expected_value: 1}\n"
    )
    with pytest.raises(UserError) as caught:
        Scenario.from_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: invalid Scenario: ")
    assert "steps[0].checks[0].keywrd: unknown field 'keywrd' in a string_matching check" in message
    assert "did you mean 'keyword'?" in message
    assert "steps[0].checks[1]: unknown kind 'equalz'; did you mean 'equals'?" in message


def test_suite_file_errors_point_inside_the_suite(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"name": "s", "scenarios": [{"name": "a", "multiple_runs": 0}]}))
    with pytest.raises(
        UserError, match=r"suite\.json: invalid Suite: scenarios\[0\]\.multiple_runs"
    ):
        Suite.from_file(path)
    path.write_text('{"name": ')
    with pytest.raises(UserError, match="not valid JSON"):
        Suite.from_file(path)
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("name: [unclosed\n")
    with pytest.raises(UserError, match=r"bad\.yaml: not valid YAML"):
        Scenario.from_file(bad_yaml)
