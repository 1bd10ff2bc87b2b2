"""Tokens, stems and UTF-16 columns: the text primitives every other module shares.

A token is a maximal run of Unicode letters or digits, casefolded. Stems are Porter stems
(Snowball ``porter``: PyStemmer's C build, or snowballstemmer's pure Python), memoised per
process because a vault's vocabulary is small.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+")
# A snowball stemmer keeps the word it works on in the object itself, so two threads stemming at
# once (two workspace folders indexed side by side) corrupt each other's word: IndexError inside
# the stemmer, and the vault's index failed. Each thread gets a stemmer of its own.
_STEMMERS = threading.local()


def _stemmer():
    found = getattr(_STEMMERS, "porter", None)
    if found is None:
        found = _STEMMERS.porter = _porter()
    return found


def _porter():
    """A new Porter stemmer: PyStemmer's (the Snowball algorithms compiled to C: ~1.7 us a word
    against ~15 for snowballstemmer's pure Python, the same stems), else snowballstemmer's.
    Imported here, not with the module: parse workers never stem (the server does), and
    snowballstemmer's package imports every language's stemmer (~3 MB a process)."""
    try:
        import Stemmer
    except ImportError:
        import snowballstemmer

        return snowballstemmer.stemmer("porter")
    return Stemmer.Stemmer("porter", 0)  # no cache of its own: ``stem`` remembers words


# No word is this long; the stemmer's pure-Python loops would take minutes on a page that is
# one multi-megabyte token, so longer tokens are their own stem.
MAX_STEM_CHARS = 64


# ASCII text (most of most pages) is tokenized without the regular expression: letters lowered,
# digits kept, every other byte a space, then split. For ASCII, ``[^\W_]`` is [A-Za-z0-9] and
# casefolding is lowering, so the tokens are the same (a property test compares the two), at
# less than half the time: body tokens are most of a cold start's parsing.
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)


# stem and fold remember this many words each (about 0.2 KB a word), least recently used out:
# every distinct word ever typed in a buffer passes through them.
WORD_MEMO_MAX = 65_536

def tokenize(text: str) -> list[str]:
    """Casefolded maximal runs of letters and digits, in order."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    return _TOKEN.findall(text.casefold())


def query_terms(text: str) -> tuple[str, ...]:
    """A query's terms: its tokens with duplicates removed, first occurrence kept."""
    return tuple(dict.fromkeys(tokenize(text)))


@lru_cache(maxsize=WORD_MEMO_MAX)
def stem(token: str) -> str:
    """The Porter stem of one casefolded token, diacritics folded first (``naïve`` -> ``naiv``).

    Folding here puts ``café`` and ``cafe`` in one stem group, so the vault's stem index finds
    both; scoring tells a diacritics-only difference (``folded-term``) from a stem match.
    """
    if len(token) > MAX_STEM_CHARS:
        return fold(token)
    return _stemmer().stemWord(fold(token))


@lru_cache(maxsize=WORD_MEMO_MAX)
def fold(token: str) -> str:
    """``token`` without combining marks (NFKD, marks dropped): ``café`` -> ``cafe``.

    Letters that do not decompose (``ß``, ``ø``, ``ł``) are kept as they are.
    """
    if token.isascii():
        return token
    return "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))


def utf16_len(text: str) -> int:
    """How many UTF-16 code units ``text`` takes (what LSP columns count)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def utf16_col(line: str, index: int) -> int:
    """The UTF-16 column of code-point ``index`` in ``line``."""
    if line.isascii():
        return index
    return utf16_len(line[:index])


def index_of_utf16(line: str, col: int) -> int:
    """The code-point index of UTF-16 column ``col`` in ``line`` (clamped to the line)."""
    if line.isascii():
        return max(0, min(col, len(line)))
    units = 0
    for i, ch in enumerate(line):
        if units >= col:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def collapse(text: str) -> str:
    """Whitespace runs folded to one space, ends stripped."""
    return " ".join(text.split())
