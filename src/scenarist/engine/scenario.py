"""The ``Scenario`` builder: steps of interactions followed by checks.

The builder mutates the scenario and returns it, so calls chain::

    Scenario("refund").interact("I want a refund", agent).check(StringMatching(keyword="refund"))

A scenario is a list of :class:`Step`: each holds interactions, then checks. An
interaction added after a step that already has checks opens a new step; a check added
when there is no step opens one. ``.interact().interact().check().check().interact()``
therefore gives two steps: (2 interactions, 2 checks) and (1 interaction, 0 checks).
"""

from __future__ import annotations

import copy as _copy
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    StrictInt,
    ValidationError,
    field_serializer,
    field_validator,
)

from scenarist._sync import run_sync
from scenarist.checks.base import AnyCheck, Check
from scenarist.engine.interactions import InteractionSpec, interact_spec
from scenarist.errors import UserError
from scenarist.model._construct import SharedFieldsSet, construct, own_fields_set
from scenarist.model._missing import MISSING, is_missing
from scenarist.model.trace import Trace

if TYPE_CHECKING:
    from scenarist.model.results import ScenarioResult

__all__ = ["Scenario", "Step", "Target", "budgets_seen", "not_a_check", "tags_error"]


class Target(Protocol):
    """The system under test: a function of ``inputs`` (or ``(trace, inputs)``), sync or async.

    ``Target[In, Out, TraceType]`` subscripts as in giskard-checks (for readers; at runtime
    it is this protocol).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def __class_getitem__(cls, params: Any) -> Any:
        return cls


AnySpec = SerializeAsAny[InteractionSpec]


class Step(BaseModel):
    """One step of a scenario: its interactions run first, then all its checks."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    interacts: list[AnySpec] = Field(default_factory=list)
    checks: list[AnyCheck] = Field(default_factory=list)


def _new_step() -> Step:
    """An empty :class:`Step` without validation (nothing to validate; one per step of
    every scenario built)."""
    return construct(Step, {"interacts": [], "checks": []})


def _invalid(title: str, where: tuple[str | int, ...], value: Any, problem: str) -> ValidationError:
    """A pydantic ``ValidationError`` (a ``ValueError``), as giskard-checks raises for the
    same misuse when it validates the value at run time."""
    return ValidationError.from_exception_data(
        title,
        [
            {
                "type": "value_error",
                "loc": where,
                "input": value,
                "ctx": {"error": ValueError(problem)},
            }
        ],
    )


def not_a_check(index: int, value: Any) -> ValidationError:
    """What running a step raises when its check number ``index`` is not a ``Check``."""
    return _invalid(
        "TestCase",
        ("checks", index),
        value,
        f"{value!r} is not a check: .check() takes a Check such as Equals(...) or "
        "FnCheck(...); wrap a plain function with from_fn(fn)",
    )


def tags_error(scenarios: Iterable[Scenario]) -> ValidationError | None:
    """The error a suite run raises when a scenario's tags (set by ``with_tags``, which
    takes them as given, as giskard-checks does) are not a list of strings; else ``None``."""
    for index, scenario in enumerate(scenarios):
        tags = scenario.tags
        if type(tags) is list and all(type(t) is str and t for t in tags):
            continue
        try:
            _validate_tags(tags)
        except ValueError as exc:
            return _invalid("Suite", ("scenarios", index, "tags"), tags, str(exc))
    return None


def _validate_tags(tags: Any) -> list[str]:
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise ValueError(
            f"tags must be a list of strings like ['team:search', 'smoke'], got {tags!r}"
        )
    checked: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag:
            raise ValueError(f"each tag must be a non-empty string, got {tag!r} in {tags!r}")
        checked.append(tag)
    return checked


_BUDGETS_SEEN = [False]
"""Whether any scenario of this process was given a ``budget`` (see ``Scenario.budget``)."""


def budgets_seen() -> bool:
    """Whether any scenario was given its own ``budget`` (a suite run then looks for them)."""
    return _BUDGETS_SEEN[0]


