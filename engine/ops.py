"""Every operation vaultlens answers, each declared once: its parameters, its answer, its result.

``vaultlens NAME …`` (and a ``jsonl`` request ``{"command": NAME, …}``), the language server's
``wiki/NAME`` request and the MCP tool ``NAME`` are all built from the declarations below
(see ``engine/operation.py`` for what a declaration holds), so they take the same parameters
and return the same result object. Adding an operation: declare it here, list it in
``OPERATIONS`` and give its result's shape in ``engine/results.py``; every surface then offers it.

Must not: know any protocol; rank or filter (that is the engine's modules, called from here).
"""

from __future__ import annotations

import time
from typing import Any

from .operation import DocumentPath, Operation, Param, Source, alias
from .query import RANKS, TIME_FIELD_NAMES, parse_query
from .render import EXPLAIN, score_text, search_payload, vault_name
from .scan import file_mtime
from .search import search as ranked_search
from .users import user_scopes

# ``retrieve`` (and the regex package) load when an operation other than search runs, so that
# ``vaultlens search`` starts as fast as it did before the operations were declared here.

# --- parameters several operations share -------------------------------------------------------


def page_param() -> Param:
    return Param(
        "page", str, "The page: a vault-relative path (ai/rag/graph-rag.md), a title, an alias or a [[link]].",
        required=True, page=True,
    )


def folder_param(example: str = "", repeatable: bool = False) -> Param:
    text = f"Only pages under this vault-relative folder{example}"
    if repeatable:
        text += "; several folders: pages under any of them"
    return Param("folder", str, text + ".", metavar="F", repeatable=repeatable,
                 expects="a string or a list of strings" if repeatable else "")


# --- search ------------------------------------------------------------------------------------

_LIMIT = Param("limit", int, "At most this many hits.", default=10, minimum=1, metavar="N")
_SINCE = Param("since", str, "Only pages updated at or after this: a relative span (30m, 2h, 7d, 4w) or an ISO "
               "date/time (no zone = UTC).", metavar="WHEN", expects="a string (30m, 2h, 7d, 4w or an ISO date/time)")
_UNTIL = Param("until", str, "Only pages updated at or before this (same forms as `since`; a date without a time "
               "means the whole day, inclusive).", metavar="WHEN",
               expects="a string (30m, 2h, 7d, 4w or an ISO date/time)")
_NO_TIMING = Param("no_timing", bool, "Leave out `time` (the seconds the answer took), the one field that differs "
                   "from run to run, for byte-identical output. VAULTLENS_TIMING=off sets this for a whole process.",
                   default=False)

def timing_wanted(no_timing: bool) -> bool:
    """Whether a result carries its measured ``time``: not with ``no_timing``, nor in a process
    whose environment says ``VAULTLENS_TIMING=off`` (the tests; 0, no and false say it too)."""
    import os

    return not no_timing and os.environ.get("VAULTLENS_TIMING", "").strip().lower() not in ("off", "0", "no", "false")


def timed(run: Any) -> Any:
    """``run`` that adds ``time`` to its result: the seconds it took, measured (the one field
    outside the determinism guarantee), unless ``no_timing`` or VAULTLENS_TIMING=off."""
    import functools

    @functools.wraps(run)
    def run_timed(source: Source, *args: Any, no_timing: bool = False, **arguments: Any) -> dict[str, Any]:
        started = time.perf_counter()
        payload = run(source, *args, **arguments)
        if timing_wanted(no_timing):
            payload["time"] = round(time.perf_counter() - started, 6)
        return payload

    import inspect

    signature = inspect.signature(run)
    extra = inspect.Parameter("no_timing", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=bool)
    run_timed.__signature__ = signature.replace(parameters=[*signature.parameters.values(), extra])  # type: ignore[attr-defined]
    return run_timed


EXPLAIN_PARAM = Param(
    "explain", str, "How much of each hit's score breakdown to return: 'full' (every component in `matched`, "
    "the ranking contract), 'summary' (`channels`: the 3 channels that gave the most points, with their points; "
    "about 500 bytes a hit) or 'none' (score only).", default="full", choices=EXPLAIN,
    mcp_default="summary",
)


