"""Diagnostics: what is wrong with a page's links and frontmatter, as findings with stable codes.

``diagnose`` checks one page against the live vault; ``pages_affected`` says whose findings
may change when one page changes, so a caller can re-check only those. Severities are words
(``error``, ``warning``, ``information``, ``hint``); the language server maps them. Codes:

- ``unresolved-link``: the link resolves to no page (severity configurable, may be off).
- ``missing-heading`` / ``missing-block``: the page exists but has no such heading or block.
- ``ambiguous-link``: more than one page answers to the link; it goes to the first.
- ``alias-link``: the link resolves only through an alias, which Obsidian does not follow.
- ``frontmatter-yaml``, ``frontmatter-unclosed``, ``frontmatter-not-mapping``, ``frontmatter-too-large``,
  ``too-large``, ``invalid-utf8``, ``invalid-utf16``, ``unreadable``: from the parser (``Page.problems``).
- ``duplicate-title`` / ``duplicate-alias``: another page has the same title or alias.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compact import has_anchored_links, has_problems
from .locate import Texts, frontmatter_aliases
from .model import Page, Span
from .navigate import ORIGIN, Location, find_block, find_heading, title_span
from .vault import Resolution, Vault

SEVERITIES = ("error", "warning", "information", "hint")
_PROBLEM_SEVERITY = {
    "frontmatter-yaml": "error",
    "frontmatter-unclosed": "error",
    "frontmatter-not-mapping": "error",
    "frontmatter-too-large": "warning",
}


@dataclass(frozen=True, slots=True)
class Rules:
    """What to report: ``unresolved`` is the severity of unresolved links, or None for off."""

    unresolved: str | None = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnostic: a stable ``code``, a severity word, a sentence, where, and the other
    places involved (the other pages of a duplicate, the candidates of an ambiguous link)."""

    code: str
    severity: str
    message: str
    span: Span
    related: tuple[Location, ...] = ()


def _quote(text: str) -> str:
    return f"“{text}”"


def _clean_links(page: Page, resolved: tuple[Resolution, ...], rules: Rules) -> bool:
    """Whether no link of the page can give a finding, decided without unpacking the page:
    every link resolves plainly (or is an attachment, or unresolved links are not reported)
    and none names a heading or a block."""
    if has_anchored_links(page):
        return False
    for res in resolved:
        if res.path is None:
            if rules.unresolved is not None and not res.attachment:
                return False
        elif res.ambiguous or res.via == "alias":
            return False
    return True


def _link_findings(vault: Vault, page: Page, rules: Rules) -> list[Finding]:
    out: list[Finding] = []
    resolved = vault.resolved_links(page.path) if vault.pages.get(page.path) is page else None
    if resolved is not None and _clean_links(page, resolved, rules):
        return out
    links = (*page.edges, *page.links)
    if resolved is None or len(resolved) != len(links):
        resolved = tuple(vault.resolve_link(link, page.path) for link in links)
    for link, res in zip(links, resolved):
        if res.attachment:
            continue
        if res.path is None:
            if rules.unresolved is not None and link.target.strip():
                out.append(
                    Finding("unresolved-link", rules.unresolved, f"No page named {_quote(link.target)} in the vault", link.span)
                )
            continue
        target = vault.pages[res.path]
        if res.ambiguous:
            others = ", ".join(res.candidates)
            out.append(
                Finding(
                    "ambiguous-link",
                    "warning",
                    f"{_quote(link.target)} matches {len(res.candidates)} pages ({others}); it goes to {res.path}",
                    link.span,
                    tuple(Location(p, ORIGIN) for p in res.candidates),
                )
            )
        if res.via == "alias":
            out.append(
                Finding(
                    "alias-link",
                    "information",
                    f"{_quote(link.target)} is an alias of {_quote(target.title)} ({res.path}): "
                    "Obsidian does not follow links by alias",
                    link.span,
                    (Location(res.path, ORIGIN),),
                )
            )
        if link.heading and find_heading(target, link.heading) is None:
            out.append(
                Finding(
                    "missing-heading",
                    "warning",
                    f"{_quote(target.title)} has no heading {_quote(link.heading)}",
                    link.span,
                    (Location(res.path, ORIGIN),),
                )
            )
        if link.block and find_block(target, link.block) is None:
            out.append(
                Finding(
                    "missing-block",
                    "warning",
                    f"{_quote(target.title)} has no block ^{link.block}",
                    link.span,
                    (Location(res.path, ORIGIN),),
                )
            )
    return out


