"""render: the wire object of a hit, the wikilink it offers, the text line and canonical JSON."""

from __future__ import annotations

import json

import pytest
from vaultkit import build_vault, hits_for

from vaultlens.engine.model import Hit, Match
from vaultlens.engine.query import parse_query
from vaultlens.engine.render import dumps, hit_line, hit_to_json, link_target, search_payload, wikilink

FILES = {
    "Compost.md": "",
    "notes/graph-rag.md": "---\ntitle: Graph RAG\n---\n",
    "Deep.md": "",
    "notes/sub/deep.md": "",
    "a/Same Title.md": "---\ntitle: Shared\n---\n",
    "b/other.md": "---\ntitle: Shared\n---\n",
}


@pytest.mark.parametrize(
    "path, expected",
    [
        ("Compost.md", "[[Compost]]"),
        ("notes/graph-rag.md", "[[graph-rag|Graph RAG]]"),
        ("Deep.md", "[[Deep]]"),
        ("notes/sub/deep.md", "[[notes/sub/deep]]"),
        ("a/Same Title.md", "[[Same Title|Shared]]"),
    ],
)
def test_wikilink(path, expected):
    vault = build_vault(FILES)
    assert wikilink(vault, vault.pages[path]) == expected


def test_wikilink_in_a_label_first_vault_puts_the_label_first():
    vault = build_vault(FILES, label_first=True)
    assert wikilink(vault, vault.pages["notes/graph-rag.md"]) == "[[Graph RAG|graph-rag]]"


@pytest.mark.parametrize("style", ["auto", "title", "filename", "path"])
def test_every_link_target_resolves_back_to_its_page(style):
    vault = build_vault(FILES)
    for path, page in vault.pages.items():
        assert vault.resolve(link_target(vault, page, style)).path == path, (style, path)


def test_hit_to_json_and_payload():
    vault = build_vault({"notes/Café.md": "---\ntype: recipe\n---\ncafé au lait\n"})
    query = parse_query("café")
    hits = hits_for(vault, "café")
    payload = search_payload(vault, query, hits)
    assert payload == {
        "command": "search",
        "vault": "vault",
        "query": "café",
        "hits": [
            {
                "title": "Café",
                "wikilink": "[[Café]]",
                "file": "notes/Café.md",
                "type": "recipe",
                "score": 88.125,
                "snippet": "café au lait",
                "matched": [
                    {"channel": "title-exact", "term": "", "hits": 1, "points": 72},
                    {"channel": "title-phrase", "term": "", "hits": 1, "points": 10},
                    {"channel": "title-term", "term": "café", "hits": 1, "points": 5},
                    {"channel": "body-term", "term": "café", "field": "body", "hits": 1, "points": 1},
                    {"channel": "body-bm25", "term": "café", "field": "body",
                     "via": "collection: in 1 of 1 pages, mean body 3.0 tokens", "hits": 1, "points": 0.125},
                ],
            }
        ],
    }
    text = dumps(payload)
    assert "café" in text and "\\u00e9" not in text
    assert json.loads(text) == payload
    assert all(line == line.rstrip() for line in text.splitlines())


def test_match_wire_form_orders_its_keys():
    m = Match("stem-term", "run", 2, 1, "body", "running")
    assert list(m.to_json()) == ["channel", "term", "field", "via", "hits", "points"]
    assert list(Match("title-term", "run", 1, 5).to_json()) == ["channel", "term", "hits", "points"]


def test_hit_line():
    vault = build_vault({"dir/Note.md": "kiwi kiwi"})
    (hit,) = hits_for(vault, "kiwi")
    assert hit_line(hit) == "  2.25  [[Note]]  (dir/Note.md)"  # body-term 2 + body-bm25 0.25
    wide = Hit(hit.page, hit.matched, 1234567, "")
    assert hit_line(wide) == "1234567  [[Note]]  (dir/Note.md)"
    assert hit_to_json(vault, wide)["score"] == 1234567
