"""User judges as in giskard-checks: ``@BaseJudge.register(kind)``, ``judge(prompt, inputs)``,
kinds, dumps and loads of checks that carry them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import Field, ValidationError
from tests.judges.conftest import FakeProvider, make_trace, verdict

from scenarist import (
    BaseJudge,
    Check,
    CheckStatus,
    Groundedness,
    LLMChatJudge,
    LLMCheckResult,
    LLMJudge,
    Scenario,
)
from scenarist.providers.named_model import Generator

SUPPORT = make_trace(("Can I get a refund?", "Yes, within 30 days."))
PROMPT = "Is {{ trace.last.outputs }} polite?"


@BaseJudge.register("test_keyword")
class KeywordJudge(BaseJudge):
    """giskard's protocol: the template source and its variables in, a verdict out."""

    keyword: str = "Yes"
    seen: list[Any] = Field(default_factory=list)

    async def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
        self.seen.append((prompt, sorted(inputs), output_type))
        found = self.keyword in str(inputs["trace"].last.outputs)
        reason = f"{self.keyword} {'seen' if found else 'absent'}"
        return LLMCheckResult(passed=found, reason=reason)


@BaseJudge.register("test_sync")
class SyncJudge(BaseJudge):
    answer: Any = None

    def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
        return self.answer


def test_registered_kinds_rebuild_from_dicts_and_refuse_typos() -> None:
    assert {"llm", "test_keyword", "test_sync"} <= set(BaseJudge.kinds())
    assert KeywordJudge().kind == "test_keyword" and LLMChatJudge().kind == "llm"
    rebuilt = BaseJudge.model_validate({"kind": "test_keyword", "keyword": "no"})
    assert isinstance(rebuilt, KeywordJudge) and rebuilt.keyword == "no"
    assert rebuilt.model_dump() == {"kind": "test_keyword", "keyword": "no", "seen": []}
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        BaseJudge.model_validate({"kind": "test_keyword", "keywrod": "no"})
    with pytest.raises(ValidationError, match="unknown judge kind 'nope'; registered kinds:"):
        BaseJudge.model_validate({"kind": "nope"})
    with pytest.raises(ValidationError, match="a judge needs a 'kind' field"):
        BaseJudge()


def test_a_kind_is_registered_once() -> None:
    with pytest.raises(ValueError, match="judge kind 'test_keyword' is already registered"):

        @BaseJudge.register("test_keyword")
        class Again(BaseJudge):
            pass


@pytest.mark.anyio
async def test_the_judge_gets_the_template_source_and_its_variables() -> None:
    judge = KeywordJudge(seen=[])
    result = await LLMJudge(prompt=PROMPT, judge=judge).run(SUPPORT)
    assert (result.status, result.message) == (CheckStatus.PASS, "Yes seen")
    assert judge.seen == [(PROMPT, ["trace"], LLMCheckResult)]  # not rendered: giskard's way
    grounded = await Groundedness(context="30 days", judge=judge).run(SUPPORT)
    assert grounded.status is CheckStatus.PASS
    template, variables, _ = judge.seen[1]
    assert "{{ answer }}" in template and variables == ["answer", "context", "trace"]
    failed = await LLMJudge(prompt=PROMPT, judge=KeywordJudge(keyword="No")).run(SUPPORT)
    assert (failed.status, failed.message) == (CheckStatus.FAIL, "No absent")


@pytest.mark.anyio
async def test_a_sync_judge_works_and_a_wrong_answer_type_is_an_error() -> None:
    ok = SyncJudge(answer=LLMCheckResult(passed=True, reason="sync"))
    assert (await LLMJudge(prompt=PROMPT, judge=ok).run(SUPPORT)).message == "sync"
    for wrong in ({"passed": True, "reason": "a dict"}, True, None):
        result = await LLMJudge(prompt=PROMPT, judge=SyncJudge(answer=wrong)).run(SUPPORT)
        assert result.status is CheckStatus.ERROR  # never a PASS by accident
        assert f"SyncJudge.judge returned {type(wrong).__name__}" in result.message
        assert "expected an LLMCheckResult" in result.message


