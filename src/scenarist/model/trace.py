"""The trace model: what happened during a scenario run.

A :class:`Trace` is the ordered history of :class:`Interaction` objects (one exchange
with the system under test each). Each interaction carries the :class:`Span` tree of what
happened inside the system while it answered: LLM calls, tool calls, retrievals, custom
steps. One model serves conversation-level checks (giskard style, ``trace.last.outputs``)
and step-level assertions (Veval style, ``trace.tool_calls``).

Traces are immutable. :meth:`Trace.with_interaction` returns a new trace; the new and the
old one share their backing storage, so a run that appends ``n`` interactions does ``O(n)``
work in total rather than copying the history at every turn.
"""

from __future__ import annotations

import typing
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    computed_field,
    field_validator,
)
from pydantic_core import core_schema

from scenarist.model._construct import constructor, replace
from scenarist.model._missing import MISSING
from scenarist.model._positional import Positional
from scenarist.model._ready import Ready
from scenarist.model.paths import GENERAL, NO_LAST, register_plain_trace

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = [
    "MAX_SPAN_DEPTH",
    "Interaction",
    "InteractionLog",
    "RecordedInteractions",
    "Span",
    "SpanError",
    "Trace",
    "first_too_deep",
    "trace_type_from_annotations",
]

InputType = TypeVar("InputType")
OutputType = TypeVar("OutputType")
T = TypeVar("T")


class SpanError(str):
    """Why a span failed: the exception's message, and its type name in :attr:`type`.

    Veval's ``step.error`` is the message itself, a ``str``, and ported code uses it as
    one: ``error == "timeout"``, ``"timeout" in error``, ``error.lower()``,
    ``json.dumps({"error": error})``. A ``SpanError`` *is* that string (its message),
    and keeps the exception's type beside it. Two errors are equal when message and
    type are; an error and a plain string when the message is. In our models it is
    serialised as ``{"message", "type"}``, the form run logs and stores always held, and
    validated from that, from a plain string (a Veval ``error``), or from an instance.
    """

    type: str | None

    def __new__(cls, message: str = "", type: str | None = None) -> SpanError:
        if not isinstance(message, str):
            raise TypeError(f"SpanError message must be a string, got {message!r}")
        if type is not None and not isinstance(type, str):
            raise TypeError(f"SpanError type must be a string or None, got {type!r}")
        error = super().__new__(cls, message)
        object.__setattr__(error, "type", type)
        return error

    @property
    def message(self) -> str:
        """The exception's message (the string itself, as a plain ``str``)."""
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"SpanError(message={self.message!r}, type={self.type!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"SpanError is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpanError):
            return str.__eq__(self, other) and self.type == other.type
        if isinstance(other, str):
            return str.__eq__(self, other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:  # equal errors, and an error and its message, hash alike
        return str.__hash__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (SpanError, (self.message, self.type))

    def __copy__(self) -> SpanError:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SpanError:
        return self

    def to_dict(self) -> dict[str, Any]:
        """The serialised form, ``{"message": ..., "type": ...}``."""
        return {"message": self.message, "type": self.type}

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> SpanError:
        return cls(data["message"], data.get("type"))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        fields = core_schema.typed_dict_schema(
            {
                "message": core_schema.typed_dict_field(core_schema.str_schema()),
                "type": core_schema.typed_dict_field(
                    core_schema.nullable_schema(core_schema.str_schema()), required=False
                ),
            },
            extra_behavior="forbid",
        )
        from_dict = core_schema.no_info_after_validator_function(cls._from_dict, fields)
        from_text = core_schema.no_info_after_validator_function(cls, core_schema.str_schema())
        choices: list[core_schema.CoreSchema | tuple[core_schema.CoreSchema, str]]
        choices = [from_dict, from_text]
        return core_schema.json_or_python_schema(
            json_schema=core_schema.union_schema(choices, mode="left_to_right"),
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), *choices], mode="left_to_right"
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                cls.to_dict, return_schema=fields
            ),
        )