def _problem_findings(page: Page) -> list[Finding]:
    out: list[Finding] = []
    if not has_problems(page):
        return out
    for problem in page.problems:
        line = max(0, problem.line)
        out.append(
            Finding(problem.code, _PROBLEM_SEVERITY.get(problem.code, "warning"), problem.message, Span(line, 0, line + 1, 0))
        )
    return out


def _others(vault: Vault, path: str, key: str) -> tuple[list[str], list[str]]:
    titles = sorted(p for p in vault.by_title.get(key, ()) if p != path)
    aliases = sorted(p for p in vault.by_alias.get(key, ()) if p != path)
    return titles, aliases


def _duplicate_message(what: str, name: str, titles: list[str], aliases: list[str]) -> str:
    parts = []
    if titles:
        parts.append("the title of " + ", ".join(titles))
    if aliases:
        parts.append("an alias of " + ", ".join(aliases))
    return f"{what} {_quote(name)} is also " + " and ".join(parts)


def _duplicate_findings(vault: Vault, page: Page, text: str | None) -> list[Finding]:
    out = []
    titles, aliases = _others(vault, page.path, page.title.casefold())
    if titles or aliases:
        out.append(
            Finding(
                "duplicate-title",
                "hint",
                _duplicate_message("Title", page.title, titles, aliases),
                title_span(page, text),
                tuple(Location(p, ORIGIN) for p in sorted({*titles, *aliases})),
            )
        )
    if page.aliases:
        spans = {name.casefold(): span for name, span in frontmatter_aliases(text)} if text is not None else {}
        for alias in page.aliases:
            titles, aliases = _others(vault, page.path, alias.casefold())
            if titles or aliases:
                out.append(
                    Finding(
                        "duplicate-alias",
                        "hint",
                        _duplicate_message("Alias", alias, titles, aliases),
                        spans.get(alias.casefold(), ORIGIN),
                        tuple(Location(p, ORIGIN) for p in sorted({*titles, *aliases})),
                    )
                )
    return out


def diagnose(vault: Vault, path: str, rules: Rules = Rules(), texts: Texts | None = None) -> tuple[Finding, ...]:
    """Every finding for page ``path``, sorted by position then code.

    ``texts`` gives a page's document text; it is asked only for a page with a duplicate title
    or alias written in its frontmatter (without it, those findings stand at the start of the page).
    """
    page = vault.get(path)
    if page is None:
        return ()
    text = texts(path) if texts is not None and needs_text(vault, path) else None
    found = _problem_findings(page) + _link_findings(vault, page, rules) + _duplicate_findings(vault, page, text)
    return tuple(sorted(found, key=lambda f: (f.span.start_line, f.span.start_char, f.code, f.message)))


def needs_text(vault: Vault, path: str) -> bool:
    """Whether ``diagnose`` would place a finding better with the page's text (a duplicate
    title or alias written in the frontmatter)."""
    page = vault.get(path)
    if page is None or page.body_line == 0:
        return False
    keys = [page.title.casefold(), *(a.casefold() for a in page.aliases)]
    return any(_others(vault, path, k) != ([], []) for k in keys)


def _names_and_anchors(vault: Vault, page: Page) -> tuple:
    """What other pages' findings can see of a page: its path, names, headings and block ids."""
    return (
        page.path,
        sorted(vault.page_keys(page)),
        page.title.casefold(),
        tuple(h.text for h in page.headings),
        tuple(b for b, _ in page.blocks),
    )


def pages_affected(vault: Vault, before: Page | None, after: Page | None) -> tuple[str, ...]:
    """Pages whose findings may change when a page changes from ``before`` to ``after``
    (either None for a page that appears or goes): the page itself, the pages whose links name
    it either way, and the pages sharing a title or alias with it. Sorted; only live pages."""
    if before is not None and after is not None and _names_and_anchors(vault, before) == _names_and_anchors(vault, after):
        return (after.path,) if after.path in vault.pages else ()  # typing in a page: only its own links
    keys: set[str] = set()
    paths: set[str] = set()
    for page in (before, after):
        if page is not None:
            keys |= vault.page_keys(page)
            paths.add(page.path)
    for key in keys:
        paths.update(vault.linkers.get(key, ()))
        paths.update(vault.by_title.get(key, ()))
        paths.update(vault.by_alias.get(key, ()))
    return tuple(sorted(p for p in paths if p in vault.pages))
