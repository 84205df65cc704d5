from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, computed_field

from scenarist import Equals, Interaction, NoMatch, Scenario, Trace, resolve
from scenarist.model.paths import compile_path


def _trace(*outputs: Any, annotations: dict[str, Any] | None = None) -> Trace[Any, Any]:
    trace: Trace[Any, Any] = Trace(annotations=annotations or {})
    for i, out in enumerate(outputs):
        trace = trace.with_interaction(Interaction(inputs=f"q{i}", outputs=out, metadata={"i": i}))
    return trace


def test_resolve_last_outputs_and_nested_keys() -> None:
    trace = _trace({"answer": "x", "meta": {"score": 3}})
    assert resolve(trace, "trace.last.outputs.answer") == "x"
    assert resolve(trace, "trace.last.outputs.meta.score") == 3
    assert resolve(trace, "trace.interactions[0].inputs") == "q0"
    assert resolve(trace, "trace.interactions[-1].metadata.i") == 0


def test_resolve_missing_key_returns_no_match_with_giskard_message() -> None:
    value = resolve(_trace("a"), "trace.last.outputs.nope")
    assert isinstance(value, NoMatch)
    assert str(value) == "No match for key: trace.last.outputs.nope"
    assert isinstance(resolve(Trace(), "trace.last.outputs"), NoMatch)
    assert isinstance(resolve(_trace("a"), "trace.interactions[3]"), NoMatch)


def test_resolve_wildcard_returns_a_list_even_for_one_match() -> None:
    # giskard returns the bare value for a single wildcard match; a list expression
    # must always give a list so checks see the same shape whatever the trace length.
    assert resolve(_trace("a"), "trace.interactions[*].outputs") == ["a"]
    assert resolve(_trace("a", "b"), "trace.interactions[*].outputs") == ["a", "b"]
    assert resolve(_trace({"x": 1, "y": 2}), "trace.last.outputs.*") == [1, 2]


def test_resolve_descendants_do_not_count_last_twice() -> None:
    assert resolve(_trace("a"), "trace..outputs") == ["a"]
    assert resolve(_trace("a", "b"), "trace..outputs") == ["a", "b"]


def test_resolve_slices_unions_and_quoted_keys() -> None:
    trace = _trace("a", "b", "c", annotations={"a.b": 1, "k": 2})
    assert resolve(trace, "trace.interactions[0:2].outputs") == ["a", "b"]
    assert resolve(trace, "trace.interactions[::2].outputs") == ["a", "c"]
    assert resolve(trace, "trace.interactions[0, 2].outputs") == ["a", "c"]
    assert resolve(trace, "trace.annotations['a.b']") == 1
    assert resolve(trace, 'trace.annotations["k"]') == 2
    assert resolve(trace, "trace.annotations.k") == 2


class Answer(BaseModel):
    text: str
    sources: list[str]


def test_resolve_reads_model_fields_and_computed_properties_without_dumping() -> None:
    class Custom(Trace[str, Answer]):
        @computed_field  # type: ignore[prop-decorator]
        @property
        def first_source(self) -> str:
            last = self.last
            return last.outputs.sources[0] if last else ""

    trace = Custom().with_interaction(
        Interaction(inputs="q", outputs=Answer(text="t", sources=["s1", "s2"]))
    )
    assert resolve(trace, "trace.last.outputs.text") == "t"
    assert resolve(trace, "trace.last.outputs.sources[1]") == "s2"
    assert resolve(trace, "trace.first_source") == "s1"


class PlainTrace(Trace[str, str]):
    @property
    def shouted(self) -> str:
        return str(self.last.outputs).upper() if self.last else ""


class ReadableTrace(PlainTrace):
    paths_read_properties: ClassVar[bool] = True


class Reply(BaseModel):
    text: str

    @property
    def length(self) -> int:
        return len(self.text)


def test_resolve_does_not_reach_a_users_plain_property_as_giskard() -> None:
    # giskard-checks resolves paths in the trace's dump: a plain property is not there
    trace = PlainTrace().with_interaction(Interaction(inputs="q", outputs="a"))
    assert resolve(trace, "trace.shouted") == NoMatch("trace.shouted")
    replied = Trace().with_interaction(Interaction(inputs="q", outputs=Reply(text="abc")))
    assert resolve(replied, "trace.last.outputs.length") == NoMatch("trace.last.outputs.length")
    assert resolve(replied, "trace.last.outputs.model_fields") == NoMatch(
        "trace.last.outputs.model_fields"
    )
    # scenarist's own properties stay readable (giskard's computed `last`, span totals)
    assert resolve(trace, "trace.last.outputs") == "a"
    assert resolve(trace, "trace.tokens_in") == 0


