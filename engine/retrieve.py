"""Retrieval beyond ranking, for people and agents: grep, glob, read levels, links, related.

Each function returns the JSON-ready result object that the CLI prints with ``--json`` and the
language server returns for the matching ``wiki/*`` request, so both are equal by construction.
Problems a caller can fix (a pattern that does not compile, a page that does not exist) raise
``RetrievalError`` with a message meant for them.

User patterns run under the ``regex`` package's per-call timeout and a total time budget, so a
catastrophic pattern ends with ``truncated: true`` instead of hanging the server.
"""

from __future__ import annotations

import re
import time
from typing import Any

import regex

from dataclasses import replace

from .model import Hit, Page
from .query import Query, normalize_folder, page_time, passes_filters
from .related import reasons, related
from .render import hit_to_json, vault_name
from .snippet import first_paragraph
from .text import collapse
from .vault import TYPED_EDGES, Vault

GREP_TOTAL_SECONDS = 2.0  # a grep never works longer than this in all
GREP_LINE_SECONDS = 0.05  # nor this long on one line
GREP_MAX_PATTERN = 1000
GLOB_MAX_PATTERN = 1000
ABSTRACT_CHARS = 400
LEVELS = (0, 1, 2)


class RetrievalError(ValueError):
    """A request that cannot be answered as asked; the message says why and what is accepted."""


# --- finding a page by how a person names it -----------------------------------------------


def find_page(vault: Vault, name: str) -> Page:
    """The page a path, title, alias or ``[[link]]`` names; RetrievalError when none does.
    A name several pages share gives the best-linked of them (``page_choice``)."""
    return page_choice(vault, name)[0]


def page_choice(vault: Vault, name: str) -> tuple[Page, tuple[str, ...]]:
    """The page a name picks, and every page it names when that is more than one (else ``()``).

    A path (or a name only one page has) is that page. A title, alias or file name several
    pages share picks the one with the most backlinks, then the one links resolve to (the
    shortest path); the candidates come in that order, the picked one first."""
    text = name.strip()
    m = re.fullmatch(r"!?\[\[(.*?)(?:\|.*)?\]\]", text)
    if m:
        text = m.group(1).split("#", 1)[0].strip()
    if not text:
        raise RetrievalError("a page is required: a path, title, alias or [[link]]")
    direct = vault.pages.get(text) or vault.pages.get(text + ".md")
    if direct is not None:
        return direct, ()
    res = vault.resolve(text)
    if res.path is None:
        raise RetrievalError(f"no page matches {name!r} (give a vault-relative path, a title, an alias or a [[link]])")
    if not res.ambiguous:
        return vault.pages[res.path], ()
    order = {path: n for n, path in enumerate(res.candidates)}
    ranked = sorted(res.candidates, key=lambda p: (-backlink_count(vault, p), order[p]))
    return vault.pages[ranked[0]], tuple(ranked)


def backlink_count(vault: Vault, path: str) -> int:
    """How many other pages link to ``path``."""
    return len(vault.linking_pages(path) - {path})


def with_choice(vault: Vault, payload: dict[str, Any], candidates: tuple[str, ...]) -> dict[str, Any]:
    """``payload`` with ``ambiguous: true`` and the ``candidates`` (file, title, backlinks) when
    the name it answers named several pages; unchanged otherwise."""
    if candidates:
        payload["ambiguous"] = True
        payload["candidates"] = [
            {"file": p, "title": vault.pages[p].title, "backlinks": backlink_count(vault, p)} for p in candidates
        ]
    return payload


def choice_note(payload: dict[str, Any]) -> str | None:
    """The text output's line for an ambiguous name: which page this is, and the others."""
    if not payload.get("ambiguous"):
        return None
    first, *others = payload["candidates"]
    rest = "; ".join(f"{c['file']} ({c['backlinks']})" for c in others)
    return (f"{len(payload['candidates'])} pages are named {first['title']!r}: showing {first['file']} "
            f"({first['backlinks']} backlinks, the most); the others: {rest}. Give a path to pick one.")


# --- grep ------------------------------------------------------------------------------------


def frontmatter_lines(text: str) -> list[str] | None:
    """A page text's frontmatter lines, index 0 standing for the opening ``---`` (document line 0),
    or None when the text has no closed frontmatter. ``grep`` takes these per page."""
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    return None if end is None else [""] + lines[1:end]



def compile_pattern(pattern: str, ignore_case: bool = False) -> Any:
    """A user's regular expression, compiled, or RetrievalError naming what is wrong."""
    if len(pattern) > GREP_MAX_PATTERN:
        raise RetrievalError(f"pattern is longer than {GREP_MAX_PATTERN} characters")
    try:
        return regex.compile(pattern, (regex.IGNORECASE if ignore_case else 0) | regex.VERSION0)
    except regex.error as exc:
        raise RetrievalError(f"pattern does not compile: {exc}") from None