def _search(source: Source, query: str, *, sort: str = "score", no_timing: bool = False,
            explain: str = "full", hints_threshold: float | None = None, **options: Any) -> dict[str, Any]:
    """parse_query, search, search_payload: the result object ``vaultlens search --json`` prints,
    with ``time``: the seconds from the query's parse to the payload (measured: the one field
    outside the determinism guarantee, left out with ``no_timing``).

    No search word but a filter (``--tag rag``, ``tag:rag``, ``--folder``, ``--type``, a time, a
    ``--where`` pair) lists the pages that pass it, by title (``sort``: or by time), score 0."""
    from dataclasses import replace

    started = time.perf_counter()
    if hints_threshold is not None and not 0 <= hints_threshold <= 1:
        raise ValueError('"hints_threshold" must be a number from 0 to 1')
    if sort not in SORTS:
        raise ValueError('"sort" must be ' + " or ".join(f'"{s}"' for s in SORTS))
    root = source.root
    if hints_threshold is None:  # the setting: the server's, else the vault's .vaultlens.toml
        from .hints import threshold_setting

        hints_threshold = source.hints_threshold if source.hints_threshold is not None else threshold_setting(root)
    shape = {"hints_threshold": hints_threshold, "explain": explain}
    parsed = parse_query(query, **options, mtime_of=lambda rel: file_mtime(root, rel))
    scopes = user_scopes(root)  # the vault's [users] settings (engine/users.py)
    parsed = replace(parsed, users_folder=scopes.folder, include_users=scopes.include)
    payload = _ranked(source, parsed, sort, shape)
    if not payload["hits"] and parsed.phrases and parsed.terms:
        # A quoted phrase no page holds (an agent quoting its question, a misremembered name):
        # search its words rather than answer nothing, and say so (query_plan.relaxed, stderr).
        relaxed = _ranked(source, replace(parsed, phrases=()), sort, shape)
        if relaxed["hits"]:
            payload = relaxed
            payload.setdefault("query_plan", {"terms": list(parsed.terms)})["relaxed"] = {
                "phrases": [" ".join(seq) for seq in parsed.phrases],
                "why": "no page that passes the filters holds these words in this order: pages with the words are shown",
            }
    if parsed.user is not None or not parsed.include_users:  # the scope, said (engine/users.py)
        plan = payload.setdefault("query_plan", {"terms": list(parsed.terms)})
        plan["users"] = {"user": parsed.user, "folder": parsed.users_folder,
                         "left_out": "other users' pages" if parsed.user is not None else "every user's pages"}
    if timing_wanted(no_timing):
        payload["time"] = round(time.perf_counter() - started, 6)
    return payload


SORTS = ("score", "title", "updated", "created")


def _ranked(source: Source, parsed: Any, sort: str, shape: dict[str, Any]) -> dict[str, Any]:
    """The search payload of a parsed query: ranked (then reordered by ``sort``), or, with no
    search word, the listing of the pages that pass its filters."""
    from dataclasses import replace

    if not parsed.terms:
        from .retrieve import listing

        payload = search_payload(source.vault, parsed, listing(source.vault, parsed, sort), **shape)
        if payload["hits"]:  # say what the order is: no score ranked these
            payload.setdefault("query_plan", {"terms": []})["listed_by"] = "title" if sort == "score" else sort
        return payload
    arm = source.vectors() if source.vectors is not None and parsed.rank == "hybrid" else None
    if sort == "score":
        return search_payload(source.vault, parsed, ranked_search(source.vault, parsed, arm), **shape)
    from .retrieve import reorder

    every = ranked_search(source.vault, replace(parsed, limit=0), arm)
    return search_payload(source.vault, parsed, reorder(every, parsed, sort)[: parsed.limit], **shape)


