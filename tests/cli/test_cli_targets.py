"""Scenario files with a target (``target:`` in the file, ``--target``), checks built
with a wrong argument in Python files, and a run where no file loads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

Cli = Callable[..., Result]
Write = Callable[[str, str], Path]

AGENT = """
def answer(inputs):
    return f"you said {inputs}"
"""

SCENARIO = """
name: greet
{target}
steps:
  - interacts:
      - {{kind: interact, inputs: hello}}
    checks:
      - {{kind: string_matching, keyword: "you said hello"}}
"""


def test_a_yaml_scenario_without_outputs_runs_against_its_target(
    cli: Cli, write: Write, home: Path
) -> None:
    write("agent_mod.py", AGENT)
    write("cases/greet.scenario.yaml", SCENARIO.format(target="target: agent_mod:answer"))
    result = cli("run", "cases", "-q")
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.stdout


def test_target_on_the_command_line_serves_scenarios_that_name_none(cli: Cli, write: Write) -> None:
    write("agent_mod.py", AGENT)
    write("greet.scenario.yaml", SCENARIO.format(target=""))
    without = cli("run", "greet.scenario.yaml")
    assert without.exit_code == 2
    said = " ".join(without.stdout.split())
    assert "in a scenario file, 'target: module:function' (or scenarist run --target" in said
    given = cli("run", "greet.scenario.yaml", "-q", "--target", "agent_mod:answer")
    assert given.exit_code == 0, given.output
    wrong = cli("run", "greet.scenario.yaml", "--target", "agent_mod:nope")
    assert wrong.exit_code == 2
    assert "--target 'agent_mod:nope': 'agent_mod' has no function 'nope'" in wrong.stderr
    shape = cli("run", "greet.scenario.yaml", "--target", "agent_mod")
    assert "write it as module:function" in shape.stderr


def test_a_bad_target_in_a_file_names_the_file(cli: Cli, write: Write) -> None:
    write("greet.scenario.yaml", SCENARIO.format(target="target: missing_mod:answer"))
    result = cli("run", "greet.scenario.yaml")
    assert result.exit_code == 2
    assert "greet.scenario.yaml: target 'missing_mod:answer': cannot import 'missing_mod'" in (
        result.stderr
    )


def test_a_check_with_a_wrong_argument_in_python_gets_file_line_and_fix(
    cli: Cli, write: Write, home: Path
) -> None:
    write(
        "suite.py",
        """
        from scenarist import Scenario, StringMatching

        def agent(inputs):
            return inputs

        check = StringMatching(keywrd="hello")
        ok = Scenario("x").interact("hello").check(check).with_target(agent)
        """,
    )
    result = cli("run", "suite.py")
    assert result.exit_code == 2
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert line == (
        "error: suite.py:7: StringMatching(...): unknown argument 'keywrd'; did you mean 'keyword'?"
    )
    assert "validation error" not in result.stderr and "pydantic" not in result.stderr


def test_when_no_file_loads_there_is_no_report_and_no_stored_run(
    cli: Cli, write: Write, home: Path
) -> None:
    write("one.py", "raise RuntimeError('broken at import')\n")
    write("two.scenario.yaml", "name: t\nsteps: 3\n")
    result = cli("run", ".")
    assert result.exit_code == 2
    assert "one.py: RuntimeError: broken at import" in result.stderr
    assert "two.scenario.yaml: invalid Scenario" in result.stderr
    assert result.stdout.strip() == (
        "scenarist: ERROR (exit 2): 2 file(s) could not be loaded and no scenario ran; fix "
        "the errors above"
    )
    assert not (home / "home" / "runs").exists() or not list((home / "home/runs").iterdir())
    assert not (home / "home" / "scenarist.db").exists()


def test_the_readme_first_suite_runs_and_passes(cli: Cli, home: Path) -> None:
    example = Path(__file__).parents[2] / "examples" / "first_suite.py"
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    code = example.read_text(encoding="utf-8")
    for block in ('@step(kind="tool")', "def support_agent", "suite = Suite("):
        start = code.index(block)
        end = code.find("\n\n", start)
        assert code[start : end if end != -1 else None].strip() in readme  # shown as it is
    result = cli("run", str(example))
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.stdout


def test_the_readme_yaml_suite_is_the_example_file_and_passes(cli: Cli, home: Path) -> None:
    import json

    import jsonschema
    import yaml

    root = Path(__file__).parents[2]
    example = root / "examples" / "support.suite.yaml"
    text = example.read_text(encoding="utf-8")
    assert f"```yaml\n{text}```" in (root / "README.md").read_text(encoding="utf-8")
    modeline = text.splitlines()[0].split("$schema=", 1)[1]
    schema_file = (example.parent / modeline).resolve()
    assert schema_file == root / "src/scenarist/formats/schemas/scenario.schema.json"
    jsonschema.validate(yaml.safe_load(text), json.loads(schema_file.read_text()))
    result = cli("run", str(example))
    assert result.exit_code == 0, result.output
    assert "2 passed" in result.stdout


def test_quiet_keeps_a_line_a_failure_and_the_verdict(cli: Cli, write: Write) -> None:
    write(
        "suite.py",
        """
        from scenarist import Scenario, StringMatching, Suite

        def lookup(question):
            raise ConnectionError("upstream CRM returned 503")

        def agent(question):
            return lookup(question)

        suite = Suite(name="crm", target=agent)
        suite.append(Scenario("crashes").interact("hi").check(StringMatching(keyword="x")))
        suite.append(Scenario("answers_wrong").interact("hi", outputs="no").check(
            StringMatching(keyword="yes", name="says_yes")))
        suite.append(Scenario("fine").interact("hi", outputs="yes").check(
            StringMatching(keyword="yes")))
        """,
    )
    result = cli("run", "suite.py", "-q")
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "ERROR crashes - step 1: ConnectionError in the agent call: upstream CRM returned 503"
        " at suite.py:5 in lookup"
    )
    assert lines[1].startswith("FAIL answers_wrong - step 1 · says_yes: ")
    assert lines[2].startswith("scenarist: ERROR (exit 2)") and len(lines) == 3
    assert "Suite Results" not in result.stdout and "fine" not in result.stdout


SUITE_TARGETS = """
from scenarist import Equals, Scenario, Suite

