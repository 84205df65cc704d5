"""Choosing scenarios on the command line: ``-k EXPR`` and ``--tag KEY:VALUE``.

``-k`` works like pytest's: words match as case-insensitive substrings of the scenario
name, combined with ``and``, ``or``, ``not`` and parentheses (``-k "card and not
lost"``). ``--tag KEY:VALUE`` keeps scenarios carrying that tag; ``--tag KEY`` keeps the
bare tag ``KEY`` or any ``KEY:...`` value; repeated ``--tag`` options are alternatives
(any of them), like :meth:`Suite.select`. Both filters together must both match.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scenarist.engine.scenario import Scenario
from scenarist.errors import UserError

__all__ = ["Matcher", "parse_keyword", "parse_tags"]

Matcher = Callable[[Scenario], bool]
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_TAG = re.compile(r"[^\s:=]+(:[^\s]*)?")


def parse_keyword(expression: str) -> Matcher:
    """A predicate for ``-k``; ``UserError`` naming the problem if it does not parse."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        raise UserError(f"-k {expression!r} is empty; give words such as -k 'card and not lost'")
    position = 0

    def fail(problem: str) -> UserError:
        return UserError(
            f"-k {expression!r}: {problem}; use words with and/or/not and parentheses, "
            "e.g. -k 'card and not lost'"
        )

    def peek() -> str | None:
        return str(tokens[position]) if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        position += 1
        return str(tokens[position - 1])

    def expr() -> Matcher:
        options = [term()]
        while peek() == "or":
            take()
            options.append(term())
        return lambda s: any(m(s) for m in options)

    def term() -> Matcher:
        required = [factor()]
        while peek() == "and":
            take()
            required.append(factor())
        return lambda s: all(m(s) for m in required)

    def factor() -> Matcher:
        token = peek()
        if token is None:
            raise fail("it ends too early")
        take()
        if token == "not":
            inner = factor()
            return lambda s: not inner(s)
        if token == "(":
            inner = expr()
            if peek() != ")":
                raise fail("a '(' is not closed")
            take()
            return inner
        if token in {")", "and", "or"}:
            raise fail(f"unexpected {token!r}")
        word = token.lower()
        return lambda s: word in s.name.lower()

    matcher = expr()
    if position != len(tokens):
        raise fail(f"unexpected {tokens[position]!r}")
    return matcher


def parse_tags(filters: list[str]) -> Matcher | None:
    """A predicate for the ``--tag`` options (``None`` when there are none)."""
    if not filters:
        return None
    wanted: list[tuple[str, str | None]] = []
    for item in filters:
        if not _TAG.fullmatch(item):
            raise UserError(
                f"--tag {item!r} is not a tag filter; use KEY:VALUE (e.g. --tag topic:payments) "
                "or a bare KEY (e.g. --tag smoke)"
            )
        key, _, value = item.partition(":")
        wanted.append((key, value if ":" in item else None))

    def matches(scenario: Scenario) -> bool:
        for key, value in wanted:
            for tag in scenario.tags:
                tag_key, colon, tag_value = tag.partition(":")
                if tag_key != key:
                    continue
                if value is None or (colon and tag_value == value) or (not colon and not value):
                    return True
        return False

    return matches