def _search_text(payload: dict[str, Any]) -> list[str]:
    """The human lines: score, a label, [[Title]], (path), in aligned columns; then the hints.

    The label is the match strength against the top hit (``strong``/``good``/``weak``), or for
    ``--rank hybrid`` hits (fused scores, all close together) which arms found the page, or
    ``listed`` for a page a search without words lists."""
    from .hints import match_label

    hits = payload["hits"]
    if not hits and not payload["query"].strip():
        lines = ["no pages match: give search words, or a filter to list pages by (--tag, --folder, --type)"]
    elif not hits:
        lines = ["no pages match" + _filters_said(payload)]
    else:
        top = hits[0]["score"]
        scores = [score_text(h["score"]) for h in hits]
        labels = [h["via"] if "via" in h else "listed" if not h.get("matched", h.get("channels", h["score"]))
                  else match_label(h["score"], top)
                  for h in hits]
        width, label_width = max(6, *map(len, scores)), max(6, *map(len, labels))
        lines = [
            f"{score:>{width}}  {label:<{label_width}}  [[{h['title']}]]  ({h['file']})"
            for score, label, h in zip(scores, labels, hits)
        ]
    return lines + _hints_text(payload.get("hints"))


def _search_plain(payload: dict[str, Any]) -> list[str]:
    """``--format plain``: exactly ``score  [[Title]]  (path)`` per hit, nothing else (for scripts)."""
    return [f"{score_text(h['score'])}  [[{h['title']}]]  ({h['file']})" for h in payload["hits"]]


def _filters_said(payload: dict[str, Any]) -> str:
    plan = payload.get("query_plan") or {}
    scopes = plan.get("folders")
    return f" (in {' or '.join(scopes)})" if scopes else ""


def _hints_text(hints: dict[str, Any] | None) -> list[str]:
    """The ``--hints`` object as lines under the hits (``--json`` has the object itself)."""
    if not hints:
        return []
    lines = [
        "",
        f"hints: next action {hints['next_action']}; sufficient {'yes' if hints['sufficient'] else 'no'} "
        f"(max_score {hints['max_score']}, {hints['result_count']} hit{'s' if hints['result_count'] != 1 else ''})",
    ]
    for name, key in (("read", "read"), ("try", "suggested_queries"), ("related", "related_ids"),
                      ("not matched", "gap_keywords")):
        if hints.get(key):
            lines.append(f"  {name}: " + ", ".join(hints[key]))
    return lines