def test_paths_read_properties_opts_a_model_into_reading_its_plain_properties() -> None:
    trace = ReadableTrace().with_interaction(Interaction(inputs="q", outputs="a"))
    assert resolve(trace, "trace.shouted") == "A"
    result = (
        Scenario("plain", trace_type=PlainTrace)
        .interact("q", "a")
        .check(Equals(expected_value="A", target_key="trace.shouted"))
        .run_sync()
    )
    assert result.status == "error"
    assert result.steps[0].results[0].message.startswith("No value found for key 'trace.shouted'")


def test_resolve_gives_models_and_dataclasses_as_giskards_trace_dump_holds_them() -> None:
    """The walk reads live objects; the value found is what giskard-checks 1.0.6 resolves
    from its dump of the trace: models and dataclasses as dicts, inside containers too,
    dates, sets and tuples as they are; a value with nothing to convert is not copied."""
    import dataclasses
    import datetime

    @dataclasses.dataclass
    class Receipt:
        total: float
        answer: Answer

    answer = Answer(text="t", sources=["s1"])
    day = datetime.date(2024, 2, 29)
    plain = {"n": [1, 2], "day": day, "tags": {"a"}}
    trace = _trace(answer, {"items": [answer], "pair": (answer, 1)}, Receipt(1.5, answer), plain)
    as_dict = {"text": "t", "sources": ["s1"]}
    assert resolve(trace, "trace.interactions[0].outputs") == as_dict
    assert resolve(trace, "trace.interactions[1].outputs") == {
        "items": [as_dict],
        "pair": (as_dict, 1),
    }
    assert resolve(trace, "trace.interactions[2].outputs") == {"total": 1.5, "answer": as_dict}
    assert resolve(trace, "trace.interactions[0:2].outputs.items") == [[as_dict]]
    assert resolve(trace, "trace.last.outputs") is plain
    assert resolve(trace, "trace.interactions[0].outputs.sources") == ["s1"]
    assert resolve(trace, "trace.last") == {**trace.last.model_dump()}  # type: ignore[union-attr]


def test_resolve_never_returns_methods() -> None:
    assert isinstance(resolve(_trace("abc"), "trace.last.outputs.upper"), NoMatch)
    assert isinstance(resolve(_trace("abc"), "trace.with_interaction"), NoMatch)


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("outputs.x", "paths start with 'trace.'"),
        ("last.outputs", "paths start with 'trace.'"),
        ("trace.[", "expected a name"),
        ("trace.a[?(@.x == 1)]", "filter expressions are not supported"),
        ("trace.a[1:2:0]", "slice step cannot be zero"),
        ("trace.a[1", "expected ',' or ']'"),
        ("trace.a['x]", "unterminated quoted key"),
    ],
)
def test_compile_path_rejects_invalid_paths_with_the_reason(path: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="invalid path") as info:
        compile_path(path)
    assert fragment in str(info.value)


def test_compile_path_is_cached() -> None:
    assert compile_path("trace.last.outputs.cached") is compile_path("trace.last.outputs.cached")


_keys = st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(_keys, _json, min_size=1, max_size=4), st.data())
def test_resolve_finds_every_key_of_a_dict_output(
    outputs: dict[str, Any], data: st.DataObject
) -> None:
    key = data.draw(st.sampled_from(sorted(outputs)))
    trace = _trace(outputs)
    assert resolve(trace, f"trace.last.outputs['{key}']") == outputs[key]
    if key.isidentifier():
        assert resolve(trace, f"trace.last.outputs.{key}") == outputs[key]


@given(st.lists(_json, min_size=1, max_size=6), st.integers(-8, 8))
def test_resolve_index_matches_python_indexing(outputs: list[Any], index: int) -> None:
    trace = _trace(*outputs)
    got = resolve(trace, f"trace.interactions[{index}].outputs")
    if -len(outputs) <= index < len(outputs):
        assert got == outputs[index]
    else:
        assert isinstance(got, NoMatch)


@given(st.lists(_json, max_size=6), st.integers(-7, 7) | st.none(), st.integers(-7, 7) | st.none())
def test_resolve_slice_matches_python_slicing(
    outputs: list[Any], start: int | None, stop: int | None
) -> None:
    trace = _trace(*outputs)
    bounds = f"{'' if start is None else start}:{'' if stop is None else stop}"
    text = f"trace.interactions[{bounds}].outputs"
    expected = outputs[start:stop]
    got = resolve(trace, text)
    assert got == expected if expected else isinstance(got, NoMatch)
