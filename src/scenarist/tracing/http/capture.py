"""Automatic LLM-call capture at the HTTP layer: every call becomes an ``llm`` span.

The run machinery wraps each agent run in :func:`capture_llm_calls`. While at least one
run is active, the default transports of ``httpx2`` (what the official ``openai`` 3.x and
``anthropic`` 2.x SDKs instantiate: ``httpx2.HTTPTransport`` and
``httpx2.AsyncHTTPTransport``) and of ``httpx`` 0.28 (the same two classes) carry a hook
on ``handle_request`` / ``handle_async_request``. One mechanism thus serves both SDKs,
sync and async, streamed or not, and any OpenAI-compatible server at any base URL.
``urllib3``'s connection pools (so ``requests``) carry one too (``_urllib3_hook``), and so
do ``aiohttp``'s connectors (``_aiohttp_hook``: plain sessions, and the SDKs'
``DefaultAioHttpClient``); both go through the same span and response-source path.
The standard library's ``urllib.request`` is not hooked: no span, no recording; a strict
replay refuses it in ``http.client`` (see ``_network_guard``).

Design:

* **Scoped by context, installed by reference count.** The hooks are class attributes,
  so they are process-wide; what they do is not. A hook records only when
  :func:`~scenarist.tracing.recorder.current_recorder` finds a run in the calling
  context (a context variable), so concurrent runs (asyncio tasks, worker threads)
  each record their own calls, and code outside any run passes straight through. The
  first active run (or cassette) installs the hooks, the last one to end restores the
  original methods: nothing is patched outside a run or a cassette.
* **Which requests.** ``POST`` to a path ending in ``/chat/completions``,
  ``/completions``, ``/responses``, ``/embeddings`` (OpenAI format, Azure OpenAI's
  deployment paths included), ``/messages`` (Anthropic), ``:generateContent`` /
  ``:streamGenerateContent`` (Gemini), ``/api/chat`` / ``/api/generate`` (Ollama);
  anything else passes through untouched (see ``_llm_payloads``).
* **Streams stay streams.** The response's byte stream is wrapped: bytes reach the
  caller as they arrive, and the span is closed when the stream is exhausted or closed
  (a response that is never read or closed leaves its span ``running``). Server-sent
  events are parsed as they pass, for the time to first token; the assembled message
  becomes the span output and the raw events, as received, go to ``metadata["stream_sse"]``
  (one string: compact, and exactly what replay must serve; ``parse_sse`` decodes it).
* **No secrets.** Spans hold the request JSON and the response, never headers; secret
  fields of both and credential-like query parameters of ``metadata["url"]`` are redacted
  when the call is captured (``LLMCall``, through :mod:`scenarist.redaction`).
* **Replay seam.** Each hooked call goes through one place that holds the request and
  decides where the response comes from: the original transport method, or the
  :class:`ResponseSource` active in the calling context (:func:`serve_llm_calls`; replay's
  cassettes are one). A source may call the network (recording) or answer itself
  (replaying); a response it answers itself carries ``extensions[REPLAYED]``, and the
  call's span is marked ``replayed`` with the recorded cost kept apart. While a source is
  active the hooks are installed (same reference count as runs), even with no run.
* **Light until there is something to hook.** This module holds only the switch (the
  reference count, the context variable, the import watcher); the hooks live in
  ``_httpx_hook``, ``_urllib3_hook`` and ``_aiohttp_hook``, imported when their library is
  found. A run whose agent loads no HTTP library pays no import for them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import importlib.machinery

__all__ = [
    "REPLAYED",  # noqa: F822 (loaded on first use, see __getattr__)
    "ResponseSource",
    "capture_active",
    "capture_llm_calls",
    "current_source",
    "serve_llm_calls",
]


def __getattr__(name: str) -> Any:
    if name == "REPLAYED":  # with the hooks' machinery, not on the run's first step
        from scenarist.tracing.http._llm_call import REPLAYED

        return REPLAYED
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_LIBRARIES = ("httpx2", "httpx", "urllib3", "aiohttp")

_lock = threading.Lock()
_active_runs = 0
_patches: list[tuple[type, str, Any]] = []  # (class, attribute, original)


class ResponseSource(Protocol):
    """Where the LLM calls of a context get their responses (a cassette, for replay).

    ``send`` performs the call on the network (the original transport method); a source
    may call it (and watch the response) or answer itself with a response of
    ``module`` (``httpx`` or ``httpx2``, whichever the caller uses). An exception it
    raises reaches the caller as the transport's.
    """

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any: ...

    async def respond_async(
        self, request: Any, module: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any: ...


_source: ContextVar[ResponseSource | None] = ContextVar("scenarist_llm_source", default=None)


def current_source() -> ResponseSource | None:
    """The source answering this context's LLM calls (a cassette), or ``None``."""
    return _source.get()