class Scenario(SharedFieldsSet):  # see scenarist.model._construct
    """A named, ordered list of steps to run against a system under test.

    ``trace_type`` selects a :class:`Trace` subclass (for computed properties that checks
    can address); when omitted it is inferred from a target parameter annotated with a
    ``Trace`` subclass. ``multiple_runs=n`` runs the whole scenario up to ``n`` times,
    each with a fresh trace, and stops at the first run that does not pass.
    ``timeout_s`` bounds each interaction (expiry is an ERROR with phase ``timeout``).
    ``budget`` (USD) caps what a suite run lets it spend (:mod:`scenarist.engine.budget`).
    ``min_pass_rate`` (0-1) is the pass rate its repeated runs must show (ours).
    """

    model_config = ConfigDict(
        defer_build=True, extra="forbid", arbitrary_types_allowed=True, validate_assignment=True
    )

    name: str = "Unnamed Scenario"
    steps: list[Step] = Field(default_factory=list)
    trace_type: type[Trace] | None = None  # type: ignore[type-arg]
    multiple_runs: Annotated[StrictInt, Field(ge=1)] = 1
    tags: list[str] = Field(default_factory=list)
    target: Any = Field(default=MISSING, exclude=True, repr=False)
    annotations: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=None, gt=0, exclude_if=lambda v: v is None)
    budget: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, exclude_if=lambda v: v is None
    )
    """The most this scenario may be expected to spend, in USD: estimated above it, a
    suite run does not start it (BUDGET); spending more while running fails the run (see
    :mod:`scenarist.engine.budget`). Ours; left out of dumps while ``None``."""
    min_pass_rate: float | None = Field(default=None, ge=0, le=1, exclude_if=lambda v: v is None)
    """The pass rate this scenario must be shown to reach over repeated runs
    (``Suite.run(repeat=...)``, ``scenarist run --repeat``): see ``docs/statistics.md``."""

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """As :meth:`pydantic.BaseModel.model_validate`; unknown top-level keys are ignored.

        Files written by giskard-checks or by another scenarist version load (as in
        giskard-checks); the constructor and the steps inside stay strict, so a typo in
        code still fails loudly.
        """
        if isinstance(obj, dict):
            obj = {k: v for k, v in obj.items() if k in cls.model_fields}
        return super().model_validate(obj, *args, **kwargs)

    @field_validator("trace_type", mode="before")
    @classmethod
    def _trace_type_by_name(cls, value: Any) -> Any:
        """A dumped ``"module.QualName"`` loads back as the class (``None`` stays ``None``)."""
        if isinstance(value, str):
            module, _, qualname = value.rpartition(".")
            try:
                found: Any = importlib.import_module(module)
                for part in qualname.split("."):
                    found = getattr(found, part)
            except (ImportError, AttributeError, ValueError):
                raise ValueError(f"trace_type {value!r} cannot be imported") from None
            return found
        return value

    @field_serializer("trace_type")
    def _trace_type_name(self, value: type[Trace] | None) -> str | None:  # type: ignore[type-arg]
        return None if value is None else f"{value.__module__}.{value.__qualname__}"

    def __init__(self, name: str = "Unnamed Scenario", /, **data: Any) -> None:
        if "name" in data:
            name = data.pop("name")
        super().__init__(name=name, **data)

    @field_validator("tags", mode="before")
    @classmethod
    def _check_tags(cls, value: Any) -> list[str]:
        return _validate_tags(value)

    @field_validator("budget")
    @classmethod
    def _note_budget(cls, value: float | None) -> float | None:
        """Remember that some scenario has a budget: until one does, a suite run does not
        even look for them (its path without a budget stays as it was)."""
        if value is not None:
            _BUDGETS_SEEN[0] = True
        return value

    @field_validator("min_pass_rate", mode="before")
    @classmethod
    def _check_rate(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"min_pass_rate must be a pass rate from 0 to 1, got {value!r}")
        return value

    @field_validator("target")
    @classmethod
    def _check_target(cls, value: Any) -> Any:
        if not is_missing(value) and value is not None and not callable(value):
            raise ValueError(f"target must be a callable (a function of inputs), got {value!r}")
        return MISSING if value is None else value

    # -- building ----------------------------------------------------------------------

    def add_interaction(self, interaction: InteractionSpec) -> Self:
        """Add a pre-built interaction spec (opens a new step after checks)."""
        if not isinstance(interaction, InteractionSpec):
            raise TypeError(
                f"add_interaction expects an InteractionSpec such as Interact(...), "
                f"got {type(interaction).__name__}; use .check(...) for checks"
            )
        if not self.steps or self.steps[-1].checks:
            self.steps.append(_new_step())
        self.steps[-1].interacts.append(interaction)
        return self

    def add_interactions(self, *interactions: InteractionSpec) -> Self:
        for interaction in interactions:
            self.add_interaction(interaction)
        return self

    def interact(
        self,
        inputs: Any,
        outputs: Any = MISSING,
        metadata: dict[str, Any] | None = None,
        *,
        min_inputs: int = 0,
    ) -> Self:
        """Add an exchange; without ``outputs`` the target answers at run time.

        ``min_inputs`` (ours): the fewest inputs a generator given as ``inputs`` must yield,
        else the step ERRORs; at 0 (giskard-checks' behaviour) one that yields none adds no
        interaction and the result is flagged ``vacuous``.
        """
        return self.add_interaction(interact_spec(inputs, outputs, metadata, min_inputs))

    def check(self, check: Check) -> Self:
        """Add a check to the current step (opening one if there is none).

        As in giskard-checks, ``check`` is taken as given: something that is not a
        :class:`Check` makes the run raise a ``ValidationError`` when it reaches that step.
        """
        if not self.steps:
            self.steps.append(_new_step())
        self.steps[-1].checks.append(check)
        return self

    def checks(self, *checks: Check) -> Self:
        for check in checks:
            self.check(check)
        return self

    def append(self, component: InteractionSpec | Check) -> Self:
        """Add an interaction spec or a check, whichever ``component`` is."""
        if isinstance(component, Check):
            return self.check(component)
        return self.add_interaction(component)

    def extend(self, *components: InteractionSpec | Check) -> Self:
        for component in components:
            self.append(component)
        return self

    def with_tags(self, tags: list[str]) -> Self:
        """Replace the tags (``"key:value"`` strings, or bare labels).

        As in giskard-checks, ``tags`` is taken as given (the constructor validates them):
        a scenario run records ``list(tags)``, a suite run raises a ``ValidationError``
        naming the scenario when they are not a list of strings.
        """
        own_fields_set(self)
        self.__dict__["tags"] = tags
        self.__pydantic_fields_set__.add("tags")
        return self

    def with_target(self, target: Callable[..., Any]) -> Self:
        self.target = target
        return self

    def with_annotations(self, annotations: dict[str, Any]) -> Self:
        """Merge ``annotations`` into the ones every run's trace starts with."""
        self.annotations = {**self.annotations, **annotations}
        return self

    def copy(self) -> Self:  # type: ignore[override]
        """An independent copy to branch variants from (steps and checks are not shared)."""
        return self.model_copy(
            update={
                "steps": [
                    Step(interacts=list(s.interacts), checks=list(s.checks)) for s in self.steps
                ],
                "tags": list(self.tags),
                "annotations": _copy.deepcopy(self.annotations),
            }
        )

    # -- running -----------------------------------------------------------------------

    async def run(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        multiple_runs: int | None = None,
        *,
        timeout_s: float | None = None,
        stop_on_failure: bool = True,
    ) -> ScenarioResult:
        """Run the scenario and return its result (see :class:`ScenarioRunner`).

        A scenario with a ``budget`` is refused here (a ``UserError``): a budget is kept by
        a suite run, which estimates a scenario before starting it and reports BUDGET or
        an overspend; run it as ``Suite(scenarios=[scenario]).run(...)``. Running it
        unchecked would let the budget pass silently."""
        if self.budget is not None:
            raise UserError(
                f"Scenario {self.name!r} has budget={self.budget}: budgets are kept by suite "
                "runs (they estimate a scenario before starting it and report BUDGET or an "
                "overspend), and Scenario.run would ignore it; run it as "
                "Suite(scenarios=[scenario]).run(...) or scenarist run, or drop budget"
            )
        from scenarist.engine.runner import get_runner

        return await get_runner().run(
            self,
            target=target,
            return_exception=return_exception,
            multiple_runs=multiple_runs,
            timeout_s=timeout_s,
            stop_on_failure=stop_on_failure,
        )

    def run_sync(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        multiple_runs: int | None = None,
        *,
        timeout_s: float | None = None,
        stop_on_failure: bool = True,
    ) -> ScenarioResult:
        """:meth:`run` for scripts, notebooks and sync tests (safe inside a running loop)."""
        return run_sync(
            self.run,
            target,
            return_exception,
            multiple_runs,
            timeout_s=timeout_s,
            stop_on_failure=stop_on_failure,
        )

    # -- files -------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        """Load a scenario from a JSON or YAML file."""
        from scenarist.formats.files import load_model

        return load_model(cls, path)
