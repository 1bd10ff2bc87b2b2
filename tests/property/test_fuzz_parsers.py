"""Fuzz targets for the two parsers that take whatever a person or a file gives them.

- ``engine.page.parse_page`` over arbitrary text built from Markdown and YAML fragments (``[[``,
  ``]]``, ``#``, ``---``, code fences, anchors and aliases, tags, CRLF and lone CR), astral-plane
  characters, lone UTF-16 surrogates, NUL and BOM, as ``str`` (an editor buffer) and as UTF-8
  bytes (a file): it never raises, it is deterministic, every span lies inside the text in UTF-16
  units, and every body link's span holds exactly the link's text.
- ``engine.query.split_operators`` and ``parse_query`` over arbitrary query text (quotes,
  operators such as ``after:`` with absurd values, ``#``, ``-``): they never raise anything but
  the documented ValueError for a bad option, and the query plan ``search_payload`` reports is
  JSON text.

Bounded time: the project profile (tests/conftest.py, derandomized) with more examples per
target, a few seconds each. ``HYPOTHESIS_PROFILE=thorough`` searches much further. Each crash
found is fixed in the engine and kept below as an ``@example`` or a plain test.
"""

from __future__ import annotations

import datetime as dt
import json
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from vaultkit import build_vault

from vaultlens.engine.page import parse_page
from vaultlens.engine.query import parse_query, split_operators
from vaultlens.engine.render import search_payload
from vaultlens.engine.search import search
from vaultlens.engine.text import tokenize, utf16_len

# More examples than the profile (derandomized, no deadline) gives: each target runs a second or two.
FUZZ = settings(max_examples=max(800, settings().max_examples))
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

MARKDOWN = [
    "[[", "]]", "[", "]", "(", ")", "![[", "[[a|b]]", "[[x#h]]", "[[#^b]]", "[x](y.md)", "](", ".md",
    "<", ">", "#", "#tag", "# ", "## H", "^id", "|", "\\", "!", "`", "``", "```", "~~~", "    ", "\t",
    "- ", "1. ", "===", "---", "...", "\n", "\r\n", "\r", " ", "%20", "%", "dendron://v/", "http://x",
    "😀", "𝔸", "é", "\u0301", "\ufeff", "\u2028", "\x00", "\ud800", "\udfff", "\ud83d", "\x85",
]
YAML = [
    "---\n", "title: ", "aliases: [", "tags:\n  - ", "sources: [[A]]\n", "related:\n  - \"[[B]]\"\n",
    "key: value\n", ": ", "&a ", "*a ", "<<: *a\n", "!!python/object:os.system ", "!!binary ", "{", "}",
    "'", "\"", "? ", "%YAML 1.1\n", "- [", "1e999", "2026-13-45", "\t", "\\u",
]
fragment = st.one_of(
    st.sampled_from(MARKDOWN),
    st.sampled_from(YAML),
    st.text(max_size=8),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=2),
    st.text(st.characters(min_codepoint=0x10000, max_codepoint=0x1FFFF), max_size=3),
)
page_texts = st.builds(
    lambda head, parts: head + "".join(parts),
    st.sampled_from(["", "---\n", "\ufeff---\n", "---\r\n", "```\n"]),
    st.lists(fragment, max_size=40),
)
QUERY_WORDS = [
    '"', "'", "-", "#", "type:", "path:", "tag:", "after:", "before:", "after:999999w", "before:0d",
    "after:2026-02-30", "after:9999-12-31T23:59:59-23:59", "before:0001-01-01T00:00:00+23:59",
    "after:99999999999999", "path:../..", "path:/etc", "-x", "#a/b", "\\", "*", "**", "[[", "]]", "😀",
    "\ud800", "\x00", " ", "\t", "\n",
]
query_texts = st.lists(st.one_of(st.sampled_from(QUERY_WORDS), st.text(max_size=6)), max_size=12).map("".join)