@contextmanager
def serve_llm_calls(source: ResponseSource) -> Iterator[None]:
    """Route the LLM calls made in this context through ``source``, run or no run.

    Context-variable scoped (concurrent tasks each keep their own source; the innermost
    wins) and holds the transport hooks installed while active.
    """
    token = _source.set(source)
    try:
        with capture_llm_calls():
            yield
    finally:
        _source.reset(token)


class capture_llm_calls:  # lower case: used as a function
    """Record the LLM calls made in this context as spans of the current run.

    Re-entrant and safe across threads and tasks: hooks are installed by the first
    active capture and removed when the last one exits. (A class, not a generator
    context manager: every agent call of a run enters one.)
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _active_runs
        with _lock:
            if _active_runs == 0:
                _install()
            _active_runs += 1

    def __exit__(self, *exc: object) -> None:
        global _active_runs
        with _lock:
            _active_runs -= 1
            if _active_runs == 0:
                _uninstall()


def capture_active() -> bool:
    """Whether the transport hooks are installed (some run is capturing)."""
    return bool(_patches)


# -- installing the hooks ------------------------------------------------------------------


def _install() -> None:
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        if module is not None:
            _patch(module)
    if not all(name in sys.modules for name in _LIBRARIES):
        sys.meta_path.insert(0, _PATCH_ON_IMPORT)


def _patch(module: Any) -> None:
    if module.__name__ == "urllib3":  # requests, and plain urllib3
        from scenarist.tracing.http import _urllib3_hook

        _patches.extend(_urllib3_hook.patch(module))
        return
    if module.__name__ == "aiohttp":
        from scenarist.tracing.http import _aiohttp_hook

        _patches.extend(_aiohttp_hook.patch(module))
        return
    from scenarist.tracing.http import _httpx_hook  # httpx2 and httpx

    _patches.extend(_httpx_hook.patch(module))


def _uninstall() -> None:
    if _PATCH_ON_IMPORT in sys.meta_path:
        sys.meta_path.remove(_PATCH_ON_IMPORT)
    while _patches:
        cls, attr, original = _patches.pop()
        setattr(cls, attr, original)


class _PatchOnImport:
    """While a capture is active, hook the HTTP libraries as soon as they are imported.

    Libraries already imported are hooked directly; importing one that is not (about
    80 ms for httpx and httpx2, more for aiohttp) just in case would tax every traced
    run, so an agent that imports its client in the middle of a run is caught here.
    A finder and loader by protocol, not by ``importlib.abc`` base classes: importing
    those loads ``importlib.resources`` (20 ms) on a run's first step.
    """

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _LIBRARIES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader)  # type: ignore[assignment]
                return spec
        return None


class _PatchingLoader:
    """The library's own loader, patching the module once it has run; anything else
    asked of it (sources, resources) is the original loader's answer."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        with _lock:
            if _active_runs > 0:
                _patch(module)


_PATCH_ON_IMPORT = _PatchOnImport()
