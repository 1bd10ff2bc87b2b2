"""parse_page: link forms and their exact spans, code exclusions, tags, headings, block ids,
frontmatter variants, typed edges, malformed YAML and hostile input.

Spans are 0-based document lines and 0-based UTF-16 columns, end exclusive.
"""

from __future__ import annotations

import time

import pytest

from vaultlens.engine.model import Span
from vaultlens.engine.page import LARGE_PAGE_BYTES, parse_page


def parse(text: str | bytes, path: str = "notes/page.md", **options):
    return parse_page(path, text, **options)


def link_parts(page) -> list[tuple]:
    return [(l.kind, l.target, l.heading, l.block, l.label) for l in page.links]


def targets(page) -> list[str]:
    return [l.target for l in page.links]


def utf16(text: str) -> int:
    """UTF-16 code units of ``text``, computed independently of the engine."""
    return len(text.encode("utf-16-le")) // 2


# --- link forms ------------------------------------------------------------------------------

LINK_FORMS = [
    ("[[T]]", [("wiki", "T", None, None, None)]),
    ("[[T|label]]", [("wiki", "T", None, None, "label")]),
    ("[[T#Heading]]", [("wiki", "T", "Heading", None, None)]),
    ("[[T#^block-1]]", [("wiki", "T", None, "block-1", None)]),
    ("[[T#Heading|shown]]", [("wiki", "T", "Heading", None, "shown")]),
    ("[[#Local heading]]", [("wiki", "", "Local heading", None, None)]),
    ("![[embed]]", [("embed", "embed", None, None, None)]),
    ("![[diagram.png]]", [("embed", "diagram.png", None, None, None)]),
    ("[[folder/Sub Page]]", [("wiki", "folder/Sub Page", None, None, None)]),
    ("| [[T\\|label]] | cell |", [("wiki", "T", None, None, "label")]),
    ("[text](Other.md)", [("md", "Other.md", None, None, "text")]),
    ("[text](Some%20Page.md)", [("md", "Some Page.md", None, None, "text")]),
    ("[up](../up/Other.md)", [("md", "../up/Other.md", None, None, "up")]),
    ("[sec](Other.md#Part%20Two)", [("md", "Other.md", "Part Two", None, "sec")]),
    ("[blk](Other.md#^b1)", [("md", "Other.md", None, "b1", "blk")]),
    ("[angle](<with space.md>)", [("md", "with space.md", None, None, "angle")]),
    ('[titled](Other.md "A title")', [("md", "Other.md", None, None, "titled")]),
    ("![img](Note.md)", [("embed", "Note.md", None, None, "img")]),
    ("[web](http://example.com/page.md)", []),
    ("[web](https://example.com)", []),
    ("[mail](mailto:someone@example.md)", []),
    ("[pic](image.png)", []),
    ("[anchor](#local)", []),
    ("[[]]", []),
    ("plain [brackets] and [[unclosed", []),
    ("[[A]] then [b](B.md) then [[C|c]]", [
        ("wiki", "A", None, None, None),
        ("md", "B.md", None, None, "b"),
        ("wiki", "C", None, None, "c"),
    ]),
]


@pytest.mark.parametrize("line, expected", LINK_FORMS, ids=[c[0] for c in LINK_FORMS])
def test_link_form(line, expected):
    assert link_parts(parse(line + "\n")) == expected


def test_link_spans_count_utf16_columns():
    text = (
        "---\n"
        "title: Spans\n"
        "---\n"
        "Intro [[Alpha]] and [[Beta|b]].\n"
        "😀 é [[Gamma#Part]] then ![[Delta]]\n"
        "ééé [m](Epsilon%20Page.md)\n"
    )
    page = parse(text)
    got = [(l.raw, l.span, l.target_span) for l in page.links]
    assert got == [
        ("[[Alpha]]", Span(3, 6, 3, 15), Span(3, 8, 3, 13)),
        ("[[Beta|b]]", Span(3, 20, 3, 30), Span(3, 22, 3, 26)),
        # 😀 is one code point but two UTF-16 units: every column after it is one more.
        ("[[Gamma#Part]]", Span(4, 5, 4, 19), Span(4, 7, 4, 12)),
        ("![[Delta]]", Span(4, 25, 4, 35), Span(4, 28, 4, 33)),
        ("[m](Epsilon%20Page.md)", Span(5, 4, 5, 26), Span(5, 8, 5, 25)),
    ]
    emoji_line = text.splitlines()[4]
    assert emoji_line.index("[[") == 4 and utf16(emoji_line[:4]) == 5


