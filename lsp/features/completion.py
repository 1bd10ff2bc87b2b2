"""``textDocument/completion`` inside ``[[…``: ranked pages, then headings after ``#``, blocks after ``#^``;
and tags after ``#`` in the body or on an item of the frontmatter ``tags``, most-used first.

The engine's order is kept by every common client: ``sortText`` is the zero-padded rank, and
``filterText`` starts with exactly what the user typed (so fuzzy filters score every item alike
and fall back to ``sortText``), with the label after it so typing more still narrows sensibly.
``isIncomplete`` makes the client ask again on the next keystroke. A client that resolves an
item's ``documentation`` (``completionItem/resolve``, as VS Code does for the item it shows)
gets page items without it, and so without their snippets: resolve makes one page's.
"""

from __future__ import annotations

from datetime import date

from lsprotocol import types
from pygls.capabilities import get_capability

from vaultlens.engine.complete import (
    BlockChoice,
    LinkContext,
    block_choices,
    block_id_change,
    callout_completion,
    daily_choices,
    heading_choices,
    link_context,
    page_choices,
    page_detail,
)
from vaultlens.engine.dailynotes import asks_first
from vaultlens.engine.edits import EditError
from vaultlens.engine.model import Hit
from vaultlens.engine.render import breakdown_table
from vaultlens.engine.tags import tag_completion
from vaultlens.engine.vault import Vault

from ..server import VaultServer, VaultState
from .changes import RequestFailed, applies_document_changes, texts_for, to_workspace_edit

TRIGGERS = ["[", "#", "^", "|", "!"]
ADD_BLOCK_ID = "vaultlens.addBlockId"


def today() -> date:
    """The local date: what ``[[today]]`` means (the engine takes it as an argument)."""
    return date.today()


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


def _callouts(line_no: int, line: str, col: int) -> types.CompletionList | None:
    found = callout_completion(line, col)
    if found is None:
        return None
    items = [
        types.CompletionItem(
            label=name,
            kind=types.CompletionItemKind.EnumMember,
            detail=f"alias of {kind}" if name != kind else "callout",
            sort_text=f"{rank:05d}",
            filter_text=f"{found.typed}{name}" if found.typed else name,
            text_edit=_edit(line_no, found.start, found.end, name if found.closed else f"{name}]"),
        )
        for rank, (name, kind) in enumerate(found.choices)
    ]
    return types.CompletionList(is_incomplete=False, items=items)


def _daily_items(state: VaultState, ctx: LinkContext, line_no: int, after: int) -> list[types.CompletionItem]:
    """Daily-note items, ranked from ``after`` on (0: before the pages)."""
    fmt, folder = state.settings.daily_note
    items = []
    found = daily_choices(state.vault, ctx.typed, today(), fmt, folder, state.settings.link_style)
    for rank, (note, exists) in enumerate(found):
        items.append(
            types.CompletionItem(
                label=note.name,
                kind=types.CompletionItemKind.Event,
                detail=f"{note.day.isoformat()} · {note.path}" + ("" if exists else " (not created yet)"),
                sort_text=f"{after + rank:05d}",
                filter_text=f"{ctx.typed}{note.name}",
                text_edit=_edit(line_no, ctx.start, ctx.end, ctx.finish(note.target)),
                label_details=types.CompletionItemLabelDetails(description=note.target),
            )
        )
    return items


def _block_item(
    state: VaultState, rel: str, ctx: LinkContext, line_no: int, rank: int, choice: BlockChoice
) -> types.CompletionItem:
    item = types.CompletionItem(
        label=choice.text[:60] if choice.new else choice.block_id,
        kind=types.CompletionItemKind.Text if choice.new else types.CompletionItemKind.Reference,
        detail=f"new block id ^{choice.block_id}" if choice.new else choice.text[:80],
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=choice.text) if choice.new else None,
        sort_text=f"{rank:05d}",
        filter_text=f"{ctx.typed}{choice.text}" if choice.new else f"{ctx.typed}{choice.block_id}",
        text_edit=_edit(line_no, ctx.start, ctx.end, ctx.finish(choice.block_id)),
    )
    if not choice.new:
        return item
    if choice.path == rel:
        # The block is in this buffer: its id is one more edit of this completion, applied with it.
        item.additional_text_edits = [_edit(choice.line, choice.col, choice.col, f" ^{choice.block_id}")]
    else:
        # Another page: the client runs this command after inserting the link, and the server
        # asks it to apply one versioned WorkspaceEdit (workspace/applyEdit).
        item.command = types.Command(
            title="Add the block id",
            command=ADD_BLOCK_ID,
            arguments=[state.root, choice.path, choice.line, choice.col, choice.block_id],
        )
    return item


