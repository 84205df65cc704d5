"""Configuring models as the checks documentation does. Pages followed: the API reference's
"Core" page, section "Configuration", and the "Multi-Turn Scenarios" guide, section "Testing
Agent Workflows" (``set_default_generator(Generator(model=...))``); the "Simulate Users"
how-to (oss/checks/how-to/simulate-users: a generator passed inline); the settings'
``EmbeddingModel``. No model is ever called: the user's own rule-based judge scores."""

import asyncio
import json

from giskard.agents.embeddings import EmbeddingModel  # IMPORT
from giskard.agents.generators import Generator  # IMPORT
from giskard.checks import (  # IMPORT
    BaseJudge,
    Interaction,
    LLMCheckResult,
    LLMJudge,
    Scenario,
    SemanticSimilarity,
    Trace,
    UserSimulator,
    get_default_embedding_model,
    get_default_generator,
    get_default_judge,
    set_default_embedding_model,
    set_default_generator,
    set_default_judge,
)


@BaseJudge.register("phrase_judge")
class PhraseJudge(BaseJudge):
    """Passes when the phrase is in what the check shows the judge."""

    phrase: str

    async def judge(self, prompt, inputs, *, output_type=None):
        shown = json.dumps(inputs, default=str).lower()
        found = self.phrase.lower() in shown
        return LLMCheckResult(passed=found, reason=f"{self.phrase!r} found: {found}")


def defaults():
    judge = get_default_judge()
    inner = getattr(judge, "generator", None)
    return {
        "generator": get_default_generator().model,
        "judge": [type(judge).__name__, judge.kind, None if inner is None else inner.model],
        "embedding": get_default_embedding_model().model,
    }


async def main():
    out = {"unset": defaults()}

    generator = Generator(model="openai/gpt-4o-mini")
    out["generator_object"] = [generator.model]
    set_default_generator(generator)
    out["set_object"] = defaults()
    out["kept_as_given"] = get_default_generator() is generator
    set_default_generator("anthropic/claude-3-5-haiku")
    out["set_string"] = defaults()
    set_default_generator(Generator(model="gpt-4o"))  # a bare name: an OpenAI model
    out["set_bare_name"] = defaults()

    set_default_judge(Generator(model="openai/gpt-4o"))
    out["judge_from_generator"] = defaults()["judge"]
    set_default_judge(None)
    out["judge_cleared"] = defaults()["judge"]

    embedding = EmbeddingModel(model="openai/text-embedding-3-large")
    set_default_embedding_model(embedding)
    out["embedding_object"] = [defaults()["embedding"], get_default_embedding_model() is embedding]
    set_default_embedding_model(None)
    out["embedding_cleared"] = defaults()["embedding"]

    simulator = UserSimulator(
        persona="A traveller booking a flight to Lisbon.",
        max_steps=2,
        generator=Generator(model="openai/gpt-4o-mini"),
    )
    out["simulator"] = [simulator.generator.model, simulator.max_steps, simulator.persona]
    similarity = SemanticSimilarity(
        reference_text="Paris is the capital.",
        embedding_model=EmbeddingModel(model="openai/text-embedding-3-small"),
    )
    out["similarity_model"] = similarity.embedding_model.model

    # A judge of one's own beside a configured generator: the judge scores, nothing is called.
    set_default_generator(Generator(model="openai/gpt-4o-mini"))
    trace = await Trace.from_interactions(
        Interaction(inputs="Capital of France?", outputs="Paris is the capital of France.")
    )
    verdicts = {}
    for name, judge in (
        ("paris", PhraseJudge(phrase="paris")),
        ("rome", PhraseJudge(phrase="rome")),
    ):
        check = LLMJudge(name=name, prompt="Is {{ trace.last.outputs }} right?", judge=judge)
        result = await check.run(trace)
        verdicts[name] = [result.status.value, result.message]
    out["verdicts"] = verdicts
    set_default_judge(PhraseJudge(phrase="capital"))
    scenario = (
        Scenario("configured")
        .interact(inputs="Capital of Italy?", outputs="Rome is the capital of Italy.")
        .check(LLMJudge(name="by_default", prompt="Is {{ trace.last.outputs }} right?"))
    )
    result = await scenario.run()
    out["scenario"] = [result.status.value, [r.status.value for r in result.steps[0].results]]
    set_default_judge(None)
    set_default_generator(None)
    out["restored"] = defaults()
    print(json.dumps(out, sort_keys=True))


asyncio.run(main())