class Span(Positional):
    """One step inside the system under test (Veval calls it a step).

    ``kind`` is one of ``"llm"``, ``"tool"``, ``"retrieval"``, ``"agent"``, ``"custom"``,
    or any other string. Spans nest: ``children`` holds the spans opened inside this one.

    Veval's ``StepData`` constructor works as is, by keyword or by position in its field
    order: ``Span(step_id="s1", name="classify", type="llm", status="success")``
    (``step_id``, ``parent_step_id``, ``type``, ``completed_at`` are Veval's names of
    ``span_id``, ``parent_id``, ``kind``, ``ended_at``; a string ``error`` is read as a
    :class:`SpanError`). A ``status`` left out is ``""``, as in Veval's ``StepData``
    (the spans our recorder and importers build always say how they ended). Veval's
    ``Step`` builder methods are here too: :meth:`create_step`, :meth:`complete`,
    :meth:`fail`.
    """

    # Built on first use, like the other models: building its schema at import also ran
    # pydantic's plugin discovery (a scan of every installed distribution's entry points).
    model_config = ConfigDict(defer_build=True)
    __positional__ = (
        "step_id",
        "parent_step_id",
        "name",
        "type",
        "input",
        "output",
        "status",
        "error",
        "started_at",
        "completed_at",
        "duration_ms",
        "cost_usd",
        "tokens_in",
        "tokens_out",
        "model",
        "metadata",
    )

    span_id: str = Field(default="", validation_alias=AliasChoices("span_id", "step_id"))
    parent_id: str | None = Field(
        default=None, validation_alias=AliasChoices("parent_id", "parent_step_id")
    )
    name: str = ""
    kind: str = Field(default="custom", validation_alias=AliasChoices("kind", "type"))
    input: Any = None
    output: Any = None
    status: str = ""
    error: SpanError | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = Field(
        default=None, validation_alias=AliasChoices("ended_at", "completed_at")
    )
    duration_ms: float | None = None
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    children: list[Span] = Field(default_factory=list)

    def walk(self) -> Iterator[Span]:
        """This span, then its descendants, in pre-order."""
        yield self
        for child in self.children:
            yield from child.walk()

    # -- Veval's StepData names ----------------------------------------------------------

    @property
    def step_id(self) -> str:
        """Veval's name for :attr:`span_id`."""
        return self.span_id

    @property
    def parent_step_id(self) -> str | None:
        """Veval's name for :attr:`parent_id`."""
        return self.parent_id

    @property
    def type(self) -> str:
        """Veval's name for :attr:`kind`."""
        return self.kind

    @property
    def completed_at(self) -> datetime | None:
        """Veval's name for :attr:`ended_at`."""
        return self.ended_at

    def set_metadata(self, key: str, value: Any) -> None:
        """Attach ``key: value`` to this span's metadata (Veval's ``Step.set_metadata``)."""
        if not isinstance(key, str) or not key:
            raise TypeError(f"set_metadata key must be a non-empty string, got {key!r}")
        self.metadata[key] = value

    # -- Veval's Step builder ------------------------------------------------------------

    def create_step(self, name: str) -> Span:
        """A new running child step named ``name``, started now (Veval's ``Step.create_step``)."""
        if not isinstance(name, str):
            raise TypeError(f"create_step(name): name must be a string, got {name!r}")
        child = Span(
            span_id=str(uuid.uuid4()),
            parent_id=self.span_id,
            name=name,
            status="running",
            started_at=datetime.now(UTC),
        )
        self.children.append(child)
        return child

    def complete(self, output: Any = None) -> None:
        """End this step successfully with ``output`` (Veval's ``Step.complete``)."""
        self.output = output
        self.status = "success"
        self._end()

    def fail(self, error: str) -> None:
        """End this step with ``error``, its message (Veval's ``Step.fail``)."""
        self.error = error if isinstance(error, SpanError) else SpanError(str(error))
        self.status = "error"
        self._end()

    def _end(self) -> None:
        self.ended_at = datetime.now(UTC)
        if self.started_at is not None:
            # whole milliseconds, as Veval's step builder counts them
            elapsed = (self.ended_at - self.started_at).total_seconds()
            self.duration_ms = int(elapsed * 1000)


