"""``UserSimulator``: an LLM plays a user with a persona and a goal, turn after turn.

Each turn the model sees who it plays (``persona``, optional ``context``) and the
conversation so far, and answers ``{"goal_reached": bool, "message": str}``. The step ends
when the goal is reached, the message is empty, or after ``max_steps`` messages::

    Scenario("refund").interact(
        inputs=UserSimulator(
            persona="A customer who wants a refund for order #123 and gets impatient.",
            max_steps=4,
        ),
    ).check(...)

The prompt is ``templates/user_simulator.j2`` (system) and ``templates/conversation.j2``
(the conversation), both ours; write your own with :class:`LLMGenerator`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from scenarist.generators._templates import render_package
from scenarist.generators.base import BaseLLMGenerator, InputGenerator
from scenarist.model.trace import Trace
from scenarist.providers.base import Message

__all__ = ["UserSimulator"]


@InputGenerator.register("user_simulator")
class UserSimulator(BaseLLMGenerator):
    """A simulated user: ``persona`` (who they are, what they want) and optional ``context``."""

    persona: str = Field(min_length=1)  # as giskard-checks: an empty persona is refused
    context: str | None = None

    def messages(self, trace: Trace[Any, Any], turn: int) -> list[Message]:
        values = self.template_values(trace, turn)
        return [
            {
                "role": "system",
                "content": render_package(
                    "user_simulator.j2", persona=self.persona, context=self.context
                ),
            },
            {"role": "user", "content": render_package("conversation.j2", **values)},
        ]
