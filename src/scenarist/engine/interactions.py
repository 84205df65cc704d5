"""Interaction specs: how a scenario step produces its interactions.

:class:`InteractionSpec` is the extensible base (registered by ``kind``, like checks);
:class:`Interact` (kind ``interact``) is what ``Scenario.interact(...)`` builds. A spec's
``run`` receives an :class:`InteractionContext` that knows the current trace, the bound
target and the run options, and adds interactions to it one by one.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncGenerator, Generator
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr, field_serializer, field_validator

from scenarist.engine import _watchdog
from scenarist.engine._callables import Binding, bind
from scenarist.engine._user_code import call_in_thread
from scenarist.errors import (
    InputGenerationException,
    SerializationError,
    StepTimeoutError,
    UserError,
)
from scenarist.model._construct import (
    construct,
    private_state,
    replace,
    shared_fields_set,
    shared_private,
)
from scenarist.model._missing import MISSING, is_missing
from scenarist.model._registry import KindRegistered
from scenarist.model.trace import Interaction, InteractionLog, Span, Trace
from scenarist.tracing.http.capture import capture_llm_calls
from scenarist.tracing.recorder import RunRecorder

if TYPE_CHECKING:
    import anyio

__all__ = [
    "Interact",
    "InteractionContext",
    "InteractionSpec",
    "ThreadBudget",
    "interact_spec",
    "recorded",
]

InputMode = Literal["static", "callable", "generator", "async_generator", "iterator"]

NO_TARGET_MESSAGE = (
    "Interaction outputs are not provided and no target was bound. "
    "Pass outputs= to .interact(...), or give a target: Scenario(target=...), "
    ".with_target(...), Suite(target=...) or .run(target=...); in a scenario file, "
    "'target: module:function' (or scenarist run --target module:function)."
)


class ThreadBudget:
    """How many sync calls may run in worker threads at once (the limiter is made on first use).

    Parallel suites run sync user code in threads so one blocking call does not stall the
    event loop; runs whose code is all ``async`` never create the limiter at all.
    """

    __slots__ = ("_limiter", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            import anyio

            self._limiter = anyio.CapacityLimiter(self.size)
        return self._limiter


class InteractionContext:
    """The state a spec works with while a step runs: the trace so far and how to call code.

    ``add`` appends an interaction (the trace is immutable; ``trace`` is replaced).
    ``call`` runs a bound user callable with the run's rules: awaited if async, within
    ``timeout_s``. A sync callable runs in a worker thread when the run has a
    :class:`ThreadBudget` (parallel suites), and in a daemon thread whenever ``timeout_s``
    is set, so the deadline holds for a call that blocks (see :mod:`scenarist.engine._user_code`).
    """

    __slots__ = (
        "_annotations",
        "_log",
        "_trace",
        "empty_generators",
        "target",
        "threads",
        "timeout_s",
    )

    def __init__(
        self,
        trace: Trace[Any, Any],
        target: Binding | None = None,
        *,
        timeout_s: float | None = None,
        threads: ThreadBudget | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> None:
        self._trace = trace
        self._log: InteractionLog[Interaction[Any, Any]] | None = None
        # Annotations for ``trace``, set when the trace is first built (one copy of the
        # trace per run instead of two).
        self._annotations = annotations
        self.target = target
        self.timeout_s = timeout_s
        self.threads = threads
        # The input generators of the running step that yielded no input (their labels):
        # ``None`` until one does (the runner reads and resets it per step).
        self.empty_generators: list[str] | None = None

    @property
    def trace(self) -> Trace[Any, Any]:
        """The trace so far (built on demand: appending does not copy the trace object)."""
        if self._annotations is not None:
            interactions = self._log if self._log is not None else self._trace.interactions
            self._trace = replace(
                self._trace, interactions=interactions, annotations=self._annotations
            )
            self._annotations = self._log = None
        elif self._log is not None:
            self._trace = replace(self._trace, interactions=self._log)
            self._log = None
        return self._trace

    @trace.setter
    def trace(self, trace: Trace[Any, Any]) -> None:
        self._trace = trace
        self._log = self._annotations = None

    def add(self, interaction: Interaction[Any, Any]) -> None:
        log = self._log if self._log is not None else self._trace.interactions
        self._log = log.appended(interaction)

    def record(self, values: list[Any], metadata: list[Any] | None) -> None:
        """Add the interactions of static specs (:meth:`Interact.record` each), built
        when first read: ``values`` holds each one's inputs then outputs, ``metadata``
        (``None`` when none has any) a copy or ``None`` for each; one clock read for all."""
        log = self._log if self._log is not None else self._trace.interactions
        self._log = log.recorded(datetime.now(UTC), values, metadata)

    async def call(self, binding: Binding, inputs: Any = None) -> Any:
        """Call ``binding`` with ``inputs`` and the trace, honouring the run's options."""
        trace = self.trace if binding.wants_trace else None
        if self.timeout_s is None:
            if binding.is_async:  # the common case, one frame: awaited on the event loop
                return await binding.invoke(trace, inputs)
            return await self._call(binding, trace, inputs)
        return await self._timed_call(binding, trace, inputs, self.timeout_s)

    async def _timed_call(self, binding: Binding, trace: Any, inputs: Any, timeout_s: float) -> Any:
        """The call within ``timeout_s``: cancelled at the deadline, and recorded as timed
        out when it comes back after it (async code that blocked the event loop cannot be
        cancelled; see :mod:`scenarist.engine._watchdog`)."""
        import anyio

        name = getattr(binding.fn, "__qualname__", "the call")
        watch = _watchdog.watch(name, timeout_s) if binding.is_async else None
        started = time.monotonic()
        try:
            with anyio.fail_after(timeout_s):
                value = await self._call(binding, trace, inputs)
        except TimeoutError:
            raise StepTimeoutError(f"{name} did not finish within timeout_s={timeout_s}") from None
        except Exception as exc:
            if time.monotonic() - started <= timeout_s:
                raise
            raise _late(name, timeout_s, time.monotonic() - started, watch) from exc
        finally:
            if watch is not None:
                watch.done = True
        elapsed = time.monotonic() - started
        if elapsed > timeout_s:  # came back after the deadline, before its cancellation
            raise _late(name, timeout_s, elapsed, watch)
        return value

    async def _call(self, binding: Binding, trace: Any, inputs: Any) -> Any:
        if binding.is_async:
            result = binding.invoke(trace, inputs)
        elif self.timeout_s is not None:  # a deadline must hold even for a blocking call
            limiter = self.threads.limiter if self.threads is not None else None
            result = await call_in_thread(partial(binding.invoke, trace, inputs), limiter)
        elif self.threads is not None:
            import anyio.to_thread

            result = await anyio.to_thread.run_sync(
                binding.invoke, trace, inputs, limiter=self.threads.limiter
            )
        else:
            result = binding.invoke(trace, inputs)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def call_target(self, inputs: Any) -> Any:
        if self.target is None:
            raise UserError(NO_TARGET_MESSAGE)
        return await self.call(self.target, inputs)


