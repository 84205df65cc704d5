"""Follows the checks documentation page "Custom trace types" (oss/checks/how-to/
custom-trace): an `LLMTrace` subclass with a computed `turn_count` and its own
`__rich_console__` (a Markdown transcript), run with `trace_type=` and scenario
`annotations`; then what the page shows: the report `print_report()` prints (its trace
section), the type of `final_trace`, an `LLMTrace` rebuilt from the final interactions and
printed with a Rich console, the base trace's default layout, and the dumps (`last` and the
computed field included)."""

import asyncio
import io
import json

from giskard.checks import FnCheck, Interaction, Scenario, Trace  # IMPORT
from pydantic import computed_field
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown


class LLMTrace(Trace[str, str]):
    """Chat-oriented trace with a Markdown transcript for Rich."""

    @computed_field
    @property
    def turn_count(self) -> int:
        return len(self.interactions)

    def _conversation_markdown(self) -> str:
        if not self.interactions:
            return "**No interactions yet**"
        return "\n\n".join(
            f"**user**: {interaction.inputs}\n\n**assistant**: {interaction.outputs}"
            for interaction in self.interactions
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Markdown(self._conversation_markdown())


def printed(renderable) -> list[str]:
    console = Console(file=io.StringIO(), width=72, color_system=None, record=True)
    console.print(renderable)
    return [line.rstrip() for line in console.export_text().splitlines()]


def trace_section(report: list[str]) -> list[str]:
    """The report's lines between its "Trace" rule and its footer rule."""
    start = next(i for i, line in enumerate(report) if line.strip("─ ") == "Trace")
    return report[start + 1 : -1]


async def main() -> None:
    out: dict = {}
    result = await (
        Scenario("llm_trace_demo", trace_type=LLMTrace, annotations={"tenant": "acme", "env": "ci"})
        .interact(inputs="Hello", outputs="Hi! How can I help?")
        .interact(inputs="What is 2+2?", outputs="2 + 2 equals 4.")
        .check(
            FnCheck(
                fn=lambda trace: trace.annotations.get("tenant") == "acme",
                name="tenant_annotation",
                success_message="Tenant present",
                failure_message="Missing tenant",
            )
        )
        .check(
            FnCheck(
                fn=lambda trace: isinstance(trace, LLMTrace) and trace.turn_count >= 2,
                name="min_two_turns",
                success_message="At least two turns",
                failure_message="Expected two turns",
            )
        )
        .run()
    )
    out["status"] = result.status.value
    out["messages"] = [r.message for s in result.steps for r in s.results]
    console = Console(file=io.StringIO(), width=72, color_system=None, record=True)
    result.print_report(console=console)
    report = [line.rstrip() for line in console.export_text().splitlines()]
    out["report_trace_section"] = trace_section(report)
    out["final_trace_type"] = type(result.final_trace).__name__
    out["final_dump"] = result.final_trace.model_dump(mode="json")

    rebuilt = LLMTrace(
        interactions=result.final_trace.interactions,
        annotations=result.final_trace.annotations,
    )
    out["rebuilt_turn_count"] = rebuilt.turn_count
    out["rebuilt_printed"] = printed(rebuilt)
    out["empty_printed"] = printed(LLMTrace())
    plain = Trace(interactions=[Interaction(inputs="ping", outputs={"pong": 1})])
    out["plain_printed"] = printed(plain)
    out["plain_dump"] = plain.model_dump(mode="json")
    out["empty_dump"] = Trace().model_dump(mode="json")
    out["scenario_dump_trace"] = result.model_dump(mode="json")["final_trace"]
    print(json.dumps(out, sort_keys=True, ensure_ascii=False))


asyncio.run(main())