SEARCH = Operation(
    name="search",
    title="Search the vault",
    description="""\
Rank the vault's pages for a query, best first, with every point of every score explained.

Start here to find the notes about a topic. Each hit has its title, [[wikilink]], file,
frontmatter type, score, a snippet and `matched`: one entry per scoring site (its channel,
such as title-term, tag-term or body-term; the query term; the points), and the score is
their sum. Filters combine with AND. Same vault and query, same answer. Then `read` a
hit, or follow `related`/`links` to the pages around it.""",
    params=(
        Param("query", str, "Words to look for, as a person would type them (e.g. 'graph rag').", required=True),
        Param("type", str, "Only pages whose frontmatter `type` is exactly this (e.g. 'concept').", metavar="T"),
        folder_param(" (e.g. 'ai/rag')", repeatable=True),
        Param("tag", str, "Only pages with this tag; a parent tag 'ai' also matches 'ai/rag'.", metavar="G"),
        Param("graph", bool, "Also rank pages reached from the keyword hits over typed edges (sources, related, "
              "depends_on); a keyword hit that another reaches gets the edge's points too. The filters choose the "
              "keyword hits; the walk reaches across them.", default=False),
        Param("graph_filtered", bool, "With `graph`: the pages the walk reaches must pass the filters too (what "
              "`graph` did before).", default=False),
        _LIMIT,
        Param("sort", str, "Hit order: 'score' (best first; a listing without search words, such as '' with "
              "--tag, is by title), 'title', or 'updated'/'created' (newest first, by that page time).",
              default="score", choices=("score", "title", "updated", "created")),
        Param("prefix", bool, "As-you-type matching: the last word may be the start of a title word.", default=False),
        Param(
            "rank", str,
            "'default': the explained channel ranking. 'hybrid': fused with BM25F and, where the embeddings extra "
            "is installed, sentence-embedding similarity (reciprocal rank fusion); try it when default finds little "
            "for a paraphrased question.",
            default="default", choices=RANKS,
        ),
        _SINCE,
        _UNTIL,
        Param("time_field", str, "Which page time `since`/`until` read: frontmatter `updated` or `created` (else "
              "the file's modification time); `updated_at`/`created_at` (OpenViking's names) are the same fields, "
              "and either key is read from frontmatter.", default="updated", choices=TIME_FIELD_NAMES),
        Param("min_score", float, "Only hits scoring at least this.", metavar="N"),
        Param("where", dict, "Frontmatter equality filters, all must hold: each key equals its value, or a list "
              "field holds it.", key="filter", metavar="KEY=VALUE",
              expects="an object of frontmatter KEY: VALUE"),
        Param("hints", bool, "Add `hints` for an agent loop: sufficient, max_score, next_action (synthesize | refine "
              "| expand | broaden), read (the pages to read when sufficient), suggested_queries, related_ids, "
              "gap_keywords, evidence. The rules are in docs/contracts.md.", default=False, mcp_default=True),
        Param("hints_threshold", float, "With `hints`: `sufficient` is true from this max_score on (0 to 1). Unset: the "
              "server's hintsThreshold setting, else the vault's .vaultlens.toml [search] hints_threshold, else "
              "0.5 (the agentic-search design's).", metavar="X", expects="a number from 0 to 1"),
        EXPLAIN_PARAM,
        alias("after", _SINCE, "OpenViking's name", metavar="WHEN"),
        alias("before", _UNTIL, "OpenViking's name", metavar="WHEN"),
        alias("node_limit", _LIMIT, "OpenViking's name", key="node_limit", metavar="N"),
        _NO_TIMING,
        Param("context", str, "The page being worked on (path, title, alias or [[link]]): hits one link away from it "
              "get a context-edge point, and the result's query_plan names it.", page=True, metavar="PAGE",
              expects="a page (path, title, alias, [[link]]) or a document URI"),
        Param("user", str, "Search as this user: the shared pages and this user's own (under users/ID/, or named "
              "user.ID.*); other users' pages are left out.", metavar="ID"),
    ),
    run=_search,
    result="SearchResult",
    text=_search_text,
    plain=_search_plain,
    note=lambda payload: (
        "no page holds " + ", ".join(f'"{p}"' for p in payload["query_plan"]["relaxed"]["phrases"])
        + ": showing pages with its words" if "relaxed" in payload.get("query_plan", {}) else None),
)


# --- grep --------------------------------------------------------------------------------------


def _grep(
    source: Source, pattern: str, *, ignore_case: bool, folder: str | None, exclude: list[str],
    frontmatter: bool, limit: int,
) -> dict[str, Any]:
    from . import retrieve

    lines = _frontmatter_lines(source) if frontmatter else None
    return retrieve.grep(
        source.vault, pattern, ignore_case=ignore_case, folder=folder, exclude=tuple(exclude), limit=limit,
        frontmatter=lines,
    )


def _frontmatter_lines(source: Source) -> dict[str, list[str]]:
    """Each page's frontmatter lines as the source has the file (the index keeps only the body)."""
    from . import retrieve

    out: dict[str, list[str]] = {}
    for path in source.vault.sorted_paths():
        try:
            text = source.text(path)
        except OSError:
            continue
        found = retrieve.frontmatter_lines(text) if text else None
        if found is not None:
            out[path] = found
    return out


def _grep_note(payload: dict[str, Any]) -> str | None:
    """What the listing leaves out: cut short by the time budget, or by ``--limit``."""
    if payload["truncated"]:
        return f"grep cut short: {payload['reason']}"
    shown, count = len(payload["matches"]), payload["count"]
    if count > shown:
        return f"showing {shown} of {count} matches (raise --limit to see more)"
    return None


