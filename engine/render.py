"""Hits to wire data and text: the JSON object every surface shares, and Markdown for hovers.

``search_payload`` is the one place the search result object is built: the CLI prints it and
the language server returns it, so both are equal by construction.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .model import Hit, Match, Page
from .query import Query
from .vault import Vault


def link_target(vault: Vault, page: Page, style: str = "auto") -> str:
    """The shortest link target that resolves to ``page`` alone, in vaultlens and in Obsidian.

    ``style``: ``title`` (the title when it resolves uniquely), ``filename`` (the file stem),
    ``path`` (vault-relative path without ``.md``), or ``auto`` (the file stem when it is
    unique, else the path).
    """
    noext = page.path[:-3] if page.path.lower().endswith(".md") else page.path
    if style == "path":
        return noext
    if style == "title":
        r = vault.resolve(page.title)
        if r.path == page.path and not r.ambiguous:
            return page.title
    r = vault.resolve(page.stem)
    if r.path == page.path and not r.ambiguous and r.via == "stem":
        return page.stem
    return noext


def wikilink(vault: Vault, page: Page, style: str = "auto", label: str | None = None) -> str:
    """A ``[[…]]`` link to ``page``; shows the title as the label when the target differs from it."""
    target = link_target(vault, page, style)
    if label is None and target.rsplit("/", 1)[-1].casefold() != page.title.casefold():
        label = page.title
    if not label or label == target:
        return f"[[{target}]]"
    return f"[[{label}|{target}]]" if vault.label_first else f"[[{target}|{label}]]"


def hit_to_json(vault: Vault, hit: Hit) -> dict[str, Any]:
    """One hit as the wire object: title, wikilink, file, type, score, [via], snippet, matched.

    ``via`` (which kinds of arm found the page) is there for ``--rank hybrid`` hits only.
    """
    out: dict[str, Any] = {
        "title": hit.page.title,
        "wikilink": wikilink(vault, hit.page),
        "file": hit.page.path,
        "type": hit.page.type,
        "score": hit.score,
    }
    if hit.via:
        out["via"] = hit.via
    out["snippet"] = hit.snippet
    out["matched"] = [m.to_json() for m in hit.matched]
    return out


EXPLAIN = ("full", "summary", "none")
TOP_CHANNELS = 3  # how many channels a ``summary`` hit lists


def explain_hit(hit: dict[str, Any], explain: str = "full") -> dict[str, Any]:
    """A wire hit with as much of its breakdown as ``explain`` asks for.

    ``full``: every component in ``matched`` (the ranking contract). ``summary``: instead of
    ``matched``, ``channels``: the TOP_CHANNELS channels that gave the most points, each with its
    points summed (``[{"channel": "body-bm25", "points": 6.5}, …]``, most first, then by name).
    ``none``: no breakdown. Both keep score, title, wikilink, file, via and snippet, and ``type`` when the
    page has one.
    """
    if explain == "full":
        return hit
    matched = hit.pop("matched")
    if hit.get("type") is None:
        hit.pop("type", None)  # no frontmatter type: nothing to say
    if explain == "summary":
        totals: dict[str, float] = {}
        for m in matched:
            totals[m["channel"]] = totals.get(m["channel"], 0) + m["points"]
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_CHANNELS]
        hit["channels"] = [{"channel": channel, "points": round(points, 6)} for channel, points in ranked]
    return hit


def vault_name(vault: Vault) -> str:
    """The vault as named in results: its folder's name (the same on every machine)."""
    return os.path.basename(os.path.normpath(vault.root)) if vault.root else ""


def search_payload(vault: Vault, query: Query, hits: tuple[Hit, ...], *, hints_threshold: float | None = None,
                   explain: str = "full") -> dict[str, Any]:
    """The search result object that ``vaultlens search --json`` prints and ``wiki/search`` returns.

    ``hints_threshold``: where ``hints.sufficient`` starts (None: ``hints.SUFFICIENT``);
    ``explain``: how much of each hit's breakdown to keep (``EXPLAIN``, see ``explain_hit``)."""
    payload: dict[str, Any] = {
        "command": "search",
        "vault": vault_name(vault),
        "query": query.text,
        "hits": [explain_hit(hit_to_json(vault, h), explain) for h in hits],
    }
    if query.operators or query.context or len(query.folders) > 1 or query.truncated or query.weak:
        from .query import context_page

        plan: dict[str, Any] = {"terms": list(query.terms)}
        if len(query.folders) > 1:
            plan["folders"] = list(query.folders)
            plan["folders_match"] = "any"  # a page under any of them
        if query.weak:  # count only in phrase and exact-name channels (docs/ranking.md, weak terms)
            plan["weak"] = list(query.weak)
        if query.truncated:
            plan["truncated"] = list(query.truncated)
        if query.operators:
            plan["operators"] = [{"operator": op, "value": value} for op, value in query.operators]
        if query.context:
            plan["context"] = context_page(vault, query)
            plan["expanded_queries"] = expanded_queries(vault, query)
        payload["query_plan"] = plan
    if query.hints:
        from .hints import SUFFICIENT, hints

        payload["hints"] = hints(vault, query, hits, SUFFICIENT if hints_threshold is None else hints_threshold)
    return payload


