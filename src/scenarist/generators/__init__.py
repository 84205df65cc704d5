"""Input generators: simulated users and LLM-filled inputs for ``.interact(inputs=...)``.

Importing this package registers the generator kinds (``user_simulator``,
``llm_generator``, ``dataset_input``); Jinja2 and the SDKs load on first use.
"""

from scenarist.generators.base import (
    BaseLLMGenerator,
    InputGenerator,
    LLMGeneratorOutput,
    Turn,
)
from scenarist.generators.dataset import DatasetInputGenerator
from scenarist.generators.llm_generator import LLMGenerator
from scenarist.generators.user_simulator import UserSimulator

__all__ = [
    "BaseLLMGenerator",
    "DatasetInputGenerator",
    "InputGenerator",
    "LLMGenerator",
    "LLMGeneratorOutput",
    "Turn",
    "UserSimulator",
]