class Interaction(BaseModel, Generic[InputType, OutputType]):
    """One exchange with the system under test: what went in, what came out.

    ``spans`` are what happened inside the system while it answered. ``error`` is set
    when the system itself failed (an agent run that raised, inside or outside any span),
    so trace assertions can see failures that no span recorded.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, arbitrary_types_allowed=True)

    inputs: InputType
    outputs: OutputType
    metadata: dict[str, Any] = Field(default_factory=dict)
    spans: Sequence[Span] = ()
    started_at: datetime | None = None
    duration_ms: float | None = None
    error: SpanError | None = None

    @field_validator("spans", mode="after")
    @classmethod
    def _freeze_spans(cls, spans: Sequence[Span]) -> tuple[Span, ...]:
        # A tuple: interactions are immutable, and an empty tuple costs no allocation.
        return tuple(spans)

    def __eq__(self, other: object) -> bool:
        """Same class and same content; what was observed while answering (``spans``,
        ``started_at``, ``duration_ms``) is not compared, so an interaction from a run's
        final trace equals the one built by hand (as in giskard-checks, which has none of
        these fields)."""
        if not isinstance(other, Interaction):
            return NotImplemented
        if self is other:
            return True
        if _origin(self) is not _origin(other):
            return False
        return (
            all(
                getattr(self, name, _MISSING) == getattr(other, name, _MISSING)
                for name in type(self).model_fields.keys() | type(other).model_fields.keys()
                if name not in _OBSERVED
            )
            and self.model_extra == other.model_extra
        )

    def __hash__(self) -> int:
        # Consistent with ``__eq__``; unhashable inputs or outputs raise, as before.
        return hash((_origin(self), self.inputs, self.outputs))


class RecordedInteractions(tuple):  # type: ignore[type-arg]
    """Interactions of static inputs and outputs, kept in a log until someone reads them.

    A step that only records values (``.interact("q", "a")``, nothing runs) would build
    an :class:`Interaction` per turn per run, most of which nobody ever reads (checks read
    ``trace.last``): a suite keeping 100,000 results holds half a million of them. The log
    keeps one record per run of such turns instead (what the interactions will hold,
    captured when they were recorded) and builds each interaction the first time it is
    read, in place, so every later read (and every view sharing the log) gets that same
    object. Never seen outside :class:`InteractionLog`.

    The record is a tuple, ``(first, started_at, metadata, inputs, outputs, inputs,
    outputs, ...)``: one object for all the turns (five small records and their pointers
    cost 200 bytes more per result). It fills the log's slots ``first`` to ``first + n -
    1`` (the shared list only ever grows, so those positions never move); ``metadata`` is
    ``None`` when no turn has any, else one copy (or ``None``) per turn.
    """

    __slots__ = ()

    def build(self, index: int) -> Interaction[Any, Any]:
        """The interaction at ``index`` of the log holding this record."""
        turn = index - self[0]
        metadata = self[2]
        copied = None if metadata is None else metadata[turn]
        return _new_interaction(
            {
                "inputs": self[3 + 2 * turn],
                "outputs": self[4 + 2 * turn],
                "metadata": copied if copied is not None else {},
                "spans": (),
                "started_at": self[1],
                "duration_ms": 0.0,
                "error": None,
            }
        )

    def outputs_at(self, index: int) -> Any:
        """The outputs of the interaction at ``index``, without building it."""
        return self[4 + 2 * (index - self[0])]


_new_interaction = constructor(Interaction)

#: Interaction fields recorded while the system answered; left out of ``==``.
_OBSERVED = frozenset({"spans", "started_at", "duration_ms"})
_MISSING = object()


def _origin(model: BaseModel) -> type:
    return model.__pydantic_generic_metadata__["origin"] or type(model)


class InteractionLog(Sequence[T]):
    """An immutable view of the first ``n`` items of a list that only ever grows.

    Appending to the newest view extends the shared list in place (amortised ``O(1)``);
    appending to an older view copies its prefix first, so no view ever changes.
    Compares equal to any sequence with the same items, and serialises as a list.
    Recorded interactions (:class:`RecordedInteractions`) are built on first read.

    A log of a single record (a run whose first step only records static turns, the
    common case) keeps the record itself instead of a list holding it ``n`` times, and
    makes that list when it is first read or appended to: a kept result holds 112 bytes
    fewer. Only that view holds the record, so the list it makes is the one every later
    view shares.
    """

    __slots__ = ("_items", "_n")

    def __init__(self, items: Sequence[T] = (), /) -> None:
        # The shared list, or a single RecordedInteractions record (see above).
        self._items: Any = list(items)
        self._n = len(self._items)

    @classmethod
    def _view(cls, items: list[T] | RecordedInteractions, n: int) -> InteractionLog[T]:
        view: InteractionLog[T] = cls.__new__(cls)
        view._items = items
        view._n = n
        return view

    def _list(self) -> list[Any]:
        """The shared list (made now from a single record, see the class docstring)."""
        items = self._items
        if type(items) is RecordedInteractions:
            items = self._items = [items] * self._n
        return items  # type: ignore[no-any-return]

    def _item(self, index: int) -> T:
        items = self._items
        if type(items) is not list:
            items = self._list()
        item = items[index]
        if type(item) is RecordedInteractions:
            item = items[index] = item.build(index)
        return item  # type: ignore[no-any-return]

    def _built(self) -> list[T]:
        """Every item of the shared list built (a prefix copy must share the objects)."""
        items = self._list()
        for i, item in enumerate(items):
            if type(item) is RecordedInteractions:
                items[i] = item.build(i)
        return items

    def _growable(self) -> list[T]:
        """The list to append to: the shared one when this is its newest view, else a
        copy of this view's prefix (an empty view starts a list of its own: the empty
        trace every run starts from is shared, so its list must never grow)."""
        n = self._n
        if not n:
            return []
        items = self._list()
        return items if len(items) == n else self._built()[:n]

    def appended(self, item: T) -> InteractionLog[T]:
        """A new log with ``item`` at the end; this one is unchanged."""
        items = self._growable()
        items.append(item)
        return InteractionLog._view(items, self._n + 1)

    def recorded(
        self, started_at: datetime, values: list[Any], metadata: list[Any] | None
    ) -> InteractionLog[T]:
        """A new log with the interactions of static specs at the end, built when read
        (see :class:`RecordedInteractions`); this one is unchanged.

        ``values`` holds each turn's inputs then outputs; ``metadata`` is ``None`` when no
        turn has any, else a copy (or ``None``) per turn, made by the caller.
        """
        n = self._n
        frozen = None if metadata is None else tuple(metadata)
        record = RecordedInteractions((n, started_at, frozen, *values))
        turns = len(values) // 2
        if not n:  # the common case: a run's first step (the record alone, see above)
            return InteractionLog._view(record, turns)
        items: list[Any] = self._growable()
        items += [record] * turns
        return InteractionLog._view(items, n + turns)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return self._built()[: self._n][index]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("list index out of range")  # a list's message, as in giskard
        return self._item(index)

    def __iter__(self) -> Iterator[T]:
        for i in range(self._n):
            yield self._item(i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, InteractionLog | list | tuple):
            return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=False))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._built()[: self._n])

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and pickles hold built interactions only.
        return (InteractionLog, (self._built()[: self._n],))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        args = getattr(source, "__args__", None)
        item_type = args[0] if args else Interaction
        from_list = core_schema.no_info_after_validator_function(
            cls,
            handler.generate_schema(list[item_type]),  # type: ignore[valid-type]
        )
        return core_schema.union_schema(
            [core_schema.is_instance_schema(cls), from_list],
            serialization=core_schema.plain_serializer_function_ser_schema(
                list,
                return_schema=handler.generate_schema(list[item_type]),  # type: ignore[valid-type]
            ),
        )


class Trace(Ready, BaseModel, Generic[InputType, OutputType]):
    """The history of a scenario run: its interactions and free-form annotations.

    Subclass it to add computed properties that checks can address by path
    (``trace.transcript``); pass the subclass as ``Scenario(trace_type=...)``.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, arbitrary_types_allowed=True)

    interactions: InteractionLog[Interaction[InputType, OutputType]] = Field(
        default_factory=InteractionLog
    )
    annotations: dict[str, Any] = Field(default_factory=dict)

    # A computed field, as in giskard-checks: dumps carry ``last`` (the run log too, where
    # readers ignore it on load; docs/design/run-log.md). Reading it costs what a property
    # does: pydantic only calls it when dumping.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def last(self) -> Interaction[InputType, OutputType] | None:
        """The most recent interaction, or ``None`` before the first one."""
        log = self.interactions
        if type(log) is InteractionLog:  # read the view directly (checks ask for it often)
            n = log._n
            return log._item(n - 1) if n else None
        return log[len(log) - 1] if len(log) else None

    def with_interaction(self, interaction: Interaction[InputType, OutputType]) -> Self:
        """A new trace with ``interaction`` appended; this one is unchanged.

        The result is returned directly and is also awaitable (``await
        trace.with_interaction(i)``, as in giskard-checks). To extend a trace with what an
        interaction spec generates, use ``await trace.with_interactions(spec)``.
        """
        if not isinstance(interaction, Interaction):
            raise TypeError(
                f"with_interaction takes an Interaction, got {type(interaction).__name__}; "
                "for an interaction spec use `await trace.with_interactions(spec)`"
            )
        return replace(self, interactions=self.interactions.appended(interaction))

    async def with_interactions(self, *interactions: Any) -> Self:
        """A new trace extended with each interaction, or with what each spec generates.

        Arguments are :class:`Interaction` objects or interaction specs (anything with an
        async ``generate(trace)``, such as ``Interact(...)``), appended in order.
        """
        trace = self
        for item in interactions:
            if isinstance(item, Interaction):
                trace = trace.with_interaction(item)
            else:
                trace = await trace._generated(item)
        return trace

    async def _generated(self, spec: Any) -> Self:
        from scenarist.errors import InteractionGenerationError

        trace = self
        generator = spec.generate(trace)
        try:
            interaction = await generator.__anext__()
            while True:
                trace = trace.with_interaction(interaction)
                interaction = await generator.asend(trace)
        except StopAsyncIteration:
            return trace
        except InteractionGenerationError:
            raise
        except Exception as exc:
            raise InteractionGenerationError(
                f"{type(spec).__name__} failed after {len(trace.interactions)} interaction(s): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        finally:
            await generator.aclose()

    @classmethod
    async def from_interactions(cls, *interactions: Any) -> Self:
        """A new trace of this type holding ``interactions`` (and what any spec generates)."""
        return await cls().with_interactions(*interactions)

    @classmethod
    def for_target(cls, target: Any) -> Trace[Any, Any]:
        """An empty trace of the type ``target``'s annotations ask for (else of this class)."""
        no_target = target is MISSING or target is None
        found = None if no_target else trace_type_from_annotations(target)
        return found() if found is not None else cls()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Rich rendering, as giskard-checks' ``Trace``: a rule, the inputs and the outputs
        per interaction. Reports render the final trace through this method, so a subclass
        that overrides it (a chat transcript, say) is shown its way."""
        from scenarist.model.results import report  # the one way up to the renderer

        yield from report("render")(self)

    def __hash__(self) -> int:
        # Consistent with ``==``; cheap, and defined even for unhashable contents (asyncio's
        # ``gather`` hashes what it is given: see ``scenarist.model._ready``).
        return hash((type(self), len(self.interactions)))

    # -- views over the spans of every interaction ------------------------------------

    @property
    def spans(self) -> list[Span]:
        """Every span of every interaction, flattened in pre-order."""
        return [span for i in self.interactions for root in i.spans for span in root.walk()]

    @property
    def llm_calls(self) -> list[Span]:
        """Spans of kind ``"llm"``."""
        return [s for s in self.spans if s.kind == "llm"]

    @property
    def tool_calls(self) -> list[Span]:
        """Spans of kind ``"tool"``."""
        return [s for s in self.spans if s.kind == "tool"]

    @property
    def errors(self) -> list[Span]:
        """Spans whose status is ``"error"``."""
        return [s for s in self.spans if s.status == "error"]

    @property
    def interaction_errors(self) -> list[SpanError]:
        """Failures of the system itself, recorded on interactions (not on any span)."""
        return [i.error for i in self.interactions if i.error is not None]

    @property
    def cost_usd(self) -> float | None:
        """Total known cost of all spans, each call counted once (``scenarist.model.usage``);
        ``None`` when no span has a cost."""
        from scenarist.model.usage import cost_spans

        costs = [s.cost_usd for s in cost_spans(self._roots()) if s.cost_usd is not None]
        return sum(costs) if costs else None

    @property
    def tokens_in(self) -> int:
        """Total input tokens, each call counted once (spans without usage count as 0)."""
        from scenarist.model.usage import token_spans

        return sum(s.tokens_in or 0 for s in token_spans(self._roots()))

    @property
    def tokens_out(self) -> int:
        """Total output tokens, each call counted once (spans without usage count as 0)."""
        from scenarist.model.usage import token_spans

        return sum(s.tokens_out or 0 for s in token_spans(self._roots()))

    def _roots(self) -> list[Span]:
        return [root for interaction in self.interactions for root in interaction.spans]

    @property
    def duration_ms(self) -> float:
        """Time spent producing the interactions, summed (they run one after another)."""
        return sum(i.duration_ms or 0.0 for i in self.interactions)


def _last_outputs(trace: Trace[Any, Any]) -> Any:
    """``trace.last.outputs`` for :func:`scenarist.model.paths.resolve` on a plain ``Trace``; a
    recorded interaction is read without being built (most never are)."""
    log = trace.interactions
    if type(log) is not InteractionLog:
        return GENERAL
    n = log._n
    if not n:
        return NO_LAST
    items = log._items
    if type(items) is RecordedInteractions:
        return items.outputs_at(n - 1)
    item = items[n - 1]
    if type(item) is Interaction:
        return item.outputs
    if type(item) is RecordedInteractions:
        return item.outputs_at(n - 1)
    return GENERAL


register_plain_trace(Trace, _last_outputs)


def trace_type_from_annotations(fn: Any) -> type[Trace[Any, Any]] | None:
    """The ``Trace`` subclass ``fn``'s parameter annotations ask for, or ``None``. The
    runner caches it per target, with the target's binding (``engine.runner._look_up``)."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    for name, hint in hints.items():
        if name == "return":
            continue
        origin = typing.get_origin(hint) or hint
        if isinstance(origin, type) and issubclass(origin, Trace) and origin is not Trace:
            return hint if isinstance(hint, type) else origin
    return None


MAX_SPAN_DEPTH = 32
"""Spans nested in a trace that arrives from outside (a root alone is 1). Stored, a span
costs two JSON levels (itself and its ``children``) and every JSON reader of scenarist
stops at 128 (``_json_limits.MAX_DEPTH``): 32 leaves room for what the spans hold."""


def first_too_deep(
    links: list[tuple[str, str | None]], limit: int = MAX_SPAN_DEPTH
) -> tuple[int, int] | None:
    """``(index, depth)`` of the first of ``links`` (``(span id, parent id)``, in order)
    nested deeper than ``limit``, else ``None``. A parent id not among the links makes a
    root; a cycle counts as a root, as the tree builders treat them (iterative: safe at
    any depth)."""
    parents = dict(links)
    depth: dict[str, int] = {}
    for index, (span_id, _) in enumerate(links):
        chain: list[str] = []
        seen: set[str] = set()
        current: str | None = span_id
        while current is not None and current not in depth and current not in seen:
            chain.append(current)
            seen.add(current)
            parent = parents[current]
            current = parent if parent in parents else None
        level = depth[current] if current is not None and current in depth else 0
        for linked in reversed(chain):
            level += 1
            depth[linked] = level
        if depth[span_id] > limit:
            return index, depth[span_id]
    return None
