"""Scenario files as users really write them, broken in the ways they break: each gives
one ``error:`` line naming the file, where in it, and the fix; exits 2; and records no run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from scenarist import Scenario, Suite
from scenarist.errors import UserError

Cli = Callable[..., Result]

GOOD_STEP = (
    "  - interacts:\n"
    "      - {kind: interact, inputs: hi, outputs: hello}\n"
    "    checks:\n"
    "      - {kind: string_matching, keyword: hello}\n"
)

# (file name, bytes, what the one error line must say)
HOSTILE: list[tuple[str, bytes, list[str]]] = [
    ("empty.scenario.yaml", b"", ["the file is empty; write a scenario"]),
    ("blank.scenario.json", b"  \n", ["the file is empty"]),
    ("list.scenario.yaml", b"- a\n- b\n", ["(top level): found a list; write a scenario"]),
    ("text.scenario.json", b'"just text"', ["(top level): found a str"]),
    (
        "typo_top.scenario.yaml",
        b"name: t\nstep:\n" + GOOD_STEP.encode(),
        ["invalid Scenario: step: unknown field 'step'; did you mean 'steps'?"],
    ),
    (
        "typo_step.scenario.yaml",
        b"name: t\nsteps:\n  - interact:\n      - {kind: interact, inputs: hi, outputs: x}\n",
        ["steps[0].interact: unknown field 'interact'; did you mean 'interacts'?"],
    ),
    (
        "typo_suite.suite.yaml",
        b"name: s\nscenario: []\n",
        ["invalid Suite: scenario: unknown field 'scenario'; did you mean 'scenarios'?"],
    ),
    (
        "typo_check.scenario.yaml",
        b"name: t\nsteps:\n  - checks:\n      - {kind: string_matching, keywrd: x}\n",
        ["steps[0].checks[0].keywrd: unknown field 'keywrd'", "did you mean 'keyword'?"],
    ),
    (
        "kind.scenario.yaml",
        b"name: t\nsteps:\n  - checks:\n      - {kind: string_matchin, keyword: x}\n",
        ["steps[0].checks[0]: unknown kind 'string_matchin'; did you mean 'string_matching'?"],
    ),
    (
        "code_only.scenario.yaml",
        b"name: t\nsteps:\n  - checks:\n      - {kind: fn, fn: 'my_app.checks:ok'}\n",
        ["steps[0].checks[0]: a fn holds Python code, which a file cannot; build this scenario"],
    ),
    (
        "no_kind.scenario.yaml",
        b"name: t\nsteps:\n  - interacts: [{inputs: a}]\n    checks: [{keyword: a}]\n",
        [
            "steps[0].interacts[0]: an interaction spec needs a 'kind' field; registered "
            "kinds: interact",
            "steps[0].checks[0]: a check needs a 'kind' field; registered kinds: all_of,",
        ],
    ),
    (
        "article.scenario.yaml",
        b"name: t\nsteps:\n  - checks:\n      - {kind: equals, expected_value: 1, key: x}\n",
        ["steps[0].checks[0].key: unknown field 'key' in an equals check; its fields are"],
    ),
    (
        "norway.scenario.yaml",
        b"name: no\nsteps:\n  - checks: [{kind: string_matching, keyword: yes}]\n",
        [
            "name: Input should be a valid string, got False; quote it (YAML reads yes, no,",
            "steps[0].checks[0].keyword: Input should be a valid string, got True; quote it",
        ],
    ),
    (
        "types.scenario.yaml",
        b"name: t\nmultiple_runs: three\nsteps: {}\n",
        ["steps: Input should be a valid list", "multiple_runs: Input should be a valid integer"],
    ),
    (
        "missing.scenario.yaml",
        b"name: t\nsteps:\n  - checks:\n      - {kind: equals}\n",
        ["steps[0].checks[0]"],
    ),
    (
        "tabs.scenario.yaml",
        b"name: t\nsteps:\n\t- checks: []\n",
        ["not valid YAML", "line 3", "indent with spaces, YAML does not allow tabs"],
    ),
    (
        "latin1.scenario.yaml",
        b"name: t\nsteps:\n  - interacts:\n      - {kind: interact, inputs: caf\xe9}\n",
        ["line 4: not UTF-8 (byte 0xe9); save the file as UTF-8"],
    ),
    (
        "dup_checks.scenario.yaml",
        b"name: t\nsteps:\n  - interacts:\n      - {kind: interact, inputs: hi, outputs: hello}\n"
        b"    checks:\n      - {kind: string_matching, keyword: bye}\n"
        b"    checks:\n      - {kind: string_matching, keyword: hello}\n",
        ["line 7: key 'checks' appears twice in one mapping (first on line 5); keep one"],
    ),
    (
        "dup_key.scenario.json",
        b'{"name": "a", "steps": [], "name": "b"}',
        ["key 'name' appears twice in one object; keep one"],
    ),
    (
        "deep.scenario.json",
        b'{"name": "d", "steps": [{"interacts": [{"kind": "interact", "inputs": '
        + b"[" * 200
        + b"]" * 200
        + b"}]}]}",
        ["steps.0.interacts.0.inputs", "nested deeper than 128 levels", "flatten the value"],
    ),
    (
        "deeper.scenario.yaml",
        b"name: d\nsteps: " + b"[" * 5000 + b"]" * 5000 + b"\n",
        ["nested too deeply to read (the limit is 128 levels)"],
    ),
    (
        "laughs.scenario.yaml",
        b"name: l\nannotations:\n"
        + b"".join(
            f"  {c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['lol'] * 9)}]\n".encode()
            for p, c in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh", strict=True)
        ),
        ["its aliases expand to more than 1,000,000 values; use fewer nested aliases"],
    ),
    (
        # few values (130) but long ones: an 8 KB text repeated 64 x 64 times is 33 MB
        "bytes_bomb.scenario.yaml",
        b"name: b\nannotations:\n  s: &s "
        + b"x" * 8192
        + b"\n  l: &l ["
        + b", ".join([b"*s"] * 64)
        + b"]\n  m: ["
        + b", ".join([b"*l"] * 64)
        + b"]\n",
        [
            "its aliases expand to more than 16 MB",
            "an alias repeats the whole value it names",
            "use fewer or smaller aliases",
        ],
    ),
    (
        "self.scenario.yaml",
        b"name: s\nannotations: &loop\n  again: *loop\n",
        ["an alias refers to itself"],
    ),
]


@pytest.mark.parametrize(("name", "content", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_broken_scenario_file_names_file_place_and_fix_and_records_nothing(
    cli: Cli, home: Path, name: str, content: bytes, expected: list[str]
) -> None:
    (home / name).write_bytes(content)
    result = cli("run", name)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert line.startswith(f"error: {name}: ")
    for part in expected:
        assert part in line
    assert "Traceback" not in result.output and "pydantic" not in result.output
    assert result.stdout.strip().startswith("scenarist: ERROR (exit 2)")
    assert not (home / "home" / "scenarist.db").exists()
    assert not list((home / "home").glob("runs/*.jsonl"))


def test_a_byte_order_mark_is_read_as_utf8(home: Path) -> None:
    (home / "bom.scenario.json").write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"name": "bom", "steps": []}).encode()
    )
    (home / "bom.suite.yaml").write_bytes(
        b"\xef\xbb\xbfname: s\nscenarios:\n  - name: inner\n    steps:\n"
        + GOOD_STEP.replace("\n  ", "\n    ").replace("  - ", "    - ", 1).encode()
    )
    assert Scenario.from_file(home / "bom.scenario.json").name == "bom"
    suite = Suite.from_file(home / "bom.suite.yaml")
    assert suite.run_sync(verbose=False).passed_count == 1


def test_a_folder_given_as_a_scenario_file_says_so(home: Path) -> None:
    (home / "cases.json").mkdir()
    with pytest.raises(UserError, match=r"cases\.json: a folder, not a file; check the path"):
        Scenario.from_file(home / "cases.json")


def test_a_file_outside_the_working_folder_loads_and_is_named_as_given(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "shared.scenario.yaml").write_text("name: shared\nsteps:\n" + GOOD_STEP)
    (home / "project").mkdir()
    monkeypatch.chdir(home / "project")
    result = cli("run", "../shared.scenario.yaml")
    assert result.exit_code == 0, result.output
    (home / "bad.scenario.yaml").write_text("name: bad\nstep: []\n")
    result = cli("run", "../bad.scenario.yaml")
    assert result.exit_code == 2
    assert "error: ../bad.scenario.yaml: invalid Scenario: step: unknown field" in result.stderr


def test_a_broken_file_next_to_good_ones_exits_2_and_the_good_ones_run(
    cli: Cli, home: Path
) -> None:
    (home / "cases").mkdir()
    (home / "cases" / "good.scenario.yaml").write_text("name: good\nsteps:\n" + GOOD_STEP)
    (home / "cases" / "typo.scenario.yaml").write_text("name: typo\nstep:\n" + GOOD_STEP)
    result = cli("run", "cases")
    assert result.exit_code == 2
    assert "typo.scenario.yaml: invalid Scenario: step: unknown field 'step'" in result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("scenarist: ERROR (exit 2): 1 file(s) could not be loaded or run")
    assert "1 scenario: 1 passed" in last
    # kept, but never as a complete run: no footer in the log, incomplete in the store
    (log,) = (home / "home" / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["record_type"] for r in records] == ["header", "scenario"]
    from scenarist._sync import run_sync
    from scenarist.store.default import default_store

    (run,) = run_sync(default_store().list_runs).items
    assert (run.passed_count, run.complete) == (1, False)
    assert "INCOMPLETE" in cli("report", "last").stdout


def test_a_large_file_loads(home: Path) -> None:
    steps = "".join(
        f"  - interacts:\n      - {{kind: interact, inputs: 'q{n}', outputs: 'a{n} hello'}}\n"
        "    checks:\n      - {kind: string_matching, keyword: hello}\n"
        for n in range(2000)
    )
    (home / "big.scenario.yaml").write_text("name: big\nsteps:\n" + steps)
    scenario = Scenario.from_file(home / "big.scenario.yaml")
    assert len(scenario.steps) == 2000


def test_unknown_top_level_keys_are_still_ignored_by_model_validate() -> None:
    # giskard's files and newer versions load through the API; only hand-written files
    # (from_file, the CLI) are strict about them
    assert Scenario.model_validate({"name": "s", "steps": [], "written_by": "x"}).name == "s"


def test_a_scenario_in_a_suite_file_may_name_its_own_target(cli: Cli, home: Path) -> None:
    (home / "agent.py").write_text(
        "def run(inputs):\n    return 'you said ' + inputs\n\n"
        "def other(inputs):\n    return 'other ' + inputs\n"
    )
    (home / "s.suite.yaml").write_text(
        "name: s\ntarget: agent:run\nscenarios:\n"
        "  - name: inherits\n    steps:\n"
        "      - interacts: [{kind: interact, inputs: hello}]\n"
        "        checks: [{kind: string_matching, keyword: 'you said hello'}]\n"
        "  - name: own\n    target: agent:other\n    steps:\n"
        "      - interacts: [{kind: interact, inputs: hello}]\n"
        "        checks: [{kind: string_matching, keyword: 'other hello'}]\n"
        "  - name: broken\n    target: agent:nope\n    steps: []\n"
    )
    result = cli("run", "s.suite.yaml")
    assert result.exit_code == 2
    assert (
        "error: s.suite.yaml: scenarios[2].target 'agent:nope': 'agent' has no function 'nope'"
        in result.stderr
    )
    (home / "s.suite.yaml").write_text(
        (home / "s.suite.yaml").read_text().split("  - name: broken")[0]
    )
    result = cli("run", "s.suite.yaml")
    assert result.exit_code == 0, result.output
    assert "2 scenarios: 2 passed" in result.stdout


def test_a_file_reached_twice_runs_once(cli: Cli, home: Path) -> None:
    (home / "cases").mkdir()
    (home / "cases" / "one.scenario.yaml").write_text("name: one\nsteps:\n" + GOOD_STEP)
    result = cli(
        "run", "-q", "cases/one.scenario.yaml", "cases", "./cases/one.scenario.yaml", "cases/"
    )
    assert result.exit_code == 0, result.output
    assert "| 1 scenario: 1 passed" in result.stdout


def test_every_file_runs_however_objects_are_freed(home: Path) -> None:
    """Discovery remembered objects by ``id()`` without keeping them: a suite file's Suite,
    dropped once its scenarios were taken, could leave its id to a later file's Scenario,
    which was then skipped as already seen (an error for a file given, silence in a
    folder). It depends on the allocator (about 1 discovery in 10 here), hence the loop."""
    from scenarist.cli._discover import discover

    (home / "dup.suite.yaml").write_text(
        "name: s\nscenarios:\n  - {name: s1, steps: []}\n  - {name: s2, steps: []}\n"
    )
    (home / "n1.scenario.yaml").write_text("name: n1\nsteps: []\n")
    (home / "n2.scenario.yaml").write_text("name: n2\nsteps: []\n")
    paths = [home / "dup.suite.yaml", home / "n1.scenario.yaml", home / "n2.scenario.yaml"]
    counts = {discover(paths).scenario_count for _ in range(300)}
    assert counts == {4}


def test_scenarios_sharing_a_name_are_run_and_named_in_a_warning(cli: Cli, home: Path) -> None:
    (home / "dup.suite.yaml").write_text(
        "name: s\nscenarios:\n  - {name: same, steps: []}\n  - {name: same, steps: []}\n"
    )
    result = cli("run", "-q", "dup.suite.yaml")
    assert result.exit_code == 0
    assert "| 2 scenarios: 2 passed" in result.stdout
    assert (
        "warning: 2 scenarios are named 'same' (dup.suite.yaml); history and comparisons "
        "match scenarios by name: give each its own" in result.stderr
    )


def test_symlinks_back_to_a_parent_folder_are_walked_once(cli: Cli, home: Path) -> None:
    (home / "cases" / "sub").mkdir(parents=True)
    (home / "cases" / "sub" / "one.scenario.yaml").write_text("name: one\nsteps:\n" + GOOD_STEP)
    (home / "cases" / "sub" / "back1").symlink_to(home / "cases")
    (home / "cases" / "sub" / "back2").symlink_to(home / "cases")  # exponential before
    result = cli("run", "-q", "cases")
    assert result.exit_code == 0, result.output
    assert "| 1 scenario: 1 passed" in result.stdout


def test_yaml_anchors_and_merge_keys_still_load(cli: Cli, home: Path) -> None:
    """Strict about repeated keys and unknown top-level keys, but not about YAML's own
    reuse: `x-` keys hold anchors (docker-compose's convention), `<<:` merges them."""
    (home / "reuse.suite.yaml").write_text(
        "x-base: &base\n  steps:\n"
        + GOOD_STEP.replace("\n  ", "\n    ").replace("  - ", "    - ", 1)
        + "name: s\nscenarios:\n  - <<: *base\n    name: one\n  - <<: *base\n    name: two\n"
    )
    result = cli("run", "-q", "reuse.suite.yaml")
    assert result.exit_code == 0, result.output
    assert "| 2 scenarios: 2 passed" in result.stdout


def test_yaml_aliases_of_long_values_load_while_the_expansion_stays_bounded(
    cli: Cli, home: Path
) -> None:
    """A long text named once and used in a few places (a system prompt) is what aliases
    are for: 200 KB used five times loads; only many times the file's size is refused."""
    prompt = "You are a careful assistant. " * 7000  # 200 KB
    scenario = (
        "  - name: NAME\n    annotations: {prompt: *prompt}\n    steps:\n"
        + GOOD_STEP.replace("\n  ", "\n      ").replace("  - ", "      - ", 1)
    )
    (home / "prompt.suite.yaml").write_text(
        f"x-prompt: &prompt '{prompt}'\nname: s\nscenarios:\n"
        + "".join(scenario.replace("NAME", f"s{n}") for n in range(5))
    )
    result = cli("run", "-q", "prompt.suite.yaml")
    assert result.exit_code == 0, result.output
    assert "| 5 scenarios: 5 passed" in result.stdout
