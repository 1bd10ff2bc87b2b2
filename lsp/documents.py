"""Open buffers as the client sees them: LSP lines, positions clamped as the spec says, edits that
never get lost.

pygls 2.1's ``TextDocument`` differs from the LSP specification in three ways that corrupt a
buffer or crash a request, so the workspace makes documents of this module's classes instead
(through ``lsp/pygls_compat.py``, which holds the pygls internals they hook into):

- Lines: pygls splits with ``str.splitlines``, which also breaks at ``\\x0b``, ``\\x0c``,
  ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029; LSP (and the engine, ``engine/page.py``) break
  only at ``\\r\\n``, ``\\r`` and ``\\n``. A page holding U+2028 had every later edit land on the
  wrong line.
- Positions: a character past the end of a line must mean the end of that line ("defaults back
  to the line length", LSP 3.17 ``Position``). pygls lands one character short on the last line
  (an insert at ``(0, 99)`` into ``abc`` gave ``abXc``), one past the line break on a line of
  its exact length plus one (between ``\\r`` and ``\\n`` on CRLF lines), and it overwrites the
  request's ``Position`` object while doing so.
- A reversed range (end before start) dropped the inserted text; a document that was never
  opened and is not on disk raised FileNotFoundError from ``source``.

Must not: know about vaults or pages; this is the editor buffer only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from .pygls_compat import TextDocumentBase, WorkspaceBase

log = logging.getLogger("vaultlens")

# One line with its terminator; LSP knows exactly three line terminators.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def split_lines(text: str) -> tuple[str, ...]:
    """The lines of ``text`` as LSP counts them, each with its terminator (like ``splitlines(True)``)."""
    return tuple(_LINE.findall(text))


def _content(line: str) -> str:
    """A line without its terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\r", "\n")):
        return line[:-1]
    return line


class VaultPositionCodec(PositionCodec):
    """Client positions (UTF-16 code units) to code points, clamped as LSP says."""

    def position_from_client_units(
        self, lines: Sequence[str], position: types.Position
    ) -> ServerTextPosition:
        """The code-point position of a client position.

        A line past the last is the end of the document; a character past the end of its line
        is the end of that line (never its terminator). A column inside a surrogate pair counts
        as after the character. ``position`` is not modified.
        """
        if not lines:
            return ServerTextPosition(0, 0)
        line_no = max(0, position.line)
        if line_no >= len(lines):
            return ServerTextPosition(len(lines) - 1, len(lines[-1]))
        content = _content(lines[line_no])
        wanted = max(0, position.character)
        units = 0
        index = 0
        for char in content:
            if units >= wanted:
                break
            units += self.impl.code_units_for_char(char)
            index += 1
        return ServerTextPosition(line_no, index)


class VaultTextDocument(TextDocumentBase):
    """A buffer whose lines, positions and incremental edits follow the LSP specification."""

    @property
    def lines(self) -> Sequence[str]:
        """The lines, split at ``\\r\\n``, ``\\r`` and ``\\n`` only, each with its terminator."""
        return split_lines(self.source)

    @property
    def source(self) -> str:
        """The buffer's text; for a document never opened, the file on disk (empty if unreadable)."""
        text = self.stored_text
        if text is None and self.path is not None:
            try:
                return Path(self.path).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                return ""
        return text or ""

    def apply_range_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """Replace the change's range (clamped, and put in order if reversed) with its text."""
        text = self.source
        lines = split_lines(text)
        start = self._offset(lines, change.range.start)
        end = self._offset(lines, change.range.end)
        if end < start:
            start, end = end, start
        self.stored_text = text[:start] + change.text + text[end:]

    def _offset(self, lines: Sequence[str], position: types.Position) -> int:
        at = self.position_codec.position_from_client_units(lines, position)
        return sum(len(line) for line in lines[: at.line]) + at.character


class VaultWorkspace(WorkspaceBase):
    """pygls' workspace, holding ``VaultTextDocument`` buffers that share one ``VaultPositionCodec``."""

    document_class = VaultTextDocument
    codec_class = VaultPositionCodec