def test_span_columns_agree_with_an_independent_utf16_count():
    lines = ["a 😀😀 [[One]] 𝕏 [[Two|t]]", "ж ñ 中文 [[Three]]", "plain [[Four]]"]
    page = parse("\n".join(lines) + "\n")
    for link in page.links:
        line = lines[link.span.start_line]
        start = line.index(link.raw)
        assert (link.span.start_char, link.span.end_char) == (utf16(line[:start]), utf16(line[: start + len(link.raw)]))
        tstart = line.index(link.target, start)
        assert (link.target_span.start_char, link.target_span.end_char) == (
            utf16(line[:tstart]),
            utf16(line[: tstart + len(link.target)]),
        )


def test_crlf_and_bom_keep_line_numbers():
    page = parse("\ufeff---\r\ntitle: Win\r\n---\r\nfirst\r\n[[X]]\r\n")
    assert page.title == "Win"
    assert [(l.target, l.span.start_line, l.span.start_char) for l in page.links] == [("X", 4, 0)]


# --- code exclusions -------------------------------------------------------------------------

CODE_DOC = """\
Real [[Keep1]] #keep1

```
[[Fenced]] #fenced
```

~~~python
[[Tilde]] #tilde
~~~

````
```
[[InnerFence]]
```
[[StillFenced]] #stillfenced
````

Para with `[[Inline]] #inline` and ``double `[[Inline2]]` ticks`` then [[Keep2]].
An unmatched ` backtick is no code: [[Keep3]]

    [[IndentedCode]] #indented
    [[IndentedCode2]]

- item [[Keep4]]

    - nested after a blank line [[Keep5]] #keep5
        - deeper [[Keep6]]
- item

    continuation paragraph [[Keep7]]

Paragraph
    lazy continuation [[Keep8]]

  ```
  [[IndentedFence]]
  ```
"""


def test_nothing_inside_code_is_a_link_or_tag():
    page = parse(CODE_DOC)
    assert targets(page) == [f"Keep{i}" for i in range(1, 9)]
    assert page.tags == ("keep1", "keep5")


def test_indented_code_needs_a_blank_line_before_it_and_no_list():
    assert targets(parse("Para\n    [[Lazy]]\n")) == ["Lazy"]
    assert targets(parse("Para\n\n    [[Code]]\n")) == []
    assert targets(parse("    [[CodeAtStart]]\n")) == []
    assert targets(parse("\tTabbed [[Code]]\n")) == []
    assert targets(parse("1. first\n\n    [[InItem]]\n")) == ["InItem"]
    # A paragraph after a blank line ends the list: indentation after it is code again.
    assert targets(parse("- item\n\nOut of the list\n\n    [[Code]]\n")) == []


def test_fence_closes_only_with_the_same_character_and_length():
    doc = "```\n~~~\n[[A]]\n``\n[[B]]\n```\n[[After]]\n"
    assert targets(parse(doc)) == ["After"]


def test_code_inside_a_block_quote_or_callout_is_code():
    doc = ("> [!tip] Colours\n> ```css\n> .x { color: #ff0000; } [[InCode]]\n> ```\n> after #real [[Real]]\n\n"
           "> > ```\n> > #deep [[Deep]]\n> #shallow\n\n> ```\n> #open\nplain #lazy [[Lazy]]\n")
    page = parse(doc)
    assert page.tags == ("lazy", "real", "shallow")  # the quote ending ends the fence it holds
    assert targets(page) == ["Real", "Lazy"]


def test_unclosed_fence_hides_the_rest():
    assert targets(parse("[[Before]]\n```\n[[In]]\n")) == ["Before"]


# --- tags ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "frontmatter, expected",
    [
        ("tags: [Alpha, beta/gamma]", ("alpha", "beta/gamma")),
        ("tags:\n  - one\n  - '#two'", ("one", "two")),
        ('tags: "one, two three"', ("one", "three", "two")),
        ("tags: solo", ("solo",)),
        ("tag: single", ("single",)),
        ("tags:", ()),
        ("tags: {a: 1}", ()),
    ],
)
def test_frontmatter_tags(frontmatter, expected):
    assert parse(f"---\n{frontmatter}\n---\nbody\n").tags == expected