@BaseJudge.register("test_raises")
class Raises(BaseJudge):
    async def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
        raise RuntimeError("judge exploded")


@pytest.mark.anyio
async def test_a_judge_that_raises_makes_the_check_error_in_a_scenario() -> None:
    scenario = Scenario(name="s").interact(inputs="q", outputs="a")
    scenario = scenario.check(LLMJudge(name="lj", prompt=PROMPT, judge=Raises()))
    result = await scenario.run(return_exception=True)
    (check,) = result.steps[0].results
    assert check.status is CheckStatus.ERROR and "judge exploded" in check.message


@pytest.mark.anyio
async def test_a_judge_implementing_neither_protocol_says_what_to_implement() -> None:
    class Nothing(BaseJudge):
        pass

    with pytest.raises(NotImplementedError, match=r"must implement judge\(prompt, inputs\)"):
        await LLMJudge(prompt=PROMPT, judge=Nothing()).run(SUPPORT)


@pytest.mark.anyio
async def test_a_check_with_a_registered_judge_dumps_and_loads_it() -> None:
    check = LLMJudge(name="polite", prompt=PROMPT, judge=KeywordJudge(keyword="30", seen=[]))
    dumped = json.loads(json.dumps(check.model_dump(mode="json")))
    assert dumped["judge"] == {"kind": "test_keyword", "keyword": "30", "seen": []}
    assert dumped["prompt_path"] is None  # both prompt keys, as giskard-checks writes them
    assert "temperature" not in dumped and "samples" not in dumped  # defaults left out
    loaded = Check.model_validate(dumped)
    assert isinstance(loaded, LLMJudge) and isinstance(loaded.judge, KeywordJudge)
    assert (await loaded.run(SUPPORT)).message == "30 seen"


def test_copies_keep_the_judge_object_even_an_unregistered_one() -> None:
    class Local(BaseJudge):
        async def judge(self, prompt: Any, inputs: Any, *, output_type: Any = None) -> Any:
            return LLMCheckResult(passed=True, reason="local")

    judge = Local()
    copy = LLMJudge(prompt=PROMPT, judge=judge).copy_with(name="renamed")
    assert copy.judge is judge and copy.name == "renamed"


def test_a_giskard_chat_judge_dump_loads_with_its_model() -> None:
    giskard_judge = {
        "kind": "llm",
        "generator": {
            "kind": "giskard_llm",
            "model": "openai/gpt-4o",
            "params": {"temperature": 1.0},
            "retry_policy": {"max_attempts": 3},
        },
    }
    check = Check.model_validate({"kind": "llm_judge", "prompt": PROMPT, "judge": giskard_judge})
    assert isinstance(check.judge, LLMChatJudge)
    assert check.judge.generator == Generator(model="openai/gpt-4o")
    assert check.model_dump(mode="json")["judge"] == "openai/gpt-4o"
    follows = Check.model_validate({"kind": "conformity", "rule": "r", "judge": {"kind": "llm"}})
    assert follows.model_dump(mode="json")["judge"] == {"kind": "llm"}


@pytest.mark.anyio
async def test_an_llm_chat_judge_without_a_model_follows_the_default_generator() -> None:
    from scenarist import set_default_generator

    judge = LLMChatJudge()
    assert judge.generator is None and judge.name == "openai/gpt-4o-mini"
    set_default_generator(FakeProvider(verdict(True, "from the generator"), name="fake/gen"))
    assert judge.name == "fake/gen"
    result = await Groundedness(context="30 days", judge=judge).run(SUPPORT)
    assert result.message == "from the generator"
    with pytest.raises(TypeError, match="positionally or generator="):
        LLMChatJudge("openai/a", generator="openai/b")
