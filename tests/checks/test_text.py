from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import RegexMatching, StringMatching
from scenarist.model.paths import NoMatch

from .conftest import CheckRunner, TraceFactory

# -- StringMatching ----------------------------------------------------------------------


def test_string_matching_pass_message_and_details(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(StringMatching(keyword="ell"), make_trace("hello"))
    assert result.passed
    assert result.message == "The answer contains the keyword 'ell'."
    assert result.details == {
        "text": "hello",
        "keyword": "ell",
        "normalization_form": "NFKC",
        "case_sensitive": True,
    }


def test_string_matching_fail_message(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(StringMatching(keyword="xyz"), make_trace("hello"))
    assert result.failed
    assert result.message == "The answer does not contain the keyword 'xyz'"


def test_string_matching_messages_read_the_same_whether_remembered_or_not(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    class Shouting(str):
        def __format__(self, spec: str) -> str:
            return self.upper()

    first = run(StringMatching(keyword="ell"), make_trace("hello"))
    second = run(StringMatching(keyword="ell"), make_trace("yellow"))
    assert first.message == second.message == "The answer contains the keyword 'ell'."
    assert first.details is not second.details  # only the (immutable) message is shared
    long = "l" * 300  # too long to remember: formatted each time, same text
    assert run(StringMatching(keyword=long), make_trace(long)).message == (
        f"The answer contains the keyword '{long}'."
    )
    shouting = make_trace("hello")  # a keyword read from the trace may be a str subclass
    shouting.annotations["keyword"] = Shouting("ell")
    for _ in range(2):  # it formats its own way, every time
        result = run(StringMatching(keyword_key="trace.annotations.keyword"), shouting)
        assert result.message == "The answer contains the keyword 'ELL'."
    failed = [run(StringMatching(keyword="xyz"), make_trace("hello")) for _ in range(2)]
    assert [r.message for r in failed] == ["The answer does not contain the keyword 'xyz'"] * 2


def test_string_matching_is_case_sensitive_by_default(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    assert run(StringMatching(keyword="HELL"), make_trace("hello")).failed
    result = run(StringMatching(keyword="HELL", case_sensitive=False), make_trace("hello"))
    assert result.passed
    assert result.message == "The answer contains the keyword 'HELL'."
    assert result.details["case_sensitive"] is False


def test_string_matching_case_insensitive_uses_casefold(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    assert run(StringMatching(keyword="STRASSE", case_sensitive=False), make_trace("straße")).passed


def test_string_matching_normalises_both_sides(make_trace: TraceFactory, run: CheckRunner) -> None:
    assert run(StringMatching(keyword="final answer"), make_trace("the ﬁnal\n\n answer")).passed
    check = StringMatching(keyword="final", normalization_form=None)
    assert run(check, make_trace("the ﬁnal answer")).failed


@pytest.mark.parametrize(("actual", "type_name"), [(123, "int"), (None, "NoneType")])
def test_string_matching_non_string_text_errors(
    make_trace: TraceFactory, run: CheckRunner, actual: Any, type_name: str
) -> None:
    result = run(StringMatching(keyword="1"), make_trace(actual))
    assert result.errored
    assert result.message == (
        f"Value for text is not a string, expected string but got {type_name}."
    )
    assert result.details == {"text": actual, "keyword": "1"}


def test_string_matching_literal_text_wins_over_target_key(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = StringMatching(text="hello world", keyword="world", target_key="trace.last.inputs")
    result = run(check, make_trace("nothing"))
    assert result.passed
    assert result.details["text"] == "hello world"


def test_string_matching_keyword_key_reads_the_trace(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(StringMatching(keyword_key="trace.last.inputs"), make_trace("xx in yy"))
    assert result.message == "The answer contains the keyword 'in'."


def test_string_matching_missing_text_key_errors(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = StringMatching(keyword="a", target_key="trace.last.metadata.x")
    result = run(check, make_trace("a"))
    assert result.errored
    assert result.message == "No value found for text key 'trace.last.metadata.x'."
    assert result.details == {"text": NoMatch("trace.last.metadata.x"), "keyword": "a"}


def test_string_matching_missing_keyword_key_errors(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(StringMatching(keyword_key="trace.annotations.kw"), make_trace("a"))
    assert result.errored
    assert result.message == "No value found for keyword key 'trace.annotations.kw'."


def test_string_matching_non_string_keyword_from_key_errors(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    trace = make_trace("a 1", annotations={"kw": 1})
    result = run(StringMatching(keyword_key="trace.annotations.kw"), trace)
    assert result.errored
    assert result.message == "Value for keyword is not a string, expected string but got int."


@pytest.mark.parametrize(
    "kwargs", [{}, {"keyword": "a", "keyword_key": "trace.last.inputs"}], ids=["neither", "both"]
)
def test_string_matching_requires_exactly_one_keyword(kwargs: dict[str, Any]) -> None:
    with pytest.raises(
        ValidationError,
        match="Exactly one of 'keyword' or 'keyword_key' must be provided, not both or neither",
    ):
        StringMatching(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"keyword": "a", "keyword_key": "last.inputs"}, "keyword_key"),
        ({"keyword": "a", "target_key": "outputs"}, "target_key"),
        ({"keyword": "a", "case_sensitive": "maybe"}, "case_sensitive"),
        ({"keyword": 3}, "keyword"),
        ({"keyword": "a", "keywords": "b"}, "keywords"),
    ],
)
def test_string_matching_rejects_bad_fields(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        StringMatching(**kwargs)
    assert f"\n{field}\n" in str(info.value)


# -- RegexMatching -----------------------------------------------------------------------


def test_regex_matching_pass_and_fail_messages(make_trace: TraceFactory, run: CheckRunner) -> None:
    passing = run(RegexMatching(pattern="h.l+o"), make_trace("hello"))
    assert passing.passed
    assert passing.message == "Text matches the regex pattern 'h.l+o'."
    assert passing.details == {"text": "hello", "pattern": "h.l+o"}
    failing = run(RegexMatching(pattern=r"^\d+$"), make_trace("hello"))
    assert failing.failed
    assert failing.message == r"Text does not match the regex pattern '^\d+$'."


def test_regex_matching_searches_anywhere(make_trace: TraceFactory, run: CheckRunner) -> None:
    assert run(RegexMatching(pattern=r"\d+"), make_trace("order 123 shipped")).passed


def test_regex_matching_invalid_pattern_errors_at_run_time(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = RegexMatching(pattern="(unclosed")
    result = run(check, make_trace("hello"))
    assert result.errored
    assert result.message == "Invalid regex pattern '(unclosed': missing ) at position 9"


def test_regex_matching_non_string_text_errors(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(RegexMatching(pattern=r"\d"), make_trace(123))
    assert result.errored
    assert result.message == "Value for text is not a string, expected string but got int."
    assert result.details == {"text": 123, "pattern": r"\d"}


def test_regex_matching_literal_text_wins(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(RegexMatching(text="abc123", pattern=r"\d+"), make_trace("no digits"))
    assert result.passed
    assert result.message == r"Text matches the regex pattern '\d+'."


def test_regex_matching_pattern_key_reads_the_trace(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    trace = make_trace("ticket T-42", annotations={"pattern": r"T-\d+"})
    assert run(RegexMatching(pattern_key="trace.annotations.pattern"), trace).passed
    missing = run(RegexMatching(pattern_key="trace.annotations.nope"), trace)
    assert missing.message == "No value found for pattern key 'trace.annotations.nope'."


def test_regex_matching_times_out_on_catastrophic_backtracking(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    # The regex engine optimises the textbook "(a+)+$"; "(a|aa)+$" still backtracks.
    check = RegexMatching(pattern="(a|aa)+$", match_timeout_seconds=0.05)
    result = run(check, make_trace("a" * 40 + "b"))  # untimed, it would outlast the suite
    assert result.errored
    assert result.message == (
        "Matching the regex pattern '(a|aa)+$' timed out after 0.05s; simplify the pattern "
        "or raise match_timeout_seconds."
    )


def test_regex_matching_requires_exactly_one_pattern() -> None:
    with pytest.raises(
        ValidationError,
        match="Exactly one of 'pattern' or 'pattern_key' must be provided, not both or neither",
    ):
        RegexMatching()


@pytest.mark.parametrize("timeout", [0, -1, "soon"])
def test_regex_matching_rejects_a_bad_timeout(timeout: Any) -> None:
    with pytest.raises(ValidationError, match="match_timeout_seconds"):
        RegexMatching(pattern="a", match_timeout_seconds=timeout)


def test_regex_matching_spec_keeps_the_default_timeout() -> None:
    assert RegexMatching(pattern="a").to_spec() == {
        "kind": "regex_matching",
        "target_key": "trace.last.outputs",
        "pattern": "a",
        "match_timeout_seconds": 2.0,
    }
