"""A first suite: an agent on the official ``openai`` SDK, a tool step, two checks.

Run it with ``scenarist run examples/first_suite.py``; the model is a fake
OpenAI-compatible server on 127.0.0.1, so it needs no key and no network.
"""

from openai import OpenAI

from scenarist import Scenario, StringMatching, Suite, TraceAssert, step
from scenarist.testing import FakeLLMServer, ScriptedLLM

# A fake OpenAI-compatible server on 127.0.0.1: no key, no network, a scripted answer.
fake = FakeLLMServer(ScriptedLLM(default="Your refund was sent on Monday.")).start()
llm = OpenAI(base_url=fake.openai_url, api_key="sk-test")


@step(kind="tool")  # a tool span in the trace, with its arguments and result
def lookup_order(order_id: str) -> dict[str, str]:
    return {"order_id": order_id, "status": "refunded"}


def support_agent(question: str) -> str:
    order = lookup_order("A-1001")
    answer = llm.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": f"Order: {order}"},
            {"role": "user", "content": question},
        ],
    )
    return answer.choices[0].message.content or ""


suite = Suite(name="support", target=support_agent)
suite.append(
    Scenario("refund_status")
    .interact("Where is my refund?")
    .check(StringMatching(keyword="refund"))
    .check(TraceAssert.tool_called("lookup_order"))
)
