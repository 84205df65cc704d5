"""Rendering a page model: HTML through Jinja2, or its JSON twin.

Escaping rules (everything shown came from an agent or a user):

- The Jinja2 environment autoescapes every template; no template applies ``|safe``.
- Data for scripts goes through :func:`script_json` into a
  ``<script type="application/json">`` block that ``dashboard.js`` reads with
  ``JSON.parse(textContent)``; ``<``, ``>``, ``&`` and the two JavaScript line separators
  are written as ``\\uXXXX`` escapes, so no value can close the block.
- Values placed in URLs go through :func:`url_part` (percent-encoding, ``/`` included).
- Pages are sent with a Content-Security-Policy that allows scripts from this server only.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel

from scenarist._json_limits import finite
from scenarist._version import __version__
from scenarist.judges.health import JUDGE_KINDS
from scenarist.report._money import format_usd
from scenarist.server._responses import FiniteJSONResponse
from scenarist.server.projects import switcher

__all__ = ["SECURITY_HEADERS", "not_found", "page_format", "render", "script_json", "url_part"]

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

_SCRIPT_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def script_json(value: Any) -> Markup:
    """``value`` as JSON that is inert inside ``<script type="application/json">``."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or an infinity stored by the library: JSON.parse would fail
        text = json.dumps(finite(value), ensure_ascii=False, separators=(",", ":"))
    for char, escape in _SCRIPT_ESCAPES.items():
        text = text.replace(char, escape)
    return Markup(text)  # every character that could end the block is escaped above


def url_part(value: Any) -> str:
    """One URL path segment (or query value): every reserved character encoded."""
    return quote(str(value), safe="")


def _pretty(value: Any) -> str:
    """A stored value for display: strings as they are, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _duration(ms: float | None) -> str:
    if ms is None:
        return "–"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _day_before(at: datetime) -> str:
    """An exclusive end bound shown as the inclusive day a date field holds."""
    return (at - timedelta(days=1)).strftime("%Y-%m-%d")


def _percent(rate: float | None) -> str:
    return "–" if rate is None else f"{rate:.1%}"


def _delta(delta: Any, unit: str) -> str:
    """A compare delta (``store.sql.compare.Delta``): ``before → after (+change, +pct%)``
    in ``unit`` (``cost``, ``ms`` or ``tokens``)."""

    def show(value: float | None, sign: bool = False) -> str:
        if value is None:
            return "–"
        prefix = "+" if sign and value > 0 else ("-" if sign and value < 0 else "")
        size = abs(value) if sign else value
        if unit == "cost":
            return prefix + format_usd(size)
        if unit == "ms":
            return prefix + _duration(size)
        return f"{prefix}{size:,.0f}"

    text = f"{show(delta.before)} → {show(delta.after)}"
    if delta.change is None:
        return text
    if delta.change == 0:
        return text + " (no change)"
    percent = f", {delta.percent:+.1f}%" if delta.percent is not None else ""
    return f"{text} ({show(delta.change, sign=True)}{percent})"


def _when(at: datetime | None) -> str:
    return "–" if at is None else at.strftime("%Y-%m-%d %H:%M:%S")


_env = Environment(
    loader=PackageLoader("scenarist.server", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters.update(
    script_json=script_json,
    url=url_part,
    pretty=_pretty,
    duration=_duration,
    cost=format_usd,
    day_before=_day_before,
    percent=_percent,
    when=_when,
    delta=_delta,
)
_env.globals.update(version=__version__, judge_kinds=JUDGE_KINDS, project_switcher=switcher)


def page_format(request: Request, value: str = "") -> tuple[str, bool]:
    """``(value, wants_json)``: ``?format=json|html`` decides; else a ``.json`` suffix on
    the last path parameter (removed from ``value``); else HTML for htmx's requests
    (``HX-Request``, sent with ``Accept: */*``) and for clients that ask for
    ``text/html`` (browsers), JSON for everyone else."""
    chosen = request.query_params.get("format")
    if chosen in ("json", "html"):
        return value, chosen == "json"
    if value.endswith(".json"):
        return value[: -len(".json")], True
    if request.headers.get("hx-request") == "true":
        return value, False
    return value, "text/html" not in request.headers.get("accept", "")


def render(
    template: str,
    page: BaseModel,
    *,
    wants_json: bool,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    """The page as its template, or as JSON (the same model, nothing more)."""
    if wants_json:
        return FiniteJSONResponse(page.model_dump(mode="json"), status_code=status_code)
    html = _env.get_template(template).render(page=page, **extra)
    return HTMLResponse(html, status_code=status_code, headers=SECURITY_HEADERS)


def not_found(message: str, *, wants_json: bool) -> Response:
    """404 as the API's JSON error, or as a small page."""
    if wants_json:
        body = {"error": {"code": "not_found", "message": message}}
        return JSONResponse(body, status_code=404)
    html = _env.get_template("not_found.html").render(message=message)
    return HTMLResponse(html, status_code=404, headers=SECURITY_HEADERS)
