"""``LLMGenerator``: the simulated-user loop with a prompt you write (Jinja2).

Give exactly one of ``prompt`` (an inline template) or ``prompt_path`` (a template file,
read when used). The rendered prompt is the system message; the conversation so far
follows in our ``templates/conversation.j2``, which asks for
``{"goal_reached": bool, "message": str}``. Templates see ``trace``, ``interactions``,
``transcript`` (``User:`` / ``Assistant:`` lines), ``turn`` (0-based, within the step) and
``max_steps``; an undefined variable is an error, not an empty string::

    LLMGenerator(prompt="You are a tourist asking about {{ city }}...")  # error: no `city`
    LLMGenerator(prompt="You are a tourist in Lyon. {{ interactions | length }} turns so far.")
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import model_validator

from scenarist.generators._templates import render_file, render_package, render_string
from scenarist.generators.base import BaseLLMGenerator, InputGenerator
from scenarist.model.trace import Trace
from scenarist.providers.base import Message

__all__ = ["LLMGenerator"]


@InputGenerator.register("llm_generator")
class LLMGenerator(BaseLLMGenerator):
    """A simulated user driven by your own prompt template."""

    prompt: str | None = None
    prompt_path: str | None = None

    @model_validator(mode="after")
    def _one_prompt(self) -> Self:
        if (self.prompt is None) == (self.prompt_path is None):
            raise ValueError(
                "Exactly one of 'prompt' or 'prompt_path' must be provided, not both or neither."
            )
        return self

    def messages(self, trace: Trace[Any, Any], turn: int) -> list[Message]:
        values = self.template_values(trace, turn)
        if self.prompt is not None:
            system = render_string(self.prompt, **values)
        else:
            assert self.prompt_path is not None
            system = render_file(self.prompt_path, **values)
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": render_package("conversation.j2", **values)},
        ]