GREP = Operation(
    name="grep",
    title="Grep page text",
    description="""\
Lines of page text matching a regular expression, in path then line order (1-based line and column).

Use it for exact strings, names, code or identifiers that ranked `search` may not put
first. The work is bounded in time: a pattern too slow to finish gives `truncated: true`
and a `reason`.""",
    params=(
        Param("pattern", str, "A regular expression (Python `regex` syntax), matched per line.", required=True),
        Param("ignore_case", bool, "Match without regard to case.", default=False, short="-i"),
        folder_param(),
        Param("exclude", list, "Skip pages whose path starts with any of these prefixes (e.g. 'daily/').",
              metavar="PREFIX", expects="a list of path prefixes"),
        Param("frontmatter", bool, "Search the YAML frontmatter lines too.", default=False),
        Param("limit", int, "At most this many matches listed (`count` has them all).", default=100, minimum=1,
              metavar="N"),
        _NO_TIMING,
    ),
    run=timed(_grep),
    result="GrepResult",
    text=lambda payload: [f"{m['file']}:{m['line']}:{m['column']}: {m['content']}" for m in payload["matches"]],
    note=lambda payload: _grep_note(payload),
)


# --- glob --------------------------------------------------------------------------------------


def _glob(source: Source, pattern: str, *, limit: int | None) -> dict[str, Any]:
    from . import retrieve

    return retrieve.glob(source.vault, pattern, limit or 0)


GLOB = Operation(
    name="glob",
    title="Find pages by path",
    description="""\
Vault-relative paths of the pages matching a glob, sorted: list a folder or find a file by name.

The paths are in `files`, and again in `matches` (OpenViking's name for them).""",
    params=(
        Param("pattern", str, "A glob over vault-relative paths: '**/*.md', 'ai/*' (pages directly in ai/), 'ai/**'.",
              required=True),
        Param("limit", int, "At most this many paths (`count` has them all).", minimum=1, metavar="N"),
        _NO_TIMING,
    ),
    run=timed(_glob),
    result="GlobResult",
    text=lambda payload: list(payload["files"]),
    note=lambda payload: (f"showing {len(payload['files'])} of {payload['count']} paths (raise --limit to see more)"
                          if payload["count"] > len(payload["files"]) else None),
)


# --- read --------------------------------------------------------------------------------------


def _choice_note(payload: dict[str, Any]) -> str | None:
    from .retrieve import choice_note

    return choice_note(payload)


def _read(source: Source, page: str, *, level: int) -> dict[str, Any]:
    from . import retrieve

    full = None
    if level == 2:
        found = retrieve.find_page(source.vault, page)
        try:
            full = source.text(found.path)
        except OSError as exc:
            raise retrieve.RetrievalError(f"cannot read {found.path}: {exc.strerror or exc}") from None
    payload = retrieve.read(source.vault, page, level, full)
    return _with_version(source, payload, full)


def _with_version(source: Source, payload: dict[str, Any], full: str | None) -> dict[str, Any]:
    """``payload`` with ``version``: the page's text as the source has it, hashed
    (``engine.writes.page_version``), what a write tool must be given back."""
    from .writes import page_version

    text = full
    if text is None:
        try:
            text = source.text(payload["page"])
        except OSError:
            text = None
    if text is not None:
        payload["version"] = page_version(text)
    return payload


READ = Operation(
    name="read",
    title="Read a page",
    description="""\
Read one page at a chosen level of detail: 0 abstract, 1 overview (default), 2 full text.

Skim with 0 or 1 to decide whether a page matters before spending context on level 2.
The result names the page's path and title, and its `version` (pass it back to a write tool).""",
    params=(
        page_param(),
        Param(
            "level", int,
            "0: abstract (frontmatter summary/description, else the first paragraph, at most 400 characters); "
            "1: overview (the heading outline with each section's first sentence); 2: the whole file as on "
            "disk, frontmatter included.",
            default=1, choices=(0, 1, 2), checked_by_run=True,  # retrieve.LEVELS
        ),
        _NO_TIMING,
    ),
    run=timed(_read),
    result="ReadResult",
    text=lambda payload: [payload["content"]],
    note=_choice_note,
)


# --- related -----------------------------------------------------------------------------------