def test_inline_tags_and_what_is_not_a_tag():
    body = (
        "#start and #Inline #nested/Tag/deep and #y2024 and #kebab-case\n"
        "# Heading is not a tag\n"
        "## Heading with #intitle\n"
        "#NoSpace is a tag, not a heading\n"
        "http://example.com/page#fragment and https://x.com/#/route\n"
        "[anchor](#local-anchor) and [sec](Other.md#section) and [[Page#Heading]]\n"
        "issue #123 and word#glued and # lonely\n"
    )
    page = parse(body)
    assert page.tags == ("inline", "intitle", "kebab-case", "nested/tag/deep", "nospace", "start", "y2024")
    assert [h.text for h in page.headings] == ["Heading is not a tag", "Heading with #intitle"]


def test_frontmatter_and_inline_tags_merge_sorted_unique_casefolded():
    page = parse("---\ntags: [Beta, alpha]\n---\n#ALPHA #gamma\n")
    assert page.tags == ("alpha", "beta", "gamma")
    assert [t.name for t in page.inline_tags] == ["ALPHA", "gamma"]


def test_inline_tag_span_counts_utf16():
    page = parse("---\ntitle: t\n---\n😀 #tag\n")
    (tag,) = page.inline_tags
    assert tag.span == Span(3, 3, 3, 7)


# --- headings and block ids ------------------------------------------------------------------


def test_headings_atx_and_setext():
    doc = (
        "# One\n"
        "## Two ##\n"
        "###### Six\n"
        "####### Seven is text\n"
        "### Closing#not\n"
        "  ### Indented three\n"
        "Setext One\n"
        "==========\n"
        "Setext Two\n"
        "---\n"
        "```\n"
        "# not a heading in code\n"
        "```\n"
        "#\n"
    )
    page = parse(doc)
    assert [(h.level, h.text, h.span.start_line) for h in page.headings] == [
        (1, "One", 0),
        (2, "Two", 1),
        (6, "Six", 2),
        (3, "Closing#not", 4),
        (3, "Indented three", 5),
        (1, "Setext One", 6),
        (2, "Setext Two", 8),
        (1, "", 13),
    ]


def test_heading_lines_count_after_frontmatter():
    page = parse("---\ntitle: x\n---\n\n## Later\n")
    assert [(h.level, h.text, h.span) for h in page.headings] == [(2, "Later", Span(4, 0, 4, 8))]


def test_list_item_followed_by_dashes_is_not_a_setext_heading():
    assert parse("- item\n---\n").headings == ()


def test_block_ids():
    doc = "Some text ^abc-1\n^solo\nnot^glued\ntext ^two words\n```\ncode ^incode\n```\n"
    assert parse(doc).blocks == (("abc-1", 0), ("solo", 1))


# --- frontmatter: title, aliases, type, dates ------------------------------------------------


@pytest.mark.parametrize(
    "frontmatter, title",
    [
        ("title: Graph RAG", "Graph RAG"),
        ("title: '  Spaced  '", "Spaced"),
        ("title: 2024", "2024"),
        ("title:", "page"),
        ("title: ''", "page"),
        ("other: x", "page"),
    ],
)
def test_title_from_frontmatter_else_stem(frontmatter, title):
    assert parse(f"---\n{frontmatter}\n---\n", path="notes/page.md").title == title


def test_title_is_the_stem_without_frontmatter():
    page = parse("# A Heading Is Not The Title\n", path="deep/dir/My Note.md")
    assert (page.title, page.stem) == ("My Note", "My Note")


@pytest.mark.parametrize(
    "frontmatter, aliases",
    [
        ("aliases: [One, Two Words]", ("One", "Two Words")),
        ("aliases:\n  - One\n  - One\n  - Two", ("One", "Two")),
        ('aliases: "One, Two Words"', ("One", "Two Words")),
        ("aliases: Single Name", ("Single Name",)),
        ("alias: Solo", ("Solo",)),
        ("aliases: [1984, true]", ("1984", "true")),
        ("aliases:", ()),
    ],
)
def test_aliases(frontmatter, aliases):
    assert parse(f"---\n{frontmatter}\n---\n").aliases == aliases


def test_type_and_dates_as_text():
    page = parse("---\ntype: concept\ncreated: 2024-01-02\nupdated: 2024-03-04 10:20:30\n---\n")
    assert (page.type, page.created, page.updated) == ("concept", "2024-01-02", "2024-03-04T10:20:30")
    assert page.meta["created"] == "2024-01-02"


# --- typed edges -----------------------------------------------------------------------------


