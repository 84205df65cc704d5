"""``TraceAssert``: Veval's assertion factory, building ordinary registered checks.

Every method returns a :class:`~scenarist.checks.base.Check`, so one assertion works in a
giskard-style scenario (``.check(TraceAssert.max_cost(0.10))``), in a suite file (it dumps
to ``{"kind": "trace_max_cost", ...}``) and as a Veval-style ``ScenarioItem`` assertion.
The parameter names are Veval's (``max_steps(max)``, ``step_exists(step_name)``,
``max_cost(max_cost)``...), so keyword calls written for Veval keep working.

``custom(fn)`` wraps a function of the trace in Veval's "return a message to fail" style
(a :class:`TraceAssertionFn`). Code ported from Veval that subclasses
:class:`~scenarist.veval.assertions.ITraceAssertion` (``evaluate_async(ctx)``) is accepted
as is by ``run_scenario_async``, which calls it with the item's run context; that
interface lives with the item runner in :mod:`scenarist.veval` (it is not a check: it reads
a run context, not a trace) and is re-exported here for its old import path.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    model_serializer,
)

from scenarist.checks.base import Check
from scenarist.checks.fn import omits_callables
from scenarist.checks.spans import (
    MaxCost,
    MaxDuration,
    MaxLlmCalls,
    MaxSteps,
    MaxTokens,
    MinSteps,
    NoErrors,
    OutputContains,
    StepDuration,
    StepExists,
)
from scenarist.checks.tools import (
    ArgPredicate,
    ToolArgs,
    ToolCallCount,
    ToolCalled,
    ToolNotCalled,
    ToolOrder,
)
from scenarist.errors import SerializationError, UserError
from scenarist.model._missing import MISSING
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace
from scenarist.veval.assertions import ITraceAssertion as ITraceAssertion  # its old home

if TYPE_CHECKING:
    from scenarist.judges.trace_judge import TraceJudge
    from scenarist.judges.trajectory_check import ToolTrajectory
    from scenarist.replay import SnapshotData, SnapshotOptions
    from scenarist.store.base import Store
    from scenarist.veval.snapshot_check import MatchesSnapshot

__all__ = ["CustomAssertion", "ITraceAssertion", "TraceAssert", "TraceAssertionFn"]


class TraceAssertionFn(Protocol):
    """A custom trace assertion function: ``None`` (or ``""``) passes, a message fails.

    Plain or ``async``. Wrap one with :meth:`TraceAssert.custom` to use it as a check.
    """

    def __call__(self, trace: Trace[Any, Any], /) -> str | Awaitable[str | None] | None: ...


def _fn_name(fn: object) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


@Check.register("trace_custom")
class CustomAssertion(Check):
    """A :class:`TraceAssertionFn` as a check.

    ``None`` → PASS; a non-empty string → FAIL with that message; ``""`` → PASS, as in
    Veval, where any falsy answer passes; anything else → ERROR, because a function that
    returns ``True`` or a number by mistake must not count as a verdict (Veval would list
    it as a failure message that is not a string). Like ``FnCheck``, it cannot be
    written to JSON.
    """

    fn: Annotated[
        Callable[[Trace[Any, Any]], Any],
        WithJsonSchema({"description": "A Python callable; it cannot be written to JSON."}),
    ] = Field(exclude=True)

    def _unserialisable(self) -> SerializationError:
        label = f" {self.name!r}" if self.name else ""
        return SerializationError(
            f"TraceAssert.custom{label} wraps the Python callable {_fn_name(self.fn)!r}, which "
            "cannot be written to JSON; dump it with mode='python', describe it with "
            "to_spec(), or write a registered Check subclass to make it serialisable."
        )

    @model_serializer(mode="wrap")
    def _dump_with_kind(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data: dict[str, Any] = handler(self)
        if not info.mode_is_json():
            return {"kind": self.kind, "fn": self.fn, **data}
        if not omits_callables(info.context):
            raise self._unserialisable()
        return {"kind": self.kind, **data}

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`pydantic.BaseModel.model_dump`; JSON mode raises ``SerializationError``."""
        if kwargs.get("mode") == "json" and not omits_callables(kwargs.get("context")):
            raise self._unserialisable()
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        """Always raises :class:`SerializationError` unless dumping for a spec."""
        if not omits_callables(kwargs.get("context")):
            raise self._unserialisable()
        return super().model_dump_json(*args, **kwargs)

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Call the function and read its answer as a verdict."""
        outcome = self.fn(trace)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        details = {"function": _fn_name(self.fn)}
        if outcome is None or outcome == "":
            return CheckResult.success(
                f"Custom assertion '{_fn_name(self.fn)}' passed.", details=details
            )
        if isinstance(outcome, str):
            return CheckResult.failure(outcome, details=details)
        return CheckResult.error(
            f"Custom assertion '{_fn_name(self.fn)}' must return a failure message (str) or "
            f"None, but got {type(outcome).__name__}: {outcome!r}",
            details={**details, "returned": repr(outcome)},
        )


class TraceAssert:
    """Veval's ``TraceAssert``: static methods that build trace assertions as checks.

    They look at every span of the trace (nested ones too); ``interaction=-1`` (or any
    index) narrows them to one interaction.

    >>> TraceAssert.max_cost(0.10).to_spec()
    {'kind': 'trace_max_cost', 'max_cost_usd': '0.1', 'unknown_cost': 'ignore'}
    >>> TraceAssert.step_exists("classify", interaction=-1).to_spec()
    {'kind': 'trace_step_exists', 'interaction': -1, 'step_name': 'classify'}
    """

    # -- Veval's methods ---------------------------------------------------------------

    @staticmethod
    def no_errors(
        *,
        agent_errors: bool = False,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> NoErrors:
        """No step failed; ``agent_errors=True``: and the agent raised nothing (Veval's
        rule looks at steps only)."""
        return NoErrors(
            agent_errors=agent_errors, interaction=interaction, name=name, description=description
        )

    @staticmethod
    def max_steps(
        max: int,  # Veval's parameter name, kept for keyword calls
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MaxSteps:
        """At most ``max`` steps, nested ones included."""
        return MaxSteps(max_steps=max, interaction=interaction, name=name, description=description)

    @staticmethod
    def step_exists(
        step_name: str,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> StepExists:
        """A step named exactly ``step_name`` exists."""
        return StepExists(
            step_name=step_name, interaction=interaction, name=name, description=description
        )

    @staticmethod
    def max_cost(
        max_cost: float | Decimal | str,
        *,
        unknown_cost: Literal["error", "ignore"] = "ignore",
        exact: bool = False,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MaxCost:
        """Total cost at most ``max_cost`` USD, added as Veval adds it (floats, unknown as
        zero); ``exact=True`` adds decimals, ``unknown_cost="error"`` makes an unknown LLM
        cost an ERROR."""
        return MaxCost(
            max_cost_usd=max_cost,
            unknown_cost=unknown_cost,
            exact=exact,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def max_duration(
        max_ms: float,
        *,
        measure: Literal["steps", "wall"] = "steps",
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MaxDuration:
        """The steps' durations add up to at most ``max_ms`` milliseconds (Veval's rule);
        ``measure="wall"``: the agent run's wall-clock time, queued time left out."""
        return MaxDuration(
            max_ms=max_ms,
            measure=measure,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def output_contains(
        expected: str,
        *,
        where: Literal["steps", "final"] | None = None,
        steps: bool | None = None,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> OutputContains:
        """Some step's output contains ``expected`` (Veval's rule); ``where="final"``: the
        final output does. ``steps=`` is the older spelling (``True``: steps)."""
        if steps is not None:
            if where is not None:
                raise UserError("give where= only (steps= is its older spelling)")
            where = "steps" if steps else "final"
        return OutputContains(
            expected=expected,
            where=where or "steps",
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def tool_called(
        tool_name: str,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolCalled:
        """A tool step named ``tool_name`` exists."""
        return ToolCalled(
            tool_name=tool_name, interaction=interaction, name=name, description=description
        )

    @staticmethod
    def matches_snapshot(
        snapshot_or_sdk: SnapshotData | str | Any = None,
        snapshot_name: str | SnapshotOptions | None = None,
        options: SnapshotOptions | None = None,
        *,
        snapshot_or_name: SnapshotData | str | Any = None,
        store: Store | None = None,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MatchesSnapshot:
        """The step sequence matches a snapshot (a ``SnapshotData``, or a saved one's name).

        A name is looked up when the check runs, in ``store`` if given, else in the
        default client's store. Veval's form, a source then the name
        (``matches_snapshot(client, "baseline")`` or ``snapshot_name="baseline"``), looks
        it up with ``source.get_snapshot_async(name)``: a client, the test double, or any
        object of yours with that method. The second positional may also be the options
        (``matches_snapshot(snapshot, SnapshotOptions(...))``, the older form).
        """
        from scenarist.replay import SnapshotData
        from scenarist.replay.snapshot_diff import SnapshotOptions
        from scenarist.veval.snapshot_check import MatchesSnapshot

        if snapshot_or_name is not None:  # the older keyword
            if snapshot_or_sdk is not None:
                raise UserError("give the snapshot once: snapshot_or_sdk or snapshot_or_name")
            snapshot_or_sdk = snapshot_or_name
        snapshot_or_name = snapshot_or_sdk
        if isinstance(snapshot_name, SnapshotOptions | dict):  # (snapshot, options)
            if options is not None:
                raise UserError("give the snapshot options once")
            snapshot_name, options = None, snapshot_name
        if isinstance(snapshot_or_name, SnapshotData | str) and snapshot_name is not None:
            raise UserError(
                "give the snapshot once: matches_snapshot(snapshot_or_name, options); "
                "snapshot_name= is for Veval's form matches_snapshot(client, snapshot_name=...)"
            )
        source: Any = None
        if not isinstance(snapshot_or_name, SnapshotData | str):
            source = snapshot_or_name
            if not callable(getattr(source, "get_snapshot_async", None)):
                raise UserError(
                    "matches_snapshot expects a SnapshotData, a snapshot name, or a source "
                    "(an object with get_snapshot_async(name), such as a client) followed "
                    f"by the name, got {type(source).__name__}: {source!r}"
                )
            if snapshot_name is None:
                raise UserError(
                    "matches_snapshot(source, ...) needs the snapshot's name: "
                    "matches_snapshot(client, 'name') or snapshot_name='name'"
                )
            snapshot_or_name = snapshot_name
        if isinstance(snapshot_or_name, SnapshotData):
            inline, by_name = snapshot_or_name, None
        else:
            inline, by_name = None, snapshot_or_name
        check = MatchesSnapshot(
            snapshot=inline,
            snapshot_name=by_name,
            options=options if options is not None else {},
            interaction=interaction,
            name=name,
            description=description,
        )
        if source is not None and store is None:
            return check.bind_source(source)
        return check.bind_store(store)

    @staticmethod
    def judge(
        veval: Any = None,
        criteria: str | Any = None,
        model: str | Any = None,
        threshold: float | None = None,
        reference_output: Any = None,
        samples: int | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> TraceJudge:
        """An LLM judge's verdict on the final input/output against ``criteria``.

        ``model`` is the judge: a ``"provider/model"`` string or a Provider (default: the
        default judge). ``threshold`` lets the score decide; ``samples`` takes a majority.
        Failures read ``Judge: <criteria> (score 0.30) — <reasoning>``. Veval's form, the
        client first (``judge(client, "criteria", ...)`` or ``judge(client,
        criteria=...)``), and ours, the criteria first (``judge("criteria", model)``, or
        ``judge(criteria=...)``), are both accepted. A ``TestClient`` given first answers
        with its judge mocks (as Veval's test SDK does) wherever the assertion runs.
        """
        from scenarist.judges.trace_judge import TraceJudge

        if isinstance(veval, str):  # our form: judge("criteria", model)
            if criteria is not None and model is not None:
                raise UserError(
                    f"TraceAssert.judge({veval!r}, {criteria!r}, {model!r}, ...): with the "
                    "criteria first, give model=, threshold=, reference_output= and samples= "
                    "by keyword"
                )
            veval, criteria, model = None, veval, model if criteria is None else criteria
        if not isinstance(criteria, str) or isinstance(threshold, str):
            raise UserError(
                "TraceAssert.judge expects the criteria first: judge('is polite'), or "
                "Veval's judge(client, 'is polite', model=...) or judge(client, "
                f"criteria='is polite'); got criteria={criteria!r}"
            )
        return TraceJudge(
            criteria=criteria,
            judge=model,
            threshold=threshold,
            reference_output=MISSING if reference_output is None else reference_output,
            samples=samples if samples is not None else 1,
            name=name,
            description=description,
        ).mocked_by(veval)

    # -- beyond Veval ------------------------------------------------------------------

    @staticmethod
    def min_steps(
        min_steps: int,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MinSteps:
        """At least ``min_steps`` steps, nested ones included."""
        return MinSteps(
            min_steps=min_steps, interaction=interaction, name=name, description=description
        )

    @staticmethod
    def max_tokens(
        max_tokens: int,
        *,
        unknown_tokens: Literal["error", "ignore"] = "error",
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MaxTokens:
        """Input plus output tokens at most ``max_tokens`` (unknown LLM usage is ERROR)."""
        return MaxTokens(
            max_tokens=max_tokens,
            unknown_tokens=unknown_tokens,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def max_llm_calls(
        max_calls: int,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> MaxLlmCalls:
        """At most ``max_calls`` steps of kind ``llm``."""
        return MaxLlmCalls(
            max_calls=max_calls, interaction=interaction, name=name, description=description
        )

    @staticmethod
    def step_duration(
        step_name: str,
        max_ms: float,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> StepDuration:
        """Every step named ``step_name`` took at most ``max_ms`` milliseconds."""
        return StepDuration(
            step_name=step_name,
            max_ms=max_ms,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def tool_not_called(
        tool_name: str,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolNotCalled:
        """No tool step named ``tool_name`` exists."""
        return ToolNotCalled(
            tool_name=tool_name, interaction=interaction, name=name, description=description
        )

    @staticmethod
    def tool_call_count(
        tool_name: str,
        count: int,
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolCallCount:
        """The tool ``tool_name`` was called exactly ``count`` times."""
        return ToolCallCount(
            tool_name=tool_name,
            count=count,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def tool_order(
        tool_names: list[str],
        mode: Literal["subsequence", "exact"] = "subsequence",
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolOrder:
        """The tools were called in this order (``"exact"``: these calls and no others)."""
        return ToolOrder(
            tool_names=tool_names,
            mode=mode,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def tool_args(
        tool_name: str,
        args: dict[str, Any | ArgPredicate],
        *,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolArgs:
        """Some call of ``tool_name`` had these arguments (values, or predicates on them)."""
        return ToolArgs(
            tool_name=tool_name,
            args=args,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def tool_trajectory(
        expected: list[Any],
        mode: Literal["strict", "unordered", "subset", "superset"] = "strict",
        *,
        ordered: bool = False,
        threshold: float = 1.0,
        judge: Any = None,
        interaction: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolTrajectory:
        """The tool calls match ``expected`` in ``mode`` with a score of at least
        ``threshold`` (1.0: exactly). Each expected call is a tool name, a
        ``(tool, {argument: matcher})`` pair or ``{"tool": ..., "args": {...}}``; matchers
        are values, ``{"regex": ...}``, ``{"approx": x, "tol": t}``, ``"*"``,
        ``{"judge": criterion}`` (asked of ``judge``) or predicates."""
        from scenarist.judges.trajectory_check import ToolTrajectory

        return ToolTrajectory(
            expected=expected,
            mode=mode,
            ordered=ordered,
            threshold=threshold,
            judge=judge,
            interaction=interaction,
            name=name,
            description=description,
        )

    @staticmethod
    def custom(
        fn: TraceAssertionFn, *, name: str | None = None, description: str | None = None
    ) -> CustomAssertion:
        """Wrap ``fn(trace) -> str | None`` (sync or async): a returned message fails."""
        return CustomAssertion(fn=fn, name=name, description=description)