def _related(source: Source, page: str, *, limit: int) -> dict[str, Any]:
    from . import retrieve

    vault = source.vault
    if isinstance(page, DocumentPath) and page not in vault.pages:  # a document that is no page (yet)
        return {"command": "related", "vault": vault_name(vault), "page": str(page), "hits": []}
    return retrieve.related_payload(vault, page, limit)


RELATED = Operation(
    name="related",
    title="Related pages",
    description="""\
The pages most related to a page, best first, each with `reasons` (one sentence) and its score breakdown.

Evidence: links in either direction, typed frontmatter edges, shared tags, pages cited
together, shared link targets and title words. Use it to widen an answer beyond keyword hits.""",
    params=(
        page_param(),
        Param("limit", int, "At most this many pages.", default=10, minimum=1, metavar="N"),
        _NO_TIMING,
    ),
    run=timed(_related),
    result="RelatedResult",
    note=_choice_note,
    text=lambda payload: [
        f"{hit['score']:>6}  [[{hit['title']}]]  ({hit['file']})  {hit['reasons']}" for hit in payload["hits"]
    ],
)


# --- links -------------------------------------------------------------------------------------


def _links(source: Source, page: str) -> dict[str, Any]:
    from . import retrieve

    return retrieve.links(source.vault, page)


def _links_text(payload: dict[str, Any]) -> list[str]:
    lines = [f"-> {o['file'] or '(unresolved) ' + o['target']}  [{o['kind']} {o['line']}:{o['column']}]"
             for o in payload["outgoing"]]
    lines += [f"<- {i['file']}  [{i['kind']} {i['line']}:{i['column']}]" for i in payload["incoming"]]
    lines += [f"{'->' if e['direction'] == 'out' else '<-'} {e['file'] or e['target']}  [{e['predicate']}]"
              for e in payload["edges"]]
    return lines


LINKS = Operation(
    name="links",
    title="Links of a page",
    description="""\
A page's outgoing links, incoming links (backlinks) and typed edges, with 1-based line and column.

Outgoing links give the file each resolves to (null when it resolves to no page). Typed
edges are frontmatter relations (sources, related, depends_on) with a direction.""",
    params=(page_param(), _NO_TIMING),
    run=timed(_links),
    result="LinksResult",
    text=_links_text,
    note=_choice_note,
)


# --- mentions ----------------------------------------------------------------------------------


def _mentions(source: Source, page: str, *, limit: int) -> dict[str, Any]:
    from .mentions import mentions_payload

    return mentions_payload(source.vault, page, limit)


def _mentions_text(payload: dict[str, Any]) -> list[str]:
    return [f"{m['file']}:{m['line']}:{m['column']}: {m['text']}  | {m['context']}" for m in payload["mentions"]]


MENTIONS = Operation(
    name="mentions",
    title="Unlinked mentions of a page",
    description="""\
Where other pages name a page (its title or an alias, whole words, any case) without linking to it.

Not inside code, links, URLs, headings or frontmatter; pages that already link to it are
left out; a one-word name counts only where it is a real name (see docs/reference.md).
Each mention has its file, 1-based line and column, the text as written and its line.""",
    params=(
        page_param(),
        Param("limit", int, "At most this many mentions listed (`count` has them all).", default=100, minimum=1,
              metavar="N"),
    ),
    run=_mentions,
    result="MentionsResult",
    text=_mentions_text,
    note=lambda payload: _choice_note(payload) or (
        f"showing {len(payload['mentions'])} of {payload['count']} mentions (raise --limit to see more)"
        if payload["count"] > len(payload["mentions"]) else None),
)


OPERATIONS: tuple[Operation, ...] = (SEARCH, GREP, GLOB, READ, RELATED, LINKS, MENTIONS)
BY_NAME = {op.name: op for op in OPERATIONS}


# --- writes ------------------------------------------------------------------------------------
# The operations that change the vault (engine/writes.py, engine/capture.py). They are not in
# OPERATIONS: the language server never offers them (it changes files only by WorkspaceEdits),
# ``jsonl`` answers reads only, and ``vaultlens mcp`` offers them only with --allow-writes. The
# command line has ``create-page``, ``append-to-page``, ``edit-page`` built from these, and
# ``add`` (engine/cli.py: it shows the page and asks before writing, which no generated command
# does), which calls the same ``engine.capture`` functions as the ``add`` tool here.