def _seen(text: str) -> str:
    """The text as parse_page reads it: lone surrogates replaced, BOM dropped."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def check_page(text: str) -> None:
    page = parse_page("fuzz/p.md", text)
    assert parse_page("fuzz/p.md", text) == page  # deterministic
    lines = re.split(r"\r\n|\r|\n", _seen(text))
    widths = [utf16_len(line) for line in lines]
    spans = [link.span for link in page.links]
    spans += [link.target_span for link in (*page.links, *page.edges)]
    spans += [h.span for h in page.headings] + [t.span for t in page.inline_tags]
    for span in spans:  # inside the text, in UTF-16 units
        assert 0 <= span.start_line <= span.end_line < len(lines)
        assert 0 <= span.start_char <= widths[span.start_line]
        assert 0 <= span.end_char <= widths[span.end_line]
    for link in page.links:  # the body link's text really is there
        span = link.span
        assert span.start_line == span.end_line >= page.body_line
        units = lines[span.start_line].encode("utf-16-le", "surrogatepass")
        assert units[2 * span.start_char : 2 * span.end_char].decode("utf-16-le") == link.raw
        t = link.target_span
        assert (t.start_line, t.end_line) == (span.start_line, span.end_line)
        assert span.start_char <= t.start_char <= t.end_char <= span.end_char
    for problem in page.problems:
        assert problem.message and 0 <= problem.line <= max(len(lines), 1)
    json.dumps(page.meta)  # frontmatter is plain JSON data
    assert page.title


@FUZZ
@given(page_texts)
@example("[[a `b` c]]\n")
@example("---\nx: !!python/object/apply:os.system ['true']\n---\n[[A]]")
@example("---\n" + "a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b]\n" + "---\n")
def test_parse_page_never_raises_and_spans_are_in_the_text(text):
    check_page(text)


@FUZZ
@given(page_texts)
def test_parse_page_of_the_utf8_bytes_equals_parse_of_the_text(text):
    data = text.encode("utf-8", "surrogatepass")  # lone surrogates make invalid UTF-8
    page = parse_page("fuzz/p.md", data)
    assert parse_page("fuzz/p.md", data) == page
    if any("\ud800" <= c <= "\udfff" for c in text):
        assert "invalid-utf8" in [p.code for p in page.problems]
    else:
        assert page == parse_page("fuzz/p.md", text)


@FUZZ
@given(query_texts)
@example("after:999999w")
@example("before:999999w")
def test_split_operators_never_raises_and_keeps_only_known_operators(text):
    words, ops = split_operators(text)
    assert isinstance(words, str)
    assert {op for op, _ in ops} <= {"phrase", "exclude", "tag", "type", "path", "after", "before"}
    assert split_operators(text) == (words, ops)


VAULT = build_vault({"a.md": "# Alpha\n[[b]] #tag\n", "b.md": "---\ntype: note\n---\nbeta alpha\n"})


@FUZZ
@given(query_texts, st.booleans())
@example("after:999999w", False)
@example("before:999999w", True)
def test_parse_query_never_raises_and_the_plan_is_json(text, prefix):
    query = parse_query(text, prefix=prefix, now=NOW)
    assert parse_query(text, prefix=prefix, now=NOW) == query
    payload = search_payload(VAULT, query, search(VAULT, query))
    json.loads(json.dumps(payload))
    assert payload["query"] == text


@FUZZ
@given(query_texts)
@example("999999w")
def test_time_options_are_a_clear_value_error_or_a_time(text):
    for option in ("since", "until"):
        try:
            query = parse_query("x", now=NOW, **{option: text})
        except ValueError as exc:
            assert str(exc)  # a sentence for the person who typed it
        else:  # an empty value is no bound
            assert isinstance(query.since or query.until, dt.datetime) or not text


_REFERENCE_TOKEN = re.compile(r"[^\W_]+")


@FUZZ
@given(st.one_of(st.text(), st.text(alphabet=st.characters(max_codepoint=127))))
@example("Hello, World_42 naïve café ÀB x\x1cy\u00a0z")
@example("a_b-c/d.e\tf\r\ng\x00h\x7f")
def test_tokenize_is_casefolded_runs_of_letters_and_digits(text):
    # ASCII text takes a quicker path (bytes.translate and split); both give these tokens
    assert tokenize(text) == _REFERENCE_TOKEN.findall(text.casefold())
