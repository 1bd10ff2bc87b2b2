"""The ``prefix-term`` channel: as-you-type matching of the last, partial query term.

Rules (engine/scoring.py, engine/weights.py): only with ``parse_query(..., prefix=True)``; only the
last term; not once the query ends with a space; a prefix of a title token earns
``POINTS["prefix-term"]`` (3), of an alias token only ``PREFIX_ALIAS`` (2), at most one per page;
none when the term already is a title token (it earns ``title-term`` instead), and no alias prefix
when it already is an alias token. Body words never match by prefix.
"""

from __future__ import annotations

import pytest

from vaultlens.engine.page import parse_page
from vaultlens.engine.query import parse_query
from vaultlens.engine.search import search
from vaultlens.engine.vault import Vault
from vaultlens.engine.weights import POINTS, PREFIX_ALIAS


def vault_of(files: dict[str, str]) -> Vault:
    return Vault.from_pages(parse_page(path, text) for path, text in files.items())


def page(title: str, *, aliases: tuple[str, ...] = (), body: str = "") -> str:
    """A page's text with its title (and aliases) in the frontmatter."""
    front = f"title: {title}\n"
    if aliases:
        front += "aliases:\n" + "".join(f"  - {a}\n" for a in aliases)
    return f"---\n{front}---\n{body}\n"


def prefix_components(
    files: dict[str, str], text: str, *, prefix: bool = True
) -> dict[str, list[tuple]]:
    """Every hit's prefix-term components as (term, field, via, points), by path."""
    hits = search(vault_of(files), parse_query(text, prefix=prefix, limit=0))
    for hit in hits:
        assert hit.score == sum(m.points for m in hit.matched)
    return {
        hit.page.path: [
            (m.term, m.field, m.via, m.points) for m in hit.matched if m.channel == "prefix-term"
        ]
        for hit in hits
    }


GARDEN = {
    "Tomatoes.md": page("Tomatoes", aliases=("Love Apples",), body="Green fruit ripen late."),
    "Composting.md": page("Composting", aliases=("Compost Heap",), body="Browns and greens."),
    "Courgettes.md": page("Courgettes", aliases=("Zucchini",), body="Too many in August."),
    "Salsa.md": page("Salsa", body="Made with tomatillos and chilli."),
}


def test_the_weights_are_three_for_titles_and_two_for_aliases():
    assert POINTS["prefix-term"] == 3
    assert PREFIX_ALIAS == 2


@pytest.mark.parametrize(
    ("text", "prefix", "expected"),
    [
        # a prefix of a title token: 3 points, recorded with the token it completed
        ("tom", True, {"Tomatoes.md": [("tom", "title", "tomatoes", 3)]}),
        ("TOM", True, {"Tomatoes.md": [("tom", "title", "tomatoes", 3)]}),
        # a prefix of an alias token only: 2 points
        ("zuc", True, {"Courgettes.md": [("zuc", "alias", "zucchini", 2)]}),
        ("love ap", True, {"Tomatoes.md": [("ap", "alias", "apples", 2)]}),
        # title and alias both start with it: the title component alone
        ("compo", True, {"Composting.md": [("compo", "title", "composting", 3)]}),
        # only in as-you-type mode
        ("tom", False, {}),
        ("zuc", False, {}),
        # a finished word (trailing space) is no longer a prefix
        ("tom ", True, {}),
        ("zuc\t", True, {}),
        # only the last term is partial: "tom" here is a whole word and matches nothing
        ("tom compo", True, {"Composting.md": [("compo", "title", "composting", 3)]}),
        # body words never match by prefix: "tomat" is in Salsa's body only as "tomatillos"
        ("tomati", True, {}),
        # the whole words before the partial one still score as usual
        (
            "green tom",
            True,
            {"Composting.md": [], "Tomatoes.md": [("tom", "title", "tomatoes", 3)]},
        ),
    ],
)
def test_prefix_components(text: str, prefix: bool, expected: dict[str, list[tuple]]):
    assert prefix_components(GARDEN, text, prefix=prefix) == expected


def test_no_prefix_when_the_term_is_already_a_title_token():
    files = {"Rag.md": page("Rag"), "Ragdoll.md": page("Ragdoll"), "Rag Rug.md": page("Rag Rug")}
    found = prefix_components(files, "rag")
    assert found == {"Rag.md": [], "Rag Rug.md": [], "Ragdoll.md": [("rag", "title", "ragdoll", 3)]}
    hits = search(vault_of(files), parse_query("rag", prefix=True, limit=0))
    channels = {h.page.path: [m.channel for m in h.matched] for h in hits}
    # the whole word typed is the title: exact, phrase and term, never a prefix-term (+3) on top
    assert channels["Rag.md"] == ["title-exact", "title-phrase", "title-term"]