_STRICT = Param("strict_links", bool, "Refuse to write when a link in the text resolves to no page or to several "
                "(the `links` report says which, with suggestions).", default=False)
_VERSION = Param("version", str, "The page's `version` as `read` (or the last write) returned it: the write is refused "
                 "when the file changed since.", metavar="V")


def _write_error(run):
    """``run`` with write refusals (OutsideVault, a disk error) as messages for the caller."""
    import functools

    @functools.wraps(run)
    def guarded(source: Source, *args: Any, **kwargs: Any) -> dict[str, Any]:
        from .scan import OutsideVault

        try:
            return run(source, *args, **kwargs)
        except OutsideVault as exc:
            raise ValueError(f"refused: {exc.filename}: {exc.strerror}: nothing written") from None
        except OSError as exc:
            raise ValueError(f"cannot write {exc.filename or 'the page'}: {exc.strerror or exc}: nothing written") from None

    return guarded


def _create_page(source: Source, title: str, *, body: str, folder: str | None, path: str | None,
                 frontmatter: dict[str, Any], tags: list[str], strict_links: bool) -> dict[str, Any]:
    from .writes import create_page

    return create_page(source.vault, source.root, title, body=body, folder=folder, path=path,
                       frontmatter=frontmatter, tags=tags, strict_links=strict_links)


def _links_note(payload: dict[str, Any]) -> str | None:
    counts = payload.get("link_summary") or {}
    bad = [f"{counts[k]} {k}" for k in ("unresolved", "ambiguous", "alias") if counts.get(k)]
    return "links: " + ", ".join(bad) if bad else None


def _write_text(payload: dict[str, Any]) -> list[str]:
    lines = [f"{'wrote' if payload.get('written') else 'would write'} {payload['path']}  ({payload.get('version')})"]
    for e in payload["links"]:
        where = f"{e['line']}:{e['column']}"
        if e["status"] == "unresolved":
            maybe = ", ".join(s["link"] for s in e.get("suggestions", ())) or "no similar page"
            lines.append(f"  {where} [[{e['target']}]] unresolved; did you mean {maybe}")
        elif e["status"] == "ambiguous":
            lines.append(f"  {where} [[{e['target']}]] ambiguous: {', '.join(e['candidates'])}")
        elif e["status"] == "alias":
            lines.append(f"  {where} [[{e['target']}]] alias of {e['file']} (write {e['fix']})")
        else:
            lines.append(f"  {where} [[{e['target']}]] -> {e['file'] or '(attachment)'}")
    return lines


CREATE_PAGE = Operation(
    name="create_page",
    title="Create a page",
    description="""\
Create a new page (never over an existing one) and report every link it holds.

The file is named by the title in `folder`; frontmatter and tags go in the YAML header. The
result has the new `path`, its `version` (for later edits) and `links`: each link resolved (to
which page), ambiguous (the candidates), alias (reached only through an alias) or unresolved
(with suggested pages). A page with the same title or file name elsewhere is refused: edit it.""",
    params=(
        Param("title", str, "The page's title (also its file name, less characters no file name takes).", required=True),
        Param("body", str, "The Markdown text of the page (below the frontmatter).", default="", metavar="TEXT"),
        Param("folder", str, "The vault-relative folder to put it in (default: the top of the vault).", metavar="F"),
        Param("path", str, "Instead of title and folder: the exact vault-relative path (ending in .md).", metavar="P"),
        Param("frontmatter", dict, "Frontmatter keys and values to write.", metavar="KEY=VALUE",
              expects="an object of frontmatter KEY: VALUE"),
        Param("tags", list, "Tags for the frontmatter.", metavar="TAG"),
        _STRICT,
    ),
    run=_write_error(_create_page),
    result="WriteResult",
    text=_write_text,
    note=_links_note,
)


def _append(source: Source, page: str, text: str, *, heading: str | None, version: str | None,
            strict_links: bool) -> dict[str, Any]:
    from .writes import append_to_page

    return append_to_page(source.vault, source.root, page, text, heading=heading, version=version,
                          strict_links=strict_links)