def _late(name: str, timeout_s: float, elapsed: float, watch: Any) -> StepTimeoutError:
    """The timeout of a call that came back after its deadline, with where it blocked (a
    sync call in its thread, which has no watch, only came back before its cancellation)."""
    if watch is None:
        return StepTimeoutError(f"{name} did not finish within timeout_s={timeout_s}")
    where = f" in {watch.blocked_in}" if watch.blocked_in else ""
    return StepTimeoutError(
        f"{name} did not finish within timeout_s={timeout_s}: it came back after "
        f"{elapsed:.1f} s because the event loop was blocked past the deadline{where}, so it "
        "could not be cancelled; in async code, await (asyncio.sleep, asyncio.to_thread) "
        "instead of blocking, or make the target a plain def, which runs in a thread"
    )


class InteractionSpec(KindRegistered):
    """Base of interaction specs: subclass, implement one of two protocols, register by ``kind``.

    * ``async def run(self, context)``: add interactions with ``context.add`` and call
      code through ``context.call`` (timeouts, threads and the run's target apply);
    * ``async def generate(self, trace)`` (giskard-checks' protocol): an async generator
      that yields :class:`Interaction` objects and receives the updated trace after each.

    Whichever one a subclass implements, the other is derived from it.
    """

    _family = "interaction spec"

    async def run(self, context: InteractionContext) -> None:
        """Produce this spec's interactions, adding each one with ``context.add``."""
        if type(self).generate is InteractionSpec.generate:
            raise NotImplementedError(
                f"{type(self).__name__} must implement run(context) or generate(trace)"
            )
        generator = self.generate(context.trace)
        try:
            interaction = await generator.__anext__()
            while True:
                if not isinstance(interaction, Interaction):
                    raise TypeError(
                        f"{type(self).__name__}.generate yielded "
                        f"{type(interaction).__name__}; it must yield Interaction objects"
                    )
                context.add(interaction)
                interaction = await generator.asend(context.trace)
        except StopAsyncIteration:
            pass
        finally:
            await generator.aclose()

    async def generate(
        self, trace: Trace[Any, Any]
    ) -> AsyncGenerator[Interaction[Any, Any], Trace[Any, Any]]:
        """Yield this spec's interactions given ``trace`` (giskard-checks' protocol).

        Derived from ``run``: the spec runs against ``trace`` with no bound target (so a
        spec that needs one raises), then its interactions are yielded in order.
        """
        if type(self).run is InteractionSpec.run:
            raise NotImplementedError(
                f"{type(self).__name__} must implement run(context) or generate(trace)"
            )
        context = InteractionContext(trace)
        await self.run(context)
        for interaction in context.trace.interactions[len(trace.interactions) :]:
            yield interaction

    @property
    def needs_target(self) -> bool:
        """Whether this spec calls the run's target (it has no outputs of its own)."""
        return False