def dumps(payload: Any) -> str:
    """Canonical JSON text: UTF-8 characters kept, keys in insertion order, no trailing spaces."""
    return json.dumps(payload, ensure_ascii=False, indent=2)


def compact_dumps(payload: Any) -> str:
    """The same JSON on one line without spaces (the MCP tools' text: an agent's context is small)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def hit_line(hit: Hit, label: str = "") -> str:
    """One line of the human output: score, [match label,] [[Title]], (path)."""
    tag = f"  {label:<6}" if label else ""
    return f"{score_text(hit.score):>6}{tag}  [[{hit.page.title}]]  ({hit.page.path})"


def score_text(value: int | float) -> str:
    """A score or points as the text output and tables write them: integers as they are, others
    to six decimals at most."""
    return str(value) if isinstance(value, int) else f"{value:.6f}".rstrip("0").rstrip(".")


def breakdown_table(matched: tuple[Match, ...]) -> str:
    """The components of a score as a compact Markdown table."""
    rows = ["| channel | term | field | hits | points |", "|---|---|---|--:|--:|"]
    for m in matched:
        term = m.term if m.term else "(title)"
        field = m.field + (f" via {m.via}" if m.via else "")
        rows.append(f"| {m.channel} | {_cell(term)} | {_cell(field)} | {m.hits} | {score_text(m.points)} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def page_hover(vault: Vault, path: str, *, related_pages: bool = True, via: str | None = None) -> str:
    """Markdown for hovering a link to ``path``: what the page is, its outline, why it relates."""
    from .related import reasons, related
    from .snippet import first_paragraph

    page = vault.pages[path]
    out = [f"### {page.title}", ""]
    facts = [f"`{page.path}`"]
    if page.type:
        facts.append(f"type **{page.type}**")
    backlinks = vault.linking_pages(path) - {path}
    # The count of unlinked mentions is the page's own code lens, not the hover's: finding them
    # reads the text of every page holding the name's words (hundreds of milliseconds on a
    # heavily linked vault), and a hover must answer at once.
    facts.append(f"{len(backlinks)} backlink{'s' if len(backlinks) != 1 else ''}")
    out.append(" · ".join(facts))
    if page.tags:
        out.append("")
        out.append("Tags: " + " ".join(f"#{t}" for t in page.tags))
    if via == "alias":
        out += ["", "_Resolved through an alias only: Obsidian does not follow this link._"]
    para = first_paragraph(page)
    if para:
        out += ["", "> " + para]
    if page.headings:
        out += ["", "**Outline**", ""]
        for h in page.headings[:12]:
            out.append(f"{'  ' * (h.level - 1)}- {h.text}")
        if len(page.headings) > 12:
            out.append(f"- … {len(page.headings) - 12} more")
    if related_pages:
        rel = related(vault, path, 5)
        if rel:
            out += ["", "**Related pages**", "", "| page | score | why |", "|---|--:|---|"]
            for hit in rel:
                out.append(f"| {_cell(hit.page.title)} | {hit.score} | {_cell(reasons(hit.matched))} |")
    return "\n".join(out)


def unresolved_hover(vault: Vault, target: str, candidates: tuple[Hit, ...]) -> str:
    """Markdown for a link that resolves to no page: say so, show the best candidates and why."""
    out = [f"### No page named “{target}”", "", "This link resolves to no page in the vault."]
    if candidates:
        out += ["", "**Closest pages**", "", "| page | score | matched |", "|---|--:|---|"]
        for hit in candidates:
            why = ", ".join(f"{m.channel} {m.term}".strip() for m in hit.matched[:4])
            out.append(f"| {_cell(hit.page.title)} (`{_cell(hit.page.path)}`) | {score_text(hit.score)} | {_cell(why)} |")
    return "\n".join(out)


def tag_hover(vault: Vault, tag: str, limit: int = 8) -> str:
    """Markdown for hovering a ``#tag``: how many pages carry it (or a tag below it), and the top ones."""
    want = tag.casefold()
    paths: set[str] = set()
    for name, holders in vault.tag_pages.items():
        if name == want or name.startswith(want + "/"):
            paths.update(holders)
    ranked = sorted(paths, key=lambda p: (-len(vault.linking_pages(p)), vault.pages[p].title.casefold(), p))
    out = [f"### #{tag}", "", f"{len(paths)} page{'s carry' if len(paths) != 1 else ' carries'} this tag."]
    if ranked:
        out.append("")
        for p in ranked[:limit]:
            out.append(f"- {vault.pages[p].title} (`{p}`)")
        if len(ranked) > limit:
            out.append(f"- … {len(ranked) - limit} more")
    return "\n".join(out)


def expanded_queries(vault: Vault, query: Query, most: int = 5) -> list[str]:
    """The query with one term swapped for a synonym from ``_vocabulary.md``: what synonym-term
    also looked for (at most ``most``, in term order then synonym order)."""
    out: list[str] = []
    for term in query.terms:
        for synonym in vault.vocabulary.synonyms(term):
            words = [" ".join(synonym) if t == term else t for t in query.terms]
            out.append(" ".join(words))
            if len(out) >= most:
                return out
    return out
