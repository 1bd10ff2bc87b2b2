"""``textDocument/semanticTokens/full`` and ``/range``: wikilinks, tags and block ids.

The legend (``engine.annotate.TOKEN_TYPES`` and ``TOKEN_MODIFIERS``): types ``wikilink``,
``tag``, ``blockId``; modifiers ``unresolved``, ``aliasOnly``, ``ambiguous``, ``embed``, so a
theme can colour a broken link (``wikilink.unresolved``) without a diagnostic. Off with
``semanticTokens.enabled`` false.

Must not: decide what is a token; ``engine.annotate`` does. This module only encodes.
"""

from __future__ import annotations

from lsprotocol import types

from vaultlens.engine.annotate import TOKEN_MODIFIERS, TOKEN_TYPES, Token, semantic_tokens

from ..server import VaultServer
from .changes import document_text, state_and_page, wait_indexed

LEGEND = types.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS))
_TYPE = {name: i for i, name in enumerate(TOKEN_TYPES)}
_BIT = {name: 1 << i for i, name in enumerate(TOKEN_MODIFIERS)}


def encode(tokens: tuple[Token, ...] | list[Token]) -> list[int]:
    """Tokens (sorted, one line each) as the LSP integer stream: for each, the line delta, the
    start delta (from the previous token on the same line), length, type, modifier bits."""
    data: list[int] = []
    line = char = 0
    for token in tokens:
        span = token.span
        delta_line = span.start_line - line
        delta_char = span.start_char - char if delta_line == 0 else span.start_char
        bits = 0
        for name in token.modifiers:
            bits |= _BIT[name]
        data += [delta_line, delta_char, span.end_char - span.start_char, _TYPE[token.type], bits]
        line, char = span.start_line, span.start_char
    return data


async def _tokens(ls: VaultServer, uri: str) -> tuple[Token, ...] | None:
    found = state_and_page(ls, uri)
    if found is None or not found[0].settings.semantic_tokens_enabled:
        return None
    state, rel = found
    await wait_indexed(state)
    return semantic_tokens(state.vault, rel, document_text(ls, uri))


def register(server: VaultServer) -> None:
    """Register ``textDocument/semanticTokens/full`` and ``textDocument/semanticTokens/range``."""

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    async def semantic_tokens_full(ls: VaultServer, params: types.SemanticTokensParams) -> types.SemanticTokens | None:
        tokens = await _tokens(ls, params.text_document.uri)
        return None if tokens is None else types.SemanticTokens(data=encode(tokens))

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    async def semantic_tokens_range(ls: VaultServer, params: types.SemanticTokensRangeParams) -> types.SemanticTokens | None:
        tokens = await _tokens(ls, params.text_document.uri)
        if tokens is None:
            return None
        r = params.range
        inside = [
            t for t in tokens
            if (r.start.line, r.start.character) <= (t.span.end_line, t.span.end_char)
            and (t.span.start_line, t.span.start_char) <= (r.end.line, r.end.character)
        ]
        return types.SemanticTokens(data=encode(inside))