shared = Scenario("shared").interact("q").check(Equals(expected_value="A:q"))
own = Scenario("own", target=lambda q: f"own:{q}").interact("q").check(
    Equals(expected_value="own:q")
)
a = Suite(name="a", target=lambda q: f"A:{q}", scenarios=[shared, own])
"""

NOT_CALLABLE = """
from scenarist import Equals, Scenario, Suite

suite = Suite(name="bad", target="not a function", scenarios=[
    Scenario("s").interact("q").check(Equals(expected_value="x")),
])
"""


def test_a_suite_target_serves_its_scenarios_without_changing_them(
    cli: Cli, write: Write, home: Path
) -> None:
    import importlib.util

    path = write("targets_mod.py", SUITE_TARGETS)
    result = cli("run", "targets_mod.py", "-q")
    assert result.exit_code == 0, result.output
    assert "2 passed" in result.stdout
    spec = importlib.util.spec_from_file_location("targets_mod_again", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from scenarist.cli._discover import _with_target

    given = _with_target(module.shared, module.a)
    assert given is not module.shared and given.target is module.a.target
    assert module.shared.target is not module.a.target  # the user's scenario is not changed
    assert _with_target(module.own, module.a) is module.own  # it has its own target


def test_a_suite_target_that_is_not_callable_is_refused_naming_it(cli: Cli, write: Write) -> None:
    write("bad_target.py", NOT_CALLABLE)
    result = cli("run", "bad_target.py")
    assert result.exit_code == 2, result.output
    assert "target must be a callable (a function of inputs), got 'not a function'" in (
        " ".join((result.stdout + result.stderr).split())
    )
