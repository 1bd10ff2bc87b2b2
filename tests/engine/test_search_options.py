"""Search options for people and agents: time bounds, where, min-score, operators, hints."""

from __future__ import annotations

import datetime as dt

import pytest
from vaultkit import build_vault

from vaultlens.engine.hints import hints, match_label
from vaultlens.engine.query import parse_query, split_operators
from vaultlens.engine.render import search_payload
from vaultlens.engine.search import search
from vaultlens.engine.timeparse import TimeError, parse_bound, parse_time

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

FILES = {
    "a/Alpha Notes.md": "---\ntype: concept\nstatus: draft\ntags: [x, y]\nupdated: 2026-02-27\n---\nalpha notes here\n",
    "a/Beta Notes.md": "---\ntype: source\nstatus: [done, draft]\nupdated: 2025-01-01T10:00:00+02:00\n---\n"
    "beta notes mention alpha and the exact phrase\nSee [[Gamma]].\n",
    "b/Gamma.md": "---\ncreated: 1700000000000\n---\ngamma only, noisy words\n",
    "b/Delta.md": "no frontmatter at all: delta notes\n",
}


@pytest.fixture
def vault():
    return build_vault(FILES)


def paths(vault, text, **kw):
    kw.setdefault("now", NOW)
    return [h.page.path for h in search(vault, parse_query(text, limit=20, **kw))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", NOW - dt.timedelta(minutes=30)),
        ("2h", NOW - dt.timedelta(hours=2)),
        ("7d", NOW - dt.timedelta(days=7)),
        ("4w", NOW - dt.timedelta(weeks=4)),
        ("2026-01-31", dt.datetime(2026, 1, 31, tzinfo=UTC)),
        ("2026-01-31T09:30", dt.datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),  # no zone: UTC
        ("2026-01-31T09:30:00+01:00", dt.datetime(2026, 1, 31, 8, 30, tzinfo=UTC)),
        ("2026-01-31T09:30:00Z", dt.datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),
        ("2099-12-31", dt.datetime(2099, 12, 31, tzinfo=UTC)),  # the future is a time too
    ],
)
def test_time_bounds(text, expected):
    assert parse_bound(text, NOW) == expected


@pytest.mark.parametrize("bad", ["yesterday", "7y", "2026-02-30", "", "-3d"])
def test_bad_time_names_the_accepted_forms(bad):
    with pytest.raises(TimeError, match="30m, 2h, 7d or 4w"):
        parse_bound(bad, NOW)


def test_page_times_in_common_forms():
    assert parse_time("2024/01/05") == dt.datetime(2024, 1, 5, tzinfo=UTC)
    assert parse_time(1595952505038) == dt.datetime(2020, 7, 28, 16, 8, 25, 38000, tzinfo=UTC)  # Dendron ms
    assert parse_time("2025-01-01T10:00:00+02:00") == dt.datetime(2025, 1, 1, 8, tzinfo=UTC)
    assert parse_time("soon") is None and parse_time(True) is None


def test_since_until_and_time_field(vault):
    assert paths(vault, "notes", since="7d") == ["a/Alpha Notes.md"]
    assert paths(vault, "notes", until="2025-06-01") == ["a/Beta Notes.md"]
    assert paths(vault, "gamma", since="2023-01-01", time_field="created") == ["b/Gamma.md"]
    # a page with no time in its frontmatter falls back to the file's modification time
    mtimes = {"b/Delta.md": NOW.timestamp() - 60}
    assert paths(vault, "delta", since="1h", mtime_of=mtimes.get) == ["b/Delta.md"]
    assert paths(vault, "delta", since="1h") == []  # no time known: not within any bound
    with pytest.raises(ValueError, match="not a time"):
        parse_query("x", since="soonish", now=NOW)


def test_where_min_score_and_filters_only_remove(vault):
    everything = paths(vault, "notes alpha")
    assert paths(vault, "notes alpha", where={"status": "draft"}) == [
        p for p in everything if p in ("a/Alpha Notes.md", "a/Beta Notes.md")]  # list membership too
    assert paths(vault, "notes alpha", where={"status": "done", "type": "source"}) == ["a/Beta Notes.md"]
    top = search(vault, parse_query("notes alpha", limit=20, now=NOW))
    cut = top[0].score
    assert paths(vault, "notes alpha", min_score=cut) == [h.page.path for h in top if h.score >= cut]


