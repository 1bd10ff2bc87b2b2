"""The frontmatter fast path reads exactly what libyaml reads, or declines.

``engine.page.simple_yaml`` handles the common subset of frontmatter (``key: scalar``, flow
lists, ``- item`` blocks) without PyYAML's Python-level constructor. For any text it either
returns ``_NOT_SIMPLE`` or a value equal, type for type, to ``yaml.load(text, CSafeLoader)``.
"""

from __future__ import annotations

import datetime as dt

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultlens.engine.page import _NOT_SIMPLE, parse_page, simple_yaml

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def same(a, b) -> bool:
    """Equal and of the same types all the way down (True != 1, date != "2024-01-02")."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def check(source: str) -> bool:
    """Whether the fast path agreed with libyaml (True) or declined (False); fails on a mismatch."""
    fast = simple_yaml(source)
    if fast is _NOT_SIMPLE:
        return False
    expected = yaml.load(source, Loader=Loader)  # noqa: S506 - a safe loader
    assert same(fast, expected), (source, fast, expected)
    return True


# Pieces chosen to sit on every edge of the subset: YAML 1.1 booleans and nulls, numbers,
# dates (valid and not), indicators, comments, colons, quotes, brackets and odd characters.
WORDS = [
    "a", "Note", "yes", "No", "on", "OFF", "y", "n", "null", "Null", "nULL", "~", "true", "False",
    "0", "7", "012", "1_000", "1.5", ".5", "1e3", "-3", "+3", "0x1f", "2024-01-28", "2024-1-2",
    "2024-13-45", "2024-02-30", "10:30", "x:y", "x: y", "x:", "x #c", "x#c", "C#", "é", "naïve",
    "Ünïcode", "½", "²", "x y", "x  y", "x, y", "x]", "x[", "x{", "x}", "[[X]]", "[[X Y]]", "-x",
    "- x", "?x", "? x", "!x", "&a", "*a", "|", ">", "%x", "@x", "`x`", "x'y", 'x"y', "'q'", '"q"',
    "'it''s'", '"a\\"b"', '"a, b"', "'[[A]]'", '"[[A]]"', "[]", "[ ]", "[a, b]", "[a,b]", "[a,]",
    "[1, 2024-01-02]", '["[[A]]", "[[B]]"]', "[[A], [B]]", "{a: b}", "<<", "=", "x\u2028y",
    "x\x85y", "x\ufeffy", "x\x01y", "x\x7fy", "",
]
KEYS = ["title", "aliases", "tags", "type", "created", "a-b", "x_1", "yes", "On", "null", "y", "1", "é", "t"]


@st.composite
def frontmatter(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["scalar", "list", "blank", "comment", "odd"]))
        key = draw(st.sampled_from(KEYS))
        if kind == "scalar":
            lines.append(f"{key}:{draw(st.sampled_from(['', ' ', '  ']))}{draw(st.sampled_from(WORDS))}"
                         + draw(st.sampled_from(["", " ", "  ", " # c"])))
        elif kind == "list":
            lines.append(f"{key}:" + draw(st.sampled_from(["", " "])))
            indent = draw(st.sampled_from(["", " ", "  ", "    "]))
            for _ in range(draw(st.integers(0, 4))):
                lines.append(indent + draw(st.sampled_from(["- ", "-", "-  ", " - ", "\t- "]))
                             + draw(st.sampled_from(WORDS)))
                if draw(st.booleans()):
                    lines.append(draw(st.sampled_from(["", "  ", "# c", "  # c", "  more"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "   "])))
        elif kind == "comment":
            lines.append(draw(st.sampled_from(["# c", "  # c", "#"])))
        else:
            lines.append(draw(st.sampled_from(["- x", " key: v", "key : v", "key:v", "? k", "%YAML 1.1", "\tk: v"])))
    return "\n".join(lines)


@given(frontmatter())
@settings(max_examples=400)
def test_simple_yaml_equals_libyaml_or_declines(source):
    try:
        check(source)
    except yaml.YAMLError:
        pytest.fail(f"simple_yaml accepted text libyaml rejects: {source!r}")
    except ValueError:  # libyaml's own failure (an impossible date): the fast path must decline
        assert simple_yaml(source) is _NOT_SIMPLE


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_simple_yaml_on_arbitrary_text(source):
    try:
        check(source)
    except (yaml.YAMLError, ValueError):
        assert simple_yaml(source) is _NOT_SIMPLE


@pytest.mark.parametrize(
    "source",
    [
        'title: "Cycle Wire"\naliases:\n  - "landscape liquid"\ntags:\n  - history/error\n  - another\n'
        "type: concept\ncreated: 2024-01-28\nsources:\n  - \"[[Failure Stadium]]\"\nrelated: []\ndepends_on: []",
        "tags: [ai, rag]\nrelated:\n- [[Graph RAG]]\n- \"[[Vector Search]]\"\nscore: 3",
        "# a comment\ntitle: Plain title, with comma\n\naliases:\n-\n- 'quoted'",
        "",
        "# only a comment",
    ],
)
def test_simple_yaml_reads_what_vaults_write(source):
    assert check(source)


@pytest.mark.parametrize("source", ["title: yes", "a: 1.5", "a: x #c", "a: |\n  x", "a: &x 1", "- x", "a: b: c"])
def test_simple_yaml_declines_what_it_does_not_know(source):
    assert simple_yaml(source) is _NOT_SIMPLE


def test_pages_parse_the_same_either_way(monkeypatch):
    text = "---\ntitle: T\ncreated: 2024-01-28\ntags: [a, b/c]\n---\n# T\n"
    fast = parse_page("T.md", text)
    monkeypatch.setattr("vaultlens.engine.page.simple_yaml", lambda source: _NOT_SIMPLE)
    slow = parse_page("T.md", text)
    assert fast == slow and fast.meta == slow.meta == {"title": "T", "created": "2024-01-28", "tags": ["a", "b/c"]}
    assert isinstance(dt.date.fromisoformat(fast.meta["created"]), dt.date)