def test_no_alias_prefix_when_the_term_is_already_an_alias_token():
    files = {"Courgettes.md": page("Courgettes", aliases=("Zuc", "Zucchini"))}
    hits = search(vault_of(files), parse_query("zuc", prefix=True))
    assert [(m.channel, m.points) for m in hits[0].matched] == [
        ("title-exact", 72),  # the typed word is an alias: exact (48 + 24 per term)
        ("title-phrase", 10),
        ("alias-term", 4),
    ]


def test_the_first_title_token_that_fits_is_recorded():
    files = {"Salad.md": page("Tomato Tomatillo Salad")}
    assert prefix_components(files, "toma") == {"Salad.md": [("toma", "title", "tomato", 3)]}


def test_title_prefix_outranks_alias_prefix():
    files = {
        "Raspberries.md": page("Raspberries"),
        "Rag.md": page("Retrieval-Augmented Generation", aliases=("RAG",)),
    }
    assert prefix_components(files, "ra") == {
        "Raspberries.md": [("ra", "title", "raspberries", 3)],
        "Rag.md": [("ra", "alias", "rag", 2)],
    }
    hits = search(vault_of(files), parse_query("ra", prefix=True))
    assert [h.page.path for h in hits] == [
        "Raspberries.md",
        "Rag.md",
    ]  # the one point apart decides


def test_prefix_pages_are_candidates_without_any_whole_word_match():
    files = {f"p{i}.md": page(f"Page {i}") for i in range(50)} | {"Tomatoes.md": page("Tomatoes")}
    hits = search(vault_of(files), parse_query("tomatoe", prefix=True))
    assert [h.page.path for h in hits] == ["Tomatoes.md"]


def test_the_title_being_typed_comes_first():
    files = {
        "Filters.md": page("Filters"),
        "Combining Filters.md": page("Combining Filters"),
        "Custom Filters.md": page("Custom Filters"),
    }
    hits = search(vault_of(files), parse_query("filt", prefix=True))
    assert hits[0].page.path == "Filters.md"


def test_a_prefix_answer_kept_between_queries_follows_every_rename():
    """``SearchIndex.prefixed`` and ``starting`` keep their answers between queries (one query
    asks up to three times, and typing asks the same letters again): a page renamed, added or
    removed since is in the next answer as it is now, and so in the next search's hits."""
    vault = vault_of({"Rome.md": page("Rome"), "Oslo.md": page("Oslo"), "Old Rope.md": page("Old Rope")})

    def typed(text: str) -> list[str]:
        return sorted(h.page.path for h in search(vault, parse_query(text, prefix=True, limit=0)))

    assert vault.prefixed("ro") == ({"Rome.md", "Old Rope.md"}, False)
    assert vault.starting("ro") == {"Rome.md"}
    assert typed("ro") == ["Old Rope.md", "Rome.md"]
    vault.upsert(parse_page("Oslo.md", page("Rotterdam")))  # gains a name token that starts so
    assert vault.prefixed("ro")[0] == {"Rome.md", "Old Rope.md", "Oslo.md"}
    assert vault.starting("ro") == {"Rome.md", "Oslo.md"}
    assert typed("ro") == ["Old Rope.md", "Oslo.md", "Rome.md"]
    vault.upsert(parse_page("Old Rope.md", page("Rope Old")))  # the same tokens, another first one
    assert vault.starting("ro") == {"Rome.md", "Oslo.md", "Old Rope.md"}
    vault.remove("Rome.md")
    assert vault.prefixed("ro")[0] == {"Old Rope.md", "Oslo.md"}
    assert typed("ro") == ["Old Rope.md", "Oslo.md"]
    vault.upsert(parse_page("Oslo.md", page("Oslo", body="Rotterdam in the body only")))
    assert typed("ro") == ["Old Rope.md"]


def test_a_prefix_answer_put_back_by_a_reader_after_a_rename_is_not_believed():
    """A reader on another thread takes a kept answer out and puts it back (the most recent
    last); a rename that clears the answers in between must not leave that one believed."""
    vault = vault_of({"Rome.md": page("Rome"), "Oslo.md": page("Oslo")})
    _store, search_index, _links = vault.parts
    assert vault.prefixed("ro")[0] == {"Rome.md"}
    entry = search_index._prefixes[(False, "ro")]
    vault.upsert(parse_page("Oslo.md", page("Rotterdam")))
    search_index._prefixes[(False, "ro")] = entry  # put back just after the rename cleared them
    assert vault.prefixed("ro")[0] == {"Rome.md", "Oslo.md"}


def test_a_prefix_with_more_name_tokens_than_it_expands_to_says_so():
    from vaultlens.engine.postings import PREFIX_TOKENS

    vault = vault_of({f"p{i}.md": page(f"Word{i:04d}") for i in range(PREFIX_TOKENS + 1)})
    pages, cut = vault.prefixed("word")
    assert cut and len(pages) == PREFIX_TOKENS
    assert vault.prefixed("word000") == ({f"p{i}.md" for i in range(10)}, False)