def test_operators_parse_and_plain_text_stays_plain():
    words, ops = split_operators('"exact phrase" gamma -noisy #x type:concept path:a after:7d before:2026-01-01')
    assert words == "exact phrase gamma x"
    assert [op for op, _ in ops] == ["phrase", "exclude", "tag", "type", "path", "after", "before"]
    assert split_operators("C# state-of-the-art") == ("C# state-of-the-art", [])
    assert split_operators('unbalanced "quote') == ('unbalanced "quote', [])
    q = parse_query("notes after:someday", now=NOW)  # not a time: plain text, never an error
    assert "someday" in q.terms and q.since is None


def test_operators_filter_and_show_in_the_query_plan(vault):
    assert paths(vault, '"exact phrase"') == ["a/Beta Notes.md"]
    assert paths(vault, "notes -alpha") == ["b/Delta.md"]
    assert paths(vault, "notes type:concept") == ["a/Alpha Notes.md"]
    assert paths(vault, "notes path:b") == ["b/Delta.md"]
    assert paths(vault, "notes #y") == ["a/Alpha Notes.md"]
    query = parse_query("notes -alpha path:b", now=NOW)
    plan = search_payload(vault, query, search(vault, query))["query_plan"]
    assert plan == {"terms": ["notes"], "operators": [{"operator": "exclude", "value": "alpha"},
                                                     {"operator": "path", "value": "b"}]}
    plain = parse_query("notes", now=NOW)
    assert "query_plan" not in search_payload(vault, plain, search(vault, plain))


def test_hints_rules(vault):
    def h(text):
        q = parse_query(text, limit=10, now=NOW, hints=True)
        return hints(vault, q, search(vault, q))

    assert h("zzzz qqqq")["next_action"] == "broaden"
    assert h("zzzz qqqq")["result_count"] == 0 and h("zzzz qqqq")["gap_keywords"] == ["zzzz", "qqqq"]
    exact = h("Alpha Notes")
    assert exact["sufficient"] and exact["next_action"] == "synthesize" and exact["max_score"] == 1.0
    assert exact["read"][0] == "a/Alpha Notes.md"
    weak = h("mention zzzz qqqq wwww")  # one word of four, in the body of Beta Notes, which links to Gamma (not a hit)
    assert not weak["sufficient"] and weak["max_score"] < 0.3 and weak["read"] == []
    assert weak["next_action"] == "expand" and weak["related_ids"] == ["b/Gamma.md"]
    assert "Beta Notes" not in weak["suggested_queries"]  # a hit shown
    assert "Gamma" not in weak["suggested_queries"]  # linked, but it holds no word of the query: no lead
    assert h("notes zzzz")["gap_keywords"] == ["zzzz"]
    assert h("Alpha Notes") == h("Alpha Notes")  # deterministic


def test_match_labels():
    assert [match_label(s, 10) for s in (10, 7.5, 7.4, 4, 3.9, 0)] == [
        "strong", "strong", "good", "good", "weak", "weak"]


def test_context_boosts_pages_one_link_away(vault):
    plain = {h.page.path: h.score for h in search(vault, parse_query("notes gamma", limit=10, now=NOW))}
    query = parse_query("notes gamma", limit=10, now=NOW, context="Beta Notes")
    hits = search(vault, query)
    boosted = {h.page.path for h in hits if any(m.channel == "context-edge" for m in h.matched)}
    assert boosted == {"b/Gamma.md"}  # Beta Notes links to Gamma; Beta itself is not its own context
    for h in hits:
        assert h.score == plain[h.page.path] + (1 if h.page.path in boosted else 0)
        assert h.score == sum(m.points for m in h.matched)
    plan = search_payload(vault, query, hits)["query_plan"]
    assert plan["context"] == "a/Beta Notes.md" and plan["expanded_queries"] == []
