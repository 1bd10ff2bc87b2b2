"""Unlinked mentions and link suggestions in the editor (``engine.mentions``).

- a code lens "N unlinked mentions" on a page's first line (with ``codeLens.enabled``), running
  ``vaultlens.showMentions``, which answers with their locations (``[uri]`` alone lists them
  too, so any client can call it as the command listing a page's mentions);
- not in a link's hover, which shows "N backlinks" only: counting mentions reads the text of
  every page holding the name's words, and a hover must answer at once;
- hint diagnostics (``link-suggestion``) on the phrases of an open page that name another page
  (``linkSuggestions``: ``hint``, ``information`` or ``off``);
- code actions: "Link mention" on an occurrence (one per page the phrase names, best first),
  and "Link all mentions" of a page (from its title line, or from one of its mentions): one
  versioned WorkspaceEdit over every page, checked by ``engine.edits.link_mentions``.

codelens.py, diagnostics.py and actions.py call the functions here; this module
registers only its command.

Must not: decide what is a mention (``engine.mentions``) or how to link it (``engine.edits``).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from vaultlens.engine.diagnose import Finding
from vaultlens.engine.edits import EditError, link_mentions
from vaultlens.engine.mentions import SUGGESTION_CODE, mention_at, suggestion_findings, unlinked_mentions
from vaultlens.engine.navigate import Location

from ..server import VaultServer, VaultState
from .changes import applies_document_changes, open_documents, texts_for, to_location, to_workspace_edit

SHOW_MENTIONS = "vaultlens.showMentions"


def _count(n: int) -> str:
    return f"{n} unlinked mention{'' if n == 1 else 's'}"


def code_lenses(ls: VaultServer, state: VaultState, rel: str, uri: str) -> list[types.CodeLens]:
    """The "N unlinked mentions" lens of a page (none when it has none)."""
    found = unlinked_mentions(state.vault, rel)
    if not found:
        return []
    docs = open_documents(ls, state)
    locations = [to_location(state, Location(m.path, m.span), docs) for m in found]
    top = types.Position(line=0, character=0)
    return [types.CodeLens(range=types.Range(start=top, end=top),
                           command=types.Command(title=_count(len(found)), command=SHOW_MENTIONS,
                                                 arguments=[uri, top, locations]))]


def findings(state: VaultState, rel: str) -> tuple[Finding, ...]:
    """The link suggestions of an open page, as findings (none when ``linkSuggestions`` is off)."""
    severity = state.settings.link_suggestions
    if severity == "off" or rel not in state.open_docs or rel not in state.vault.pages:
        return ()
    return suggestion_findings(state.vault, rel, severity)


def code_actions(ls: VaultServer, state: VaultState, rel: str,
                 params: types.CodeActionParams) -> list[types.CodeAction]:
    """"Link mention" for each mention the range touches, "Link all mentions" of its page and,
    on the page's own title line, of this page."""
    vault, r = state.vault, params.range
    texts = texts_for(ls, state)
    style = state.settings.link_style
    out: list[types.CodeAction] = []
    all_targets: list[str] = []
    for m in mention_at(vault, rel, r.start.line, r.start.character, r.end.line, r.end.character):
        diagnostics = [d for d in params.context.diagnostics if d.code == SUGGESTION_CODE
                       and (d.range.start.line, d.range.start.character) == (m.span.start_line, m.span.start_char)]
        for n, target in enumerate(m.targets):
            page = vault.pages[target]
            try:
                change = link_mentions(vault, [m], target, texts, style)
            except EditError:
                continue
            out.append(types.CodeAction(
                title=f"Link mention to [[{page.title}]]" + (f" ({target})" if len(m.targets) > 1 else ""),
                kind=types.CodeActionKind.QuickFix, diagnostics=diagnostics or None,
                is_preferred=(n == 0) or None, edit=to_workspace_edit(ls, state, change)))
        all_targets.append(m.targets[0])
    page = vault.pages.get(rel)
    if page is not None and r.start.line <= _title_line(page):
        all_targets.append(rel)
    if applies_document_changes(ls):  # one versioned edit over many pages, or none
        for target in dict.fromkeys(all_targets):
            found = unlinked_mentions(vault, target)
            if len(found) < 2 and target != rel:
                continue  # the one occurrence is the "Link mention" above
            if not found:
                continue
            try:
                change = link_mentions(vault, found, target, texts, style)
            except EditError:
                continue
            pages = len({m.path for m in found})
            out.append(types.CodeAction(
                title=f"Link all {len(found)} mentions of [[{vault.pages[target].title}]] "
                      f"({pages} page{'' if pages == 1 else 's'})",
                kind=types.CodeActionKind.QuickFix, edit=to_workspace_edit(ls, state, change)))
    return out


def _title_line(page) -> int:
    """The line a page's name is written on: its first heading when it reads as the title,
    else the body's first line (a frontmatter title is above it)."""
    for heading in page.headings[:1]:
        if heading.text.casefold() == page.title.casefold():
            return heading.span.start_line
    return page.body_line


def register(server: VaultServer) -> None:
    """Register the ``vaultlens.showMentions`` command."""

    @server.command(SHOW_MENTIONS)
    def show_mentions(ls: VaultServer, *args: Any) -> Any:
        """The locations the lens carries (its third argument), or those of the page ``[uri]``."""
        if len(args) > 2:
            return args[2]
        if not args or not isinstance(args[0], str):
            return []
        found = ls.state_for_uri(args[0])
        if found is None or found[1] not in found[0].vault.pages:
            return []
        state, rel = found
        docs = open_documents(ls, state)
        return [to_location(state, Location(m.path, m.span), docs) for m in unlinked_mentions(state.vault, rel)]