def _is_iterator(value: Any) -> bool:
    """A generator object (sync or async): giskard-checks iterates one given as inputs, or
    returned by an inputs callable, instead of taking it as the input."""
    return isinstance(value, (Generator, AsyncGenerator))


def _input_mode(inputs: Any) -> InputMode:
    if not callable(inputs) or isinstance(inputs, type):
        return "iterator" if _is_iterator(inputs) else "static"
    call = inputs if inspect.isfunction(inputs) or inspect.ismethod(inputs) else inputs.__call__
    if inspect.isasyncgenfunction(call):
        return "async_generator"
    if inspect.isgeneratorfunction(call):
        return "generator"
    return "callable"


# Kinds defined in modules loaded on first use (keeps `import scenarist` light).
InteractionSpec.register_lazy({"with_spy": "scenarist.engine.spy"})


@InteractionSpec.register("interact")
class Interact(InteractionSpec):
    """One or more exchanges: inputs (static, computed, or generated) and their outputs.

    ``inputs`` is a value, a callable of the trace, a (sync or async) generator
    function that yields several inputs and receives the updated trace after each one, or
    an input generator object (:mod:`scenarist.generators`: ``UserSimulator``...), which
    is such an async generator when called and dumps as ``{"kind": ...}``.
    ``outputs`` is a value, a callable of ``inputs`` / ``(trace, inputs)``, or absent
    (``MISSING``): then the run's target answers. See :mod:`scenarist.engine._callables`.
    """

    inputs: Any
    outputs: Any = Field(default=MISSING, exclude_if=is_missing)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # beyond giskard-checks; left out of dumps at its default, so giskard loads our files
    min_inputs: int = Field(default=0, ge=0, exclude_if=lambda v: v == 0)
    """The fewest inputs a generator must yield, else the step ERRORs (default 0: one that
    yields none adds no interaction, as in giskard-checks, and the result is flagged
    ``vacuous``). ``min_inputs=1`` is the strict form."""

    _input_mode: InputMode = PrivateAttr("static")
    _inputs_binding: Binding | None = PrivateAttr(None)
    _outputs_binding: Binding | None = PrivateAttr(None)
    _recorded: bool = PrivateAttr(False)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._input_mode = _input_mode(self.inputs)
        if self._input_mode == "static" and self.min_inputs > 1:
            raise ValueError(
                f"min_inputs={self.min_inputs} but inputs is a single value, which gives one "
                "input: pass a generator as inputs, or lower min_inputs"
            )
        if self._input_mode not in ("static", "iterator"):
            self._inputs_binding = bind(self.inputs, "inputs")
        if callable(self.outputs) and not isinstance(self.outputs, type):
            self._outputs_binding = bind(self.outputs, "outputs")
        # Static inputs and outputs: nothing runs, the interaction is only recorded.
        self._recorded = (
            self._input_mode == "static"
            and self._outputs_binding is None
            and self.outputs is not MISSING
        )

    @field_validator("inputs", mode="before")
    @classmethod
    def _input_generator_from_dict(cls, value: Any) -> Any:
        """``{"kind": "user_simulator", ...}`` (a dumped input generator) loads back as one."""
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            from scenarist.generators import InputGenerator

            if value["kind"] in InputGenerator.kinds():
                return InputGenerator.model_validate(value)
        return value

    @field_serializer("inputs", "outputs")
    def _no_callables(self, value: Any) -> Any:
        if isinstance(value, KindRegistered):  # an input generator: a model, dumped by kind
            return value
        if (callable(value) and not isinstance(value, type)) or _is_iterator(value):
            raise SerializationError(
                f"cannot write {getattr(value, '__name__', value)!r} to JSON: interaction "
                "inputs and outputs that are functions or generators exist only in code; use "
                "static values "
                "(or a target) in scenarios you want to save"
            )
        return value

    @property
    def needs_target(self) -> bool:
        return is_missing(self.outputs)

    async def run(self, context: InteractionContext) -> None:
        private = private_state(self)
        mode, binding = private["_input_mode"], private["_inputs_binding"]
        if mode == "static":
            await self._exchange(context, self.inputs)
            return
        before = len(context.trace.interactions)
        if mode == "callable":
            assert binding is not None
            value = await context.call(binding)
            if not _is_iterator(value):
                await self._exchange(context, value)
                return
            await self._drive(context, value)  # it returned a generator: giskard iterates it
        elif mode == "iterator":
            await self._drive(context, self.inputs)
        elif mode == "generator":
            assert binding is not None
            await self._drive(context, binding.call(trace=context.trace, input_type=None))
        elif getattr(type(self.inputs).__call__, "simulated_turns", False):
            # an LLM input generator: each turn's whole answer goes in its metadata
            turns = self.inputs.simulated_turns(context.trace, None)
            try:
                output = await turns.__anext__()
                while True:
                    await self._exchange(context, output.message, {"simulator_output": output})
                    output = await turns.asend(context.trace)
            except StopAsyncIteration:
                pass
            finally:
                await turns.aclose()
        else:
            assert binding is not None
            await self._drive(context, binding.call(trace=context.trace, input_type=None))
        self._check_yielded(context, len(context.trace.interactions) - before)

    async def _drive(self, context: InteractionContext, generator: Any) -> None:
        """One exchange per input of a (sync or async) generator object, which receives the
        updated trace after each one."""
        if isinstance(generator, Generator):
            try:
                value = next(generator)
                while True:
                    await self._exchange(context, value)
                    value = generator.send(context.trace)
            except StopIteration:
                pass
            finally:
                generator.close()
            return
        try:
            value = await generator.__anext__()
            while True:
                await self._exchange(context, value)
                value = await generator.asend(context.trace)
        except StopAsyncIteration:
            pass
        finally:
            await generator.aclose()

    def _check_yielded(self, context: InteractionContext, count: int) -> None:
        """A generator that yielded no input adds no interaction, as in giskard-checks, and
        is noted on the context (the step's result names it, the scenario's is flagged
        ``vacuous``); fewer inputs than ``min_inputs`` is the step's ERROR."""
        if count >= self.min_inputs and count:
            return
        label = self._label()
        if count < self.min_inputs:
            raise InputGenerationException(
                f"the input generator {label!r} yielded {count} input(s), fewer than "
                f"min_inputs={self.min_inputs}, so this step did not test what it should; "
                "make it yield more, or lower min_inputs"
            )
        if context.empty_generators is None:
            context.empty_generators = [label]
        else:
            context.empty_generators.append(label)

    def _label(self) -> str:
        """How a message names this spec's inputs: a generator's kind, else its name."""
        inputs = self.inputs
        kind = getattr(inputs, "kind", None)
        name = kind if isinstance(kind, str) else getattr(inputs, "__name__", None)
        return str(name or type(inputs).__name__)

    def record(self, started_at: datetime) -> Interaction[Any, Any]:
        """The interaction of a spec whose inputs and outputs are both given (see
        :func:`recorded`), started at ``started_at``."""
        return construct(
            Interaction,
            {
                "inputs": self.inputs,
                "outputs": self.outputs,
                "metadata": dict(self.metadata) if self.metadata else {},
                "spans": (),
                "started_at": started_at,
                "duration_ms": 0.0,
                "error": None,
            },
        )

    async def _exchange(
        self, context: InteractionContext, inputs: Any, extra: dict[str, Any] | None = None
    ) -> None:
        """One exchange; ``extra`` joins the spec's metadata (a simulated turn's output)."""
        started_at = datetime.now(UTC)
        outputs = self.outputs
        outputs_binding = private_state(self)["_outputs_binding"]
        spans: tuple[Span, ...] = ()
        duration_ms = 0.0  # static outputs: nothing ran, so no clock is read
        if outputs_binding is not None or outputs is MISSING:
            t0 = time.perf_counter()
            # The system answers: trace what happens inside (steps, LLM calls) as spans.
            with RunRecorder("", started=(started_at, t0)) as recorder, capture_llm_calls():
                if outputs_binding is not None:
                    outputs = await context.call(outputs_binding, inputs)
                else:
                    outputs = await context.call_target(inputs)
            spans = tuple(recorder.roots)
            duration_ms = (time.perf_counter() - t0) * 1000
        if isinstance(outputs, Interaction):
            if spans and not outputs.spans:
                outputs = replace(outputs, spans=spans)
            context.add(outputs)
            return
        context.add(
            construct(
                Interaction,
                {
                    "inputs": inputs,
                    "outputs": outputs,
                    "metadata": {**self.metadata, **extra} if extra else dict(self.metadata),
                    "spans": spans,
                    "started_at": started_at,
                    "duration_ms": duration_ms,
                    "error": None,
                },
            )
        )