APPEND_TO_PAGE = Operation(
    name="append_to_page",
    title="Append to a page",
    description="""\
Add text at the end of a page, or at the end of one of its sections (the heading is made when missing).

Returns the page's new `version` and the `links` report of the added text.""",
    params=(
        page_param(),
        Param("text", str, "The Markdown text to add.", required=True),
        Param("heading", str, "Add it at the end of this section (its heading text; '## Notes' sets the level of "
              "a heading made at the end of the page when it has none).", metavar="H"),
        _VERSION,
        _STRICT,
    ),
    run=_write_error(_append),
    result="WriteResult",
    text=_write_text,
    note=_links_note,
)


def _edit(source: Source, page: str, old_text: str, new_text: str, *, version: str | None,
          strict_links: bool) -> dict[str, Any]:
    from .writes import edit_page

    return edit_page(source.vault, source.root, page, old_text, new_text, version=version,
                     strict_links=strict_links)


EDIT_PAGE = Operation(
    name="edit_page",
    title="Edit a page",
    description="""\
Replace an exact span of a page's text, which must stand in it exactly once, by new text.

`version` is required: `read` the page first and pass its `version`; a page changed since is
refused (read it again). Returns the new `version` and the `links` report of the new text.""",
    params=(
        page_param(),
        Param("old_text", str, "The exact text to replace (it must occur exactly once).", required=True),
        Param("new_text", str, "The text to put in its place ('' deletes it).", required=True),
        _VERSION,
        _STRICT,
    ),
    run=_write_error(_edit),
    result="WriteResult",
    text=_write_text,
    note=_links_note,
)


def _add(source: Source, ref: str, *, folder: str | None, slug: str | None, update: bool, dry_run: bool,
         max_bytes: int | None, user: str | None = None) -> dict[str, Any]:
    from . import capture

    if not capture.is_url(ref):
        raise ValueError(f"{ref}: the add tool captures http and https URLs; for text you have, use create_page")
    settings = capture.capture_settings(source.root)
    doc = capture.load(ref, max_bytes or settings.max_bytes)
    cap = capture.capture(source.vault, source.root, doc, folder=folder, slug=slug, update=update, user=user)
    version = None if dry_run else capture.write_capture(source.vault, source.root, cap)
    return capture.payload(source.vault, cap, version)


ADD = Operation(
    name="add",
    title="Capture a web page",
    description="""\
Fetch one web page (http/https) and save it as a page with its provenance, in the capture folder.

HTML becomes clean Markdown (menus and footers dropped). The frontmatter records `source`,
`fetched` (UTC), `provenance: inferred`, `content_hash`, an inferred `type`/`usage` and `related`:
existing pages the text names, as suggestions (never put into the text). Never overwrites a
page; `update` replaces the page from the same URL only while nobody edited it. `dry_run`
returns the page without writing it.""",
    params=(
        Param("ref", str, "The URL (http or https).", required=True, metavar="REF"),
        Param("folder", str, "The vault-relative folder (default: capture.folder, else Obsidian's new-note "
              "folder, else inbox).", metavar="F"),
        Param("slug", str, "The file name instead of one made from the title.", metavar="NAME"),
        Param("update", bool, "Replace the page captured from the same source (refused if it was edited or reviewed).",
              default=False),
        Param("dry_run", bool, "Return the page without writing it.", default=False),
        Param("max_bytes", int, "The largest document accepted (default: capture.max_bytes, 5 MB).", minimum=1, metavar="N"),
        Param("user", str, "Write the page to this user's own folder (users/ID/, the vault's [users] folder; "
              "folder, if given, is under it); update replaces only this user's capture.", metavar="ID"),
    ),
    run=_write_error(_add),
    result="AddResult",
    text=lambda payload: [payload["content"]],
    note=_links_note,
)

WRITES: tuple[Operation, ...] = (CREATE_PAGE, APPEND_TO_PAGE, EDIT_PAGE, ADD)
WRITES_BY_NAME = {op.name: op for op in WRITES}