def _page_doc(hit: Hit) -> types.MarkupContent:
    """A page item's documentation: title, score and path, the breakdown table, the snippet."""
    doc_md = f"**{hit.page.title}** · score {hit.score} · `{hit.page.path}`"
    if hit.matched:
        doc_md += "\n\n" + breakdown_table(hit.matched)
    if hit.snippet:
        doc_md += "\n\n> " + hit.snippet
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc_md)


def _resolves_documentation(ls: VaultServer) -> bool:
    """Whether the client fills an item's ``documentation`` in through ``completionItem/resolve``
    (VS Code does, for the item shown): then page items leave it, and their snippets, to it."""
    props = get_capability(ls.client_capabilities, "text_document.completion.completion_item.resolve_support.properties", None)
    return "documentation" in (props or ())


def register(server: VaultServer) -> None:
    """Register ``textDocument/completion`` and ``completionItem/resolve``."""

    @server.feature(types.COMPLETION_ITEM_RESOLVE)
    def completion_item_resolve(ls: VaultServer, item: types.CompletionItem) -> types.CompletionItem:
        # a page item's documentation, deferred (``data``: its vault, page and the text typed)
        data = item.data
        if item.documentation is not None or not isinstance(data, dict) or data.get("kind") != "page":
            return item
        root = data.get("root")
        state = ls.vaults.get(root) if isinstance(root, str) else None
        path, typed = data.get("path"), data.get("typed")
        if state is None or not isinstance(path, str) or not isinstance(typed, str):
            return item
        hit = page_detail(state.vault, typed, path)
        if hit is not None:
            item.documentation = _page_doc(hit)
        return item

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGERS, resolve_provider=True),
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
            callouts = _callouts(line_no, line, params.position.character)
            if callouts is not None:
                return callouts
            return _tags(state.vault, rel, lines, line_no, params.position.character, state.settings.limit)
        items: list[types.CompletionItem] = []
        if ctx.kind == "page":
            first = asks_first(ctx.typed)
            if first:
                items += _daily_items(state, ctx, line_no, 0)
            lazy = _resolves_documentation(ls)
            choices = page_choices(state.vault, ctx.typed, state.settings.limit, state.settings.link_style,
                                   snippets=not lazy)
            for rank, choice in enumerate(choices):
                hit = choice.hit
                items.append(
                    types.CompletionItem(
                        label=choice.label,
                        kind=types.CompletionItemKind.File,
                        detail=f"{hit.score} · {hit.page.path}",
                        documentation=None if lazy else _page_doc(hit),
                        data={"kind": "page", "root": state.root, "path": hit.page.path, "typed": ctx.typed} if lazy else None,
                        sort_text=f"{len(items):05d}",
                        filter_text=f"{ctx.typed}{choice.label}" if ctx.typed else choice.label,
                        text_edit=_edit(line_no, ctx.start, ctx.end, ctx.page_text(choice)),
                        label_details=types.CompletionItemLabelDetails(description=hit.page.path),
                    )
                )
            if not first:
                items += _daily_items(state, ctx, line_no, len(items))
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
            blocks = block_choices(state.vault, rel, ctx.target, ctx.typed, line_no)
            for rank, choice in enumerate(blocks):
                items.append(_block_item(state, rel, ctx, line_no, rank, choice))
        return types.CompletionList(is_incomplete=True, items=items)

    @server.command(ADD_BLOCK_ID)
    async def add_block_id(ls: VaultServer, root: str, rel: str, line: int, col: int, block_id: str) -> None:
        """Add the block id a completion linked to, in another page: one versioned WorkspaceEdit."""
        try:
            state = ls.vaults[root]
        except (TypeError, KeyError):
            raise RequestFailed("vaultlens.addBlockId takes a vault, a page, a line, a column and an id.") from None
        if not applies_document_changes(ls):
            raise RequestFailed("vaultlens cannot add the block id: the editor cannot apply versioned document changes.")
        try:
            change = block_id_change(texts_for(ls, state)(rel), rel, int(line), int(col), str(block_id))
        except EditError as exc:
            raise RequestFailed(str(exc)) from None
        if change.edits:
            await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=to_workspace_edit(ls, state, change), label="Add block id")
            )
