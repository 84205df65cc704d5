from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import anyio.to_thread
import pytest

from scenarist.tracing import RunContext, StepHandle, current_recorder, step

pytestmark = pytest.mark.anyio


def test_step_outside_a_run_records_nothing_and_still_runs() -> None:
    @step(kind="tool")
    def add(a: int, b: int) -> int:
        return a + b

    assert current_recorder() is None
    assert add(1, 2) == 3
    with step("free") as handle:
        handle.set_meta("tokens_in", 3)  # accepted, nowhere to go
        handle.output = "x"


def test_steps_nest_for_real_and_record_input_output() -> None:
    ctx = RunContext(input="question")

    @step(kind="tool")
    def search(query: str, limit: int = 3) -> list[str]:
        return [query] * limit

    with ctx.recorder:
        with ctx.step("plan", input={"q": "question"}, kind="agent") as handle:
            handle.set_meta("model", "m")
            search("cats", limit=2)
            handle.output = "done"
        ctx.track_step("answer", "cats", lambda: "meow")
    plan, answer = ctx.recorder.roots
    assert [s.name for s in ctx.steps] == ["plan", "search", "answer"]
    assert plan.children[0].parent_id == plan.span_id
    assert plan.children[0].input == {"query": "cats", "limit": 2}
    assert plan.children[0].output == ["cats", "cats"]
    assert (plan.kind, plan.model, plan.output, plan.status) == ("agent", "m", "done", "success")
    assert answer.output == "meow" and answer.parent_id is None
    assert all(s.duration_ms is not None and s.duration_ms >= 0 for s in ctx.steps)


def test_step_that_raises_is_an_error_span_and_the_exception_propagates() -> None:
    ctx = RunContext()
    with ctx.recorder, pytest.raises(KeyError, match="missing"):
        ctx.track_step("lookup", None, lambda: {}["missing"])
    (span,) = ctx.steps
    assert span.status == "error"
    assert span.error is not None and span.error.type == "KeyError"


async def test_cancelled_step_is_closed_with_status_cancelled() -> None:
    ctx = RunContext()

    async def slow() -> None:
        async with step("slow"):
            await asyncio.sleep(10)

    with ctx.recorder:
        with anyio.move_on_after(0.01):
            await slow()
    (span,) = ctx.steps
    assert span.status == "error"
    assert span.error is not None and span.error.message == "cancelled"


async def test_track_step_forms_accept_sync_and_async_functions() -> None:
    ctx = RunContext()

    async def fetch() -> str:
        await asyncio.sleep(0)
        return "async"

    with ctx.recorder:
        assert await ctx.track_step_async("a", 1, lambda: "sync lambda") == "sync lambda"
        assert await ctx.track_step_async("b", 2, fetch) == "async"
        assert ctx.track_step("c", 3, fetch) == "async"
        assert await ctx.track_step_async("d", 4, lambda h: h.set_meta("tokens_out", 7)) is None
    assert [(s.name, s.output) for s in ctx.steps] == [
        ("a", "sync lambda"),
        ("b", "async"),
        ("c", "async"),
        ("d", None),
    ]
    assert ctx.steps[3].tokens_out == 7


def test_track_step_passes_the_handle_only_to_functions_that_want_it() -> None:
    ctx = RunContext()
    seen: list[Any] = []
    with ctx.recorder:
        ctx.track_step("none", None, lambda: seen.append("no handle"))
        ctx.track_step("one", None, lambda handle: seen.append(type(handle)))
        ctx.track_step("default", None, lambda handle=None: seen.append(handle))
    assert seen == ["no handle", StepHandle, None]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("tokens_in", "12", "tokens_in must be int, got str"),
        ("tokens_out", 1.5, "tokens_out must be int, got float"),
        ("cost_usd", "0.1", "cost_usd must be float, got str"),
        ("model", 3, "model must be str, got int"),
        ("tokens_in", True, "tokens_in must be int, got bool"),
    ],
)
def test_set_meta_rejects_wrong_types_for_typed_keys(key: str, value: Any, message: str) -> None:
    ctx = RunContext()
    with ctx.recorder, ctx.step("s") as handle, pytest.raises(TypeError, match=message):
        handle.set_meta(key, value)


def test_set_meta_typed_fields_and_free_metadata() -> None:
    ctx = RunContext()
    with ctx.recorder, ctx.step("s") as handle:
        handle.set_meta("tokens_in", 10)
        handle.set_meta("cost_usd", 1)
        handle.set_meta("type", "llm")
        handle.set_meta("temperature", 0.2)
    (span,) = ctx.steps
    assert (span.tokens_in, span.cost_usd, span.kind) == (10, 1.0, "llm")
    assert isinstance(span.cost_usd, float)
    assert span.metadata == {"temperature": 0.2}


def test_track_step_rejects_a_non_callable() -> None:
    ctx = RunContext()
    with ctx.recorder, pytest.raises(TypeError, match="expects a function"):
        ctx.track_step("s", None, "not a function")  # type: ignore[arg-type]


async def test_concurrent_runs_never_mix_their_spans() -> None:
    async def agent(ctx: RunContext, tag: str) -> None:
        with ctx.recorder:
            for i in range(20):
                async with step(f"{tag}-{i}"):
                    await asyncio.sleep(0)

    first, second = RunContext(), RunContext()
    await asyncio.gather(agent(first, "a"), agent(second, "b"))
    assert {s.name[0] for s in first.steps} == {"a"}
    assert {s.name[0] for s in second.steps} == {"b"}
    assert len(first.steps) == len(second.steps) == 20


async def test_spans_opened_in_worker_threads_attach_to_the_open_span() -> None:
    ctx = RunContext()

    def blocking() -> str:
        with step("in-thread"):
            return threading.current_thread().name

    with ctx.recorder:
        async with step("outer"):
            await anyio.to_thread.run_sync(blocking)
    (outer,) = ctx.recorder.roots
    assert [c.name for c in outer.children] == ["in-thread"]


def test_trace_id_format() -> None:
    import re

    assert re.fullmatch(r"tr_[0-9a-f]{32}", RunContext().trace_id)