def grep(
    vault: Vault,
    pattern: str,
    *,
    ignore_case: bool = False,
    folder: str | None = None,
    exclude: tuple[str, ...] = (),
    limit: int = 100,
    frontmatter: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Lines of page bodies matching ``pattern``, in path then line order (1-based line and column).

    ``frontmatter`` maps paths to their frontmatter lines when those should be searched too
    (the caller reads them: the engine's pages keep only the body).
    """
    compiled = compile_pattern(pattern, ignore_case)
    prefix = normalize_folder(folder) if folder else ""
    excluded = tuple(normalize_folder(e) for e in exclude if e.strip())
    deadline = time.monotonic() + GREP_TOTAL_SECONDS
    matches: list[dict[str, Any]] = []
    count = 0
    truncated = None
    for path in vault.sorted_paths():
        if prefix and not path.startswith(prefix + "/"):
            continue
        if any(path == e or path.startswith(e + "/") or path.startswith(e) for e in excluded if e):
            continue
        page = vault.pages[path]
        lines: list[tuple[int, str]] = []
        if frontmatter and path in frontmatter:
            lines += list(enumerate(frontmatter[path]))  # index 0 is the opening --- (line 0)
        lines += [(page.body_line + i, text) for i, text in enumerate(page.body.split("\n"))]
        for lineno, text in lines:
            if time.monotonic() > deadline:
                truncated = "time budget spent"
                break
            try:
                found = compiled.search(text, timeout=GREP_LINE_SECONDS)
            except TimeoutError:
                truncated = "pattern too slow on a line; skipped the rest"
                break
            if found is None:
                continue
            count += 1
            if len(matches) < limit:
                matches.append(
                    {"file": path, "line": lineno + 1, "column": found.start() + 1, "content": text.strip()[:500]}
                )
        if truncated:
            break
    return {
        "command": "grep",
        "vault": vault_name(vault),
        "pattern": pattern,
        "matches": matches,
        "count": count,
        "truncated": bool(truncated),
        **({"reason": truncated} if truncated else {}),
    }


# --- glob ------------------------------------------------------------------------------------


class Glob:
    """A compiled glob: ``**`` any folders, ``*`` and ``?`` within a segment, ``[abc]`` classes.

    Matching simulates the glob's automaton one character at a time (the sets of states met are
    memoised, as a lazily built DFA), so it takes time linear in the path whatever the pattern:
    a regex translation would backtrack exponentially on ``**a**a**a…b``.
    """

    _CLASS, _ONE, _STAR, _ANY, _DIRS = "class", "one", "star", "any", "dirs"  # token kinds

    def __init__(self, pattern: str) -> None:
        if len(pattern) > GLOB_MAX_PATTERN:
            raise RetrievalError(f"glob is longer than {GLOB_MAX_PATTERN} characters")
        p = pattern.strip().lstrip("./") if pattern.strip().startswith("./") else pattern.strip()
        tokens: list[tuple[str, Any]] = []  # (kind, literal text or class regex)
        i = 0
        while i < len(p):
            c = p[i]
            if p.startswith("**/", i):
                tokens.append((self._DIRS, None))  # (?:[^/]*/)*: no folder or any folders
                i += 3
            elif p.startswith("**", i):
                tokens.append((self._ANY, None))  # .*
                i += 2
            elif c == "*":
                tokens.append((self._STAR, None))  # [^/]*
                i += 1
            elif c == "?":
                tokens.append((self._ONE, None))  # [^/]
                i += 1
            elif c == "[" and p.find("]", i + 1) >= 0:
                j = p.find("]", i + 1)
                body = p[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                try:
                    tokens.append((self._CLASS, re.compile(f"[{body}]")))
                except re.error as exc:
                    raise RetrievalError(f"glob does not compile: {exc}") from None
                i = j + 1
            else:
                tokens.append(("literal", c))
                i += 1
        # Runs of wildcards that match the same strings as their widest member are one token.
        merged: list[tuple[str, Any]] = []
        for token in tokens:
            last = merged[-1][0] if merged else None
            if token[0] in (self._STAR, self._ANY, self._DIRS) and last == token[0]:
                continue
            if token[0] == self._STAR and last == self._ANY or token[0] == self._ANY and last == self._STAR:
                merged[-1] = (self._ANY, None)
                continue
            merged.append(token)
        self.tokens = tuple(merged)
        self._end = len(self.tokens)
        self._start = self._closure({0})
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _closure(self, states: set[int]) -> frozenset[int]:
        """``states`` plus every state reached by a wildcard matching nothing."""
        todo = list(states)
        out = set(states)
        while todo:
            s = todo.pop()
            if 0 <= s < self._end and self.tokens[s][0] in (self._STAR, self._ANY, self._DIRS) and s + 1 not in out:
                out.add(s + 1)
                todo.append(s + 1)
        return frozenset(out)

    def _step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        # State s < end: before token s; state end: matched; state -1 - s: inside a folder name
        # of the ``**/`` token s (it returns to s after the next "/").
        nxt: set[int] = set()
        for s in states:
            if s < 0:
                nxt.add(-1 - s if ch == "/" else s)
                continue
            if s == self._end:
                continue
            kind, value = self.tokens[s]
            if kind == "literal":
                if ch == value:
                    nxt.add(s + 1)
            elif kind == self._ONE:
                if ch != "/":
                    nxt.add(s + 1)
            elif kind == self._CLASS:
                if value.match(ch):
                    nxt.add(s + 1)
            elif kind == self._STAR:
                if ch != "/":
                    nxt.add(s)
            elif kind == self._ANY:
                nxt.add(s)
            else:  # _DIRS
                nxt.add(s if ch == "/" else -1 - s)
        return self._closure(nxt)

    def matches(self, path: str) -> bool:
        """Whether the whole of ``path`` matches."""
        states = self._start
        steps = self._steps
        for ch in path:
            key = (states, ch)
            found = steps.get(key)
            if found is None:
                found = self._step(states, ch)
                if len(steps) < GLOB_MAX_STATES:
                    steps[key] = found
            states = found
            if not states:
                return False
        return self._end in states


GLOB_MAX_STATES = 100_000  # memoised automaton steps per glob (memory bound; matching stays linear)


def glob(vault: Vault, pattern: str, limit: int = 0) -> dict[str, Any]:
    """Pages whose vault-relative path matches the glob, sorted. A pattern naming a folder
    (``wiki/ai/*``) matches the pages directly in it; ``**`` reaches below."""
    matcher = Glob(pattern)
    files = [
        p for p in vault.sorted_paths() if matcher.matches(p) or (p.endswith(".md") and matcher.matches(p[:-3]))
    ]
    count = len(files)
    if limit > 0:
        files = files[:limit]
    # ``matches``: the same paths by OpenViking's name (docs/contracts.md)
    return {"command": "glob", "vault": vault_name(vault), "pattern": pattern, "files": files, "matches": list(files),
            "count": count}


# --- read ------------------------------------------------------------------------------------


def _first_sentence(text: str) -> str:
    text = collapse(text)
    m = re.search(r"(?<=[.!?])\s", text)
    sentence = text[: m.start()] if m else text
    return sentence if len(sentence) <= 240 else sentence[:239] + "…"


_LIST_MARKER = re.compile(r"^\s*(?:\d{1,9}[.)]|[-*+])\s+(?:\[.\]\s+)?")


def _before_list(lines: list[str]) -> list[str]:
    """A section's opening lines up to the first list item (a numbered item's ``1.`` is no
    sentence end); a section that starts with a list gives its first item, without the marker."""
    out: list[str] = []
    for line in lines:
        m = _LIST_MARKER.match(line)
        if m:
            return out or [line[m.end():]]
        out.append(line)
    return out


def abstract(page: Page) -> str:
    """L0: frontmatter ``summary``/``description``/``desc``, else the first paragraph, bounded."""
    for key in ("summary", "description", "desc", "abstract"):
        value = page.meta.get(key)
        if isinstance(value, str) and value.strip():
            text = collapse(value)
            return text if len(text) <= ABSTRACT_CHARS else text[: ABSTRACT_CHARS - 1] + "…"
    text = first_paragraph(page)
    return text if len(text) <= ABSTRACT_CHARS else text[: ABSTRACT_CHARS - 1] + "…"


def overview(page: Page) -> str:
    """L1: the heading outline, each section with its first sentence, as Markdown."""
    lines = page.body.split("\n")
    out = [f"# {page.title}", "", abstract(page)]
    heads = list(page.headings)
    for n, h in enumerate(heads):
        start = h.span.start_line - page.body_line + 1
        end = (heads[n + 1].span.start_line - page.body_line) if n + 1 < len(heads) else len(lines)
        section = [ln for ln in lines[max(start, 0) : max(end, 0)] if ln.strip() and not ln.lstrip().startswith(("```", "~~~"))]
        first = _first_sentence(" ".join(_before_list(section[:6]))) if section else ""
        out.append(f"{'  ' * (h.level - 1)}- {h.text}" + (f": {first}" if first else ""))
    return "\n".join(out).strip()


def read(vault: Vault, name: str, level: int = 1, full_text: str | None = None) -> dict[str, Any]:
    """The page at a level of detail: 0 abstract, 1 overview, 2 full text.

    ``full_text`` is the whole file as the caller has it (disk or open buffer); without it,
    level 2 gives the body.
    """
    if level not in LEVELS:
        raise RetrievalError("level must be 0 (abstract), 1 (overview) or 2 (full text)")
    page, candidates = page_choice(vault, name)
    if level == 0:
        content = abstract(page)
    elif level == 1:
        content = overview(page)
    else:
        content = full_text if full_text is not None else page.body
    return with_choice(vault, {
        "command": "read",
        "vault": vault_name(vault),
        "page": page.path,
        "title": page.title,
        "level": level,
        "content": content,
    }, candidates)


# --- links and related -------------------------------------------------------------------------


def links(vault: Vault, name: str) -> dict[str, Any]:
    """Outgoing links, incoming links and typed edges of a page, with 1-based positions."""
    page, candidates = page_choice(vault, name)
    outgoing = []
    edges = []
    for link, res in vault.outlinks(page.path):
        entry = {
            "target": link.target,
            "kind": link.kind,
            "file": res.path,
            "via": res.via,
            "line": link.span.start_line + 1,
            "column": link.span.start_char + 1,
        }
        if link.heading:
            entry["heading"] = link.heading
        if link.block:
            entry["block"] = link.block
        if link.label:
            entry["label"] = link.label
        if res.ambiguous:
            entry["candidates"] = list(res.candidates)
        if link.kind in TYPED_EDGES:
            edges.append({"predicate": link.kind, "target": link.target, "file": res.path, "direction": "out"})
        else:
            outgoing.append(entry)
    incoming = []
    for source, link in vault.backlinks(page.path):
        if link.kind in TYPED_EDGES:
            edges.append({"predicate": link.kind, "target": page.path, "file": source, "direction": "in"})
            continue
        incoming.append(
            {"file": source, "kind": link.kind, "line": link.span.start_line + 1, "column": link.span.start_char + 1,
             "raw": link.raw}
        )
    return with_choice(vault, {
        "command": "links",
        "vault": vault_name(vault),
        "page": page.path,
        "outgoing": outgoing,
        "incoming": incoming,
        "edges": edges,
    }, candidates)


def related_payload(vault: Vault, name: str, limit: int = 10) -> dict[str, Any]:
    """The related pages a hover shows, as a result object: each hit is a search hit plus
    ``reasons``, the one-sentence explanation the hover's Related pages table shows."""
    page, candidates = page_choice(vault, name)
    hits = related(vault, page.path, limit)
    return with_choice(vault, {
        "command": "related",
        "vault": vault_name(vault),
        "page": page.path,
        "hits": [{**hit_to_json(vault, h), "reasons": reasons(h.matched)} for h in hits],
    }, candidates)


# --- listing: a search without search words --------------------------------------------------


def _has_scope(query: Query) -> bool:
    return bool(
        query.type is not None or query.folders or query.folder is not None or query.tag is not None
        or query.since is not None or query.until is not None or query.where or query.excluded
    )


def listing(vault: Vault, query: Query, sort: str = "score") -> tuple[Hit, ...]:
    """The pages a wordless search's filters let through (none without a filter), each as a hit
    of score 0 with its first paragraph; by title, or newest first for ``updated``/``created``."""
    if not _has_scope(query):
        return ()
    if query.min_score is not None and query.min_score > 0:
        return ()
    pages = [vault.pages[p] for p in vault.sorted_paths() if passes_filters(vault.pages[p], query)]
    hits = [Hit(page, (), 0, "") for page in pages]
    hits = reorder(hits, query, "title" if sort == "score" else sort)
    if query.limit > 0:
        hits = hits[: query.limit]
    return tuple(replace(h, snippet=first_paragraph(h.page)) for h in hits)


def reorder(hits, query: Query, sort: str) -> list[Hit]:
    """``hits`` by title (then path), or newest first by the page time ``sort`` names (pages
    without one last, by title); ``score`` keeps the ranking order."""
    if sort == "score":
        return list(hits)
    by_title = sorted(hits, key=lambda h: (h.page.title.casefold(), h.page.title, h.page.path))
    if sort == "title":
        return by_title
    timed = replace(query, time_field=sort)
    when = {h.page.path: page_time(h.page, timed) for h in by_title}
    dated = sorted((h for h in by_title if when[h.page.path] is not None), key=lambda h: when[h.page.path],
                   reverse=True)
    return dated + [h for h in by_title if when[h.page.path] is None]