#: The private state of every :func:`interact_spec` with static inputs (the same for all of
#: them, so shared rather than one dict per spec: a generated suite holds many thousands).
#: A spec that changes an attribute gets its own copy first (``_construct.own_fields_set``).
_STATIC_RECORDED: dict[str, Any] = shared_private(
    {"_input_mode": "static", "_inputs_binding": None, "_outputs_binding": None, "_recorded": True}
)
_STATIC_FOR_TARGET: dict[str, Any] = shared_private({**_STATIC_RECORDED, "_recorded": False})


def interact_spec(
    inputs: Any,
    outputs: Any = MISSING,
    metadata: dict[str, Any] | None = None,
    min_inputs: int = 0,
) -> Interact:
    """``Interact(inputs=..., outputs=..., metadata=..., min_inputs=...)``, what
    ``Scenario.interact`` builds.

    Plain values (neither callable nor a generator object nor a dumped input generator,
    metadata a ``dict`` with string keys) need no validation: the spec is built directly,
    with the fields set and private state every such spec shares, which halves what a
    definition costs (a 100,000-scenario suite holds half a million of them). The object
    is the same as the validated one (fields, private state, dumps); anything else is
    validated as before, with the same errors.
    """
    if (
        not callable(inputs)
        and min_inputs == 0
        and not (isinstance(inputs, dict) and "kind" in inputs)
        and not callable(outputs)
        and (metadata is None or (type(metadata) is dict and all(type(k) is str for k in metadata)))
        and (type(inputs) in _PLAIN or not _is_iterator(inputs))
    ):
        return construct(
            Interact,
            {
                "inputs": inputs,
                "outputs": outputs,
                "metadata": dict(metadata) if metadata else {},
                "min_inputs": 0,
            },
            _STATIC_FOR_TARGET if outputs is MISSING else _STATIC_RECORDED,
            _GIVEN,
        )
    if min_inputs:
        return Interact(
            inputs=inputs, outputs=outputs, metadata=metadata or {}, min_inputs=min_inputs
        )
    return Interact(inputs=inputs, outputs=outputs, metadata=metadata or {})


# The fields a plain spec was given, as the validated one's (``min_inputs`` left at its default).
_GIVEN = shared_fields_set({"inputs", "outputs", "metadata"})
# Input types that are never generator objects: the fast path skips the ABC check for them.
_PLAIN = frozenset({str, int, float, bool, dict, list, tuple, type(None), bytes})


def recorded(spec: InteractionSpec) -> Interact | None:
    """``spec`` if nothing has to run to produce its interaction, else ``None``.

    A plain :class:`Interact` with static inputs and outputs (the common case in test
    suites): the runner records it with :meth:`Interact.record` instead of awaiting
    ``run``, which saves two coroutines and a clock read per interaction. Any other spec
    (a subclass included) is awaited.
    """
    if type(spec) is Interact and private_state(spec)["_recorded"]:
        return spec
    return None