def test_typed_edges_every_yaml_form():
    text = (
        "---\n"
        "sources:\n"
        '  - "[[Src One|label]]"\n'
        "  - Plain Title\n"
        "related: [[Rel]]\n"
        "depends_on:\n"
        "  - [[Dep One]]\n"
        '  - "[[Dep Two#Section]]"\n'
        "  - [[Dep Three|shown]]\n"
        "---\n"
        "Body [[Body Link]]\n"
    )
    page = parse(text)
    assert [(e.kind, e.target, e.heading, e.label) for e in page.edges] == [
        ("sources", "Src One", None, "label"),
        ("sources", "Plain Title", None, None),
        ("related", "Rel", None, None),
        ("depends_on", "Dep One", None, None),
        ("depends_on", "Dep Two", "Section", None),
        ("depends_on", "Dep Three", None, "shown"),
    ]
    # Each edge points at where its target is written in the frontmatter.
    assert [(e.span.start_line, e.span.start_char) for e in page.edges] == [
        (2, 7), (3, 4), (4, 11), (6, 6), (7, 7), (8, 6),
    ]
    assert targets(page) == ["Body Link"]


@pytest.mark.parametrize(
    "frontmatter, expected",
    [
        ('related: "[[X|y]]"', [("related", "X", "y")]),
        ("related: Plain Title", [("related", "Plain Title", None)]),
        ("related: [A, B]", [("related", "A", None), ("related", "B", None)]),
        ("related: [[A]]", [("related", "A", None)]),
        ("related: [[A|b]]", [("related", "A", "b")]),
        ("sources: ['[[A]]', '[[B]]']", [("sources", "A", None), ("sources", "B", None)]),
        ("depends_on: 42", []),
        ("related: {a: 1}", []),
        ("related:\n  - ''\n  - '[[]]'", []),
    ],
)
def test_typed_edge_values(frontmatter, expected):
    page = parse(f"---\n{frontmatter}\n---\n")
    assert [(e.kind, e.target, e.label) for e in page.edges] == expected


# --- malformed frontmatter never drops the page ----------------------------------------------

MALFORMED = [
    ("unclosed quote", '---\ntitle: "abc\ntags: [x]\ntype: note\n---\nBody [[L]] #t\n', "frontmatter-yaml", 1),
    ("unclosed flow list", "---\ntitle: T\ntags: [a, b\ntype: note\n---\nBody [[L]] #t\n", "frontmatter-yaml", 2),
    ("bad indentation", "---\ntitle: ok\nlist:\n  - a\n - b\n---\nBody [[L]] #t\n", "frontmatter-yaml", 4),
    ("mapping in a scalar", "---\ntitle: x\n  foo: bar\n---\nBody [[L]] #t\n", "frontmatter-yaml", 2),
    ("tab indentation", "---\ntitle: x\n\ttags: y\n---\nBody [[L]] #t\n", "frontmatter-yaml", 2),
    ("a list as the whole frontmatter", "---\n- a\n- b\n---\nBody [[L]] #t\n", "frontmatter-not-mapping", 1),
    ("a scalar as the whole frontmatter", "---\njust words\n---\nBody [[L]] #t\n", "frontmatter-not-mapping", 1),
    ("unclosed ---", "---\ntitle: x\nBody [[L]] #t\n", "frontmatter-unclosed", 0),
]


@pytest.mark.parametrize("name, text, code, line", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_frontmatter_keeps_the_body(name, text, code, line):
    page = parse(text, path="dir/Broken.md")
    assert [(p.code, p.line) for p in page.problems] == [(code, line)]
    assert page.problems[0].message
    assert page.title == "Broken"  # nothing from the broken frontmatter is trusted
    assert targets(page) == ["L"]
    assert page.tags == ("t",)
    body_line = text.splitlines().index("Body [[L]] #t")
    assert page.links[0].span.start_line == body_line


def test_frontmatter_lines_are_not_body_when_well_formed():
    page = parse("---\ntitle: T\nnote: '[[NotALink]] #nottag'\n---\nBody\n")
    assert (targets(page), page.tags, page.body, page.body_line) == ([], (), "Body\n", 4)


def test_empty_frontmatter_is_no_problem():
    page = parse("---\n---\n[[L]]\n")
    assert (page.problems, targets(page), page.body_line) == ((), ["L"], 2)


def test_billion_laughs_alias_bomb_is_bounded():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "---\n" + "\n".join(lines) + "\n---\nBody [[L]]\n"
    start = time.perf_counter()
    page = parse(text)
    assert time.perf_counter() - start < 2.0
    assert [p.code for p in page.problems] == ["frontmatter-too-large"]
    assert targets(page) == ["L"]

    def count(value) -> int:
        if isinstance(value, dict):
            return 1 + sum(count(v) for v in value.values())
        if isinstance(value, list):
            return 1 + sum(count(v) for v in value)
        return 1

    assert count(page.meta) <= 20_000


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}")])
def test_deeply_nested_frontmatter_does_not_raise(opening, closing):
    page = parse("---\na: " + opening * 3000 + "1" + closing * 3000 + "\n---\n[[L]]\n")
    assert targets(page) == ["L"]
    assert page.problems


