"""The operation declarations (engine/ops.py) and their machinery (engine/operation.py), in-process.

The surfaces built from them are tested end to end in tests/e2e/test_operations.py.
"""

from __future__ import annotations

import inspect
from collections import namedtuple
from typing import get_type_hints

import pytest
from vaultkit import build_vault

from vaultlens.engine import results, retrieve
from vaultlens.engine.operation import DocumentPath, ParamError, check_object, disk_source
from vaultlens.engine.ops import BY_NAME, OPERATIONS, READ, SEARCH
from vaultlens.engine.query import parse_query


def test_each_run_takes_exactly_the_declared_parameters():
    options = set(inspect.signature(parse_query).parameters) - {"text", "now", "mtime_of", "operators"}
    for op in OPERATIONS:
        signature = inspect.signature(op.run).parameters
        names = [p.name for p in op.params]
        assert len(set(names)) == len(names), op.name
        assert list(signature)[0] == "source", op.name
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values()):
            own = {p.name for p in signature.values() if p.kind is inspect.Parameter.KEYWORD_ONLY}
            assert own == {"sort", "no_timing", "explain", "hints_threshold"}  # search's own: the rest go to parse_query
            # passed on to parse_query, but the aliases (given to their targets)
            aliases = {p.name for p in op.params if p.alias_for}
            assert op is SEARCH and set(names) - {"query"} - own - aliases == options
        else:
            assert list(signature)[1:] == names, op.name
        assert all(p.required for p in op.params[:1]) and op.params[0].name in ("query", "pattern", "page")


def test_each_result_shape_is_declared_and_the_read_levels_are_the_engines():
    for op in OPERATIONS:
        shape = get_type_hints(getattr(results, op.result))
        assert shape["command"].__args__ == (op.name,), op.name
        assert op.summary and len(op.description) > 60 and op.title
    assert READ.params[1].choices == retrieve.LEVELS


def test_spellings_are_derived_once():
    where = next(p for p in SEARCH.params if p.name == "where")
    time_field = next(p for p in SEARCH.params if p.name == "time_field")
    ignore_case = BY_NAME["grep"].params[1]
    assert (where.key, where.flag) == ("filter", "--where")
    assert (time_field.key, time_field.flag) == ("timeField", "--time-field")
    assert (ignore_case.key, ignore_case.flag, ignore_case.short) == ("ignoreCase", "--ignore-case", "-i")
    hints = next(p for p in SEARCH.params if p.name == "hints")
    assert (hints.initial, hints.agent_default) == (False, True)  # agents get hints unless they say no


def test_check_object_defaults_and_conversions():
    got = check_object(BY_NAME["grep"], {"pattern": "x", "exclude": "daily/", "limit": None})
    assert got == {"pattern": "x", "ignore_case": False, "folder": None, "exclude": ["daily/"],
                   "frontmatter": False, "limit": 100, "no_timing": False}
    Filter = namedtuple("Filter", "type")
    assert check_object(SEARCH, {"query": "q", "where": Filter("concept")})["where"] == {"type": "concept"}
    assert check_object(SEARCH, {"query": "q"}) == {"query": "q", **{k: v for k, v in SEARCH.defaults().items() if k != "query"}}


@pytest.mark.parametrize(
    ("op", "data", "message"),
    [
        ("search", {}, '"query" is required and must be a string'),
        ("search", {"query": 5}, '"query" must be a string ("query" is required)'),
        ("search", {"query": "x", "bogus": 1, "also": 2}, "unknown parameter(s): also, bogus (accepted: query, type,"),
        ("search", {"query": "x", "limit": 0}, '"limit" must be a whole number of at least 1'),
        ("search", {"query": "x", "limit": True}, '"limit" must be a whole number of at least 1'),
        ("search", {"query": "x", "limit": 2.5}, '"limit" must be a whole number of at least 1'),
        ("search", {"query": "x", "graph": "yes"}, '"graph" must be true or false'),
        ("search", {"query": "x", "rank": "fast"}, '"rank" must be "default" or "hybrid"'),
        ("search", {"query": "x", "min_score": True}, '"min_score" must be a number'),
        ("search", {"query": "x", "where": [1]}, '"where" must be an object of frontmatter KEY: VALUE'),
        ("grep", {"pattern": "x", "exclude": [1]}, '"exclude" must be a list of path prefixes'),
        ("read", {"page": "x", "level": "two"}, '"level" must be a whole number'),
    ],
)
def test_check_object_says_which_parameter_is_wrong(op, data, message):
    with pytest.raises(ParamError) as caught:
        check_object(BY_NAME[op], data)
    assert message in str(caught.value)


def test_level_is_checked_by_the_engine_in_its_own_words():
    assert check_object(READ, {"page": "x", "level": 7})["level"] == 7
    vault = build_vault({"a.md": "# A\n\ntext\n"})
    with pytest.raises(ValueError, match=r"level must be 0 \(abstract\), 1 \(overview\) or 2 \(full text\)"):
        READ.run(disk_source(vault, ""), page="a.md", level=7)


def test_a_document_path_is_taken_as_that_path():
    vault = build_vault({"notes/a.md": "# A\n\nSee [[b]].\n", "b.md": "# B\n\nSee [[a]].\n"})
    source = disk_source(vault, "")
    related = BY_NAME["related"]
    assert related.run(source, page=DocumentPath("notes/a.md"), limit=5)["page"] == "notes/a.md"
    # not a page: nothing is related to it, where the name "a" would find notes/a.md
    assert related.run(source, page=DocumentPath("a"), limit=5) == {"command": "related", "vault": "vault", "page": "a", "hits": []}
    assert related.run(source, page="a", limit=5)["page"] == "notes/a.md"


def test_a_quoted_phrase_no_page_holds_searches_its_words_and_says_so(tmp_path):
    """An agent quoting words of its question ("path includes work") gets the pages with the
    words, marked ``query_plan.relaxed``; a phrase some page holds still filters strictly."""
    pages = {"Global Query.md": "# Global Query\n\nAdd a filter such as path includes home to every search.\n",
             "Paths.md": "# Paths\n\nThe path of a task: work notes.\n",
             "Other.md": "# Other\n\nnothing here\n"}
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
    source = disk_source(build_vault(pages), str(tmp_path))
    loose = SEARCH.run(source, query='how to add "path includes work" everywhere', no_timing=True)
    assert loose["query_plan"]["relaxed"]["phrases"] == ["path includes work"]
    assert sorted(h["file"] for h in loose["hits"]) == ["Global Query.md", "Paths.md"]
    assert SEARCH.note(loose) == 'no page holds "path includes work": showing pages with its words'
    strict = SEARCH.run(source, query='"path includes home"', no_timing=True)
    assert [h["file"] for h in strict["hits"]] == ["Global Query.md"] and "relaxed" not in strict.get("query_plan", {})
    nothing = SEARCH.run(source, query='"zebra quagga"', no_timing=True)
    assert nothing["hits"] == [] and SEARCH.note(nothing) is None
