"""``textDocument/completion`` inside ``[[…``: ranked pages, then headings after ``#``, blocks after ``#^``;
and tags after ``#`` in the body or on an item of the frontmatter ``tags``, most-used first.

The engine's order is kept by every common client: ``sortText`` is the zero-padded rank, and
``filterText`` starts with exactly what the user typed (so fuzzy filters score every item alike
and fall back to ``sortText``), with the label after it so typing more still narrows sensibly.
``isIncomplete`` makes the client ask again on the next keystroke.
"""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.complete import block_choices, heading_choices, link_context, page_choices
from vaultlens.engine.render import breakdown_table
from vaultlens.engine.tags import tag_completion
from vaultlens.engine.vault import Vault

from ..server import VaultServer

TRIGGERS = ["[", "#", "^", "|"]


def _edit(line: int, start: int, end: int, text: str) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end)),
        new_text=text,
    )


def _tags(vault: Vault, rel: str, lines: list[str], line_no: int, col: int, limit: int) -> types.CompletionList | None:
    """Tag completion items in the engine's order (``sortText`` is the rank)."""
    found = tag_completion(vault, rel, [text.rstrip("\r\n") for text in lines], line_no, col, limit)
    if found is None:
        return None
    items = [
        types.CompletionItem(
            label=f"#{choice.tag}" if not found.frontmatter else choice.tag,
            kind=types.CompletionItemKind.Keyword,
            detail=f"{choice.pages} page{'' if choice.pages == 1 else 's'}",
            sort_text=f"{rank:05d}",
            filter_text=f"{found.typed}{choice.tag}" if found.typed else choice.tag,
            text_edit=_edit(line_no, found.start, found.end, choice.tag),
        )
        for rank, choice in enumerate(found.choices)
    ]
    return types.CompletionList(is_incomplete=True, items=items)


def register(server: VaultServer) -> None:
    """Register ``textDocument/completion``."""

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=False),
    )
    def completion(ls: VaultServer, params: types.CompletionParams) -> types.CompletionList | None:
        found = ls.state_for_uri(params.text_document.uri)
        if found is None:
            return None
        state, rel = found
        doc = ls.workspace.get_text_document(params.text_document.uri)
        lines = doc.lines
        line_no = params.position.line
        if line_no >= len(lines):
            return None
        line = lines[line_no].rstrip("\r\n")
        ctx = link_context(line, params.position.character)
        if ctx is None:
            return _tags(state.vault, rel, lines, line_no, params.position.character, state.settings.limit)
        items: list[types.CompletionItem] = []
        if ctx.kind == "page":
            choices = page_choices(state.vault, ctx.typed, state.settings.limit, state.settings.link_style)
            for rank, choice in enumerate(choices):
                hit = choice.hit
                doc_md = f"**{hit.page.title}** · score {hit.score} · `{hit.page.path}`"
                if hit.matched:
                    doc_md += "\n\n" + breakdown_table(hit.matched)
                if hit.snippet:
                    doc_md += "\n\n> " + hit.snippet
                items.append(
                    types.CompletionItem(
                        label=choice.label,
                        kind=types.CompletionItemKind.File,
                        detail=f"{hit.score} · {hit.page.path}",
                        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc_md),
                        sort_text=f"{rank:05d}",
                        filter_text=f"{ctx.typed}{choice.label}" if ctx.typed else choice.label,
                        text_edit=_edit(line_no, ctx.start, ctx.end, ctx.page_text(choice)),
                        label_details=types.CompletionItemLabelDetails(description=hit.page.path),
                    )
                )
        elif ctx.kind == "heading":
            for rank, (text, level) in enumerate(heading_choices(state.vault, rel, ctx.target, ctx.typed)):
                items.append(
                    types.CompletionItem(
                        label=text,
                        kind=types.CompletionItemKind.Reference,
                        detail="#" * level,
                        sort_text=f"{rank:05d}",
                        filter_text=f"{ctx.typed}{text}" if ctx.typed else text,
                        text_edit=_edit(line_no, ctx.start, ctx.end, ctx.finish(text)),
                    )
                )
        else:
            for rank, (block_id, text) in enumerate(block_choices(state.vault, rel, ctx.target, ctx.typed)):
                items.append(
                    types.CompletionItem(
                        label=block_id,
                        kind=types.CompletionItemKind.Reference,
                        detail=text[:80],
                        sort_text=f"{rank:05d}",
                        filter_text=f"{ctx.typed}{block_id}" if ctx.typed else block_id,
                        text_edit=_edit(line_no, ctx.start, ctx.end, ctx.finish(block_id)),
                    )
                )
        return types.CompletionList(is_incomplete=True, items=items)