# --- hostile input ---------------------------------------------------------------------------


def test_invalid_utf8_bytes():
    page = parse(b"---\ntitle: Caf\xe9\n---\nbody [[Link]] \xff\xfe #tag\n", path="bad.md")
    assert [p.code for p in page.problems] == ["invalid-utf8"]
    assert page.title == "Caf\ufffd"
    assert targets(page) == ["Link"] and page.tags == ("tag",)


def test_valid_utf8_bytes_equal_text():
    text = "---\ntitle: Été\n---\n😀 [[Link]]\n"
    assert parse(text.encode("utf-8")) == parse(text)


def test_lone_surrogates_in_text():
    page = parse("\ud800 [[X]]\n")
    assert targets(page) == ["X"] and [p.code for p in page.problems] == ["invalid-utf16"]


@pytest.mark.parametrize("data", ["", b"", "\n", "---", "---\n", "\ufeff"])
def test_empty_files(data):
    page = parse(data, path="Empty.md")
    assert page.title == "Empty" and page.links == () and page.tags == () and page.headings == ()


def test_nul_bytes():
    page = parse("a\x00b [[N\x00ame]] [[Link]]\x00 #tag\x00\n")
    assert "Link" in targets(page)
    assert page.tags == ("tag",)


@pytest.mark.parametrize("as_bytes", [False, True])
def test_very_large_page_is_indexed_by_title_only(as_bytes):
    text = "---\ntitle: Big\n---\n" + "[[x]] #tag word " * (LARGE_PAGE_BYTES // 16 + 1)
    assert len(text) > 5_000_000
    page = parse(text.encode() if as_bytes else text, path="dir/huge.md")
    assert (page.title, page.links, page.tags, page.body) == ("huge", (), (), "")
    assert [p.code for p in page.problems] == ["too-large"]


# --- Dendron: [[label|target]] ---------------------------------------------------------------


def test_label_first_flips_piped_links():
    line = "See [[Nice Label|dendron.topic.page]] and [[plain.note]]\n"
    normal = parse(line)
    flipped = parse(line, label_first=True)
    assert link_parts(normal)[0] == ("wiki", "Nice Label", None, None, "dendron.topic.page")
    assert link_parts(flipped) == [
        ("wiki", "dendron.topic.page", None, None, "Nice Label"),
        ("wiki", "plain.note", None, None, None),
    ]
    assert flipped.links[0].target_span == Span(0, 17, 0, 35)
    assert flipped.links[0].span == normal.links[0].span


def test_label_first_applies_to_typed_edges():
    page = parse('---\nrelated: "[[Shown|real.target]]"\n---\n', label_first=True)
    assert [(e.target, e.label) for e in page.edges] == [("real.target", "Shown")]


def test_large_page_cut_off_counts_utf8_bytes_for_text_too():
    # 2 million three-byte characters: 6 MB on disk, whether read as bytes or given as text.
    text = "中" * 2_000_000 + " [[x]]\n"
    from_disk = parse(text.encode("utf-8"), path="cjk.md")
    from_editor = parse(text, path="cjk.md")
    assert [p.code for p in from_disk.problems] == ["too-large"]
    assert from_editor == from_disk


def test_columns_after_inline_code_with_an_emoji_count_the_emoji_twice():
    page = parse("`😀` [[x]] #tag\n")
    assert page.links[0].span == Span(0, 5, 0, 10)
    assert page.links[0].target_span == Span(0, 7, 0, 8)
    assert page.inline_tags[0].span == Span(0, 11, 0, 15)


def test_heading_text_keeps_its_inline_code():
    page = parse("## The `parse_page` function\nSetext `code` here\n---\n")
    assert [(h.level, h.text) for h in page.headings] == [(2, "The `parse_page` function"), (2, "Setext `code` here")]
