"""The names pass of a cold start: every page's names (title, aliases, file name) before any body.

A cold start parses every page in full (``engine.scan.load_vault``: seconds at 10,000 pages).
Most of what an editor asks first needs only the pages' names: workspace symbols, ``[[``
completion, where a link goes. So a cold load first reads each page's frontmatter only (the
title, aliases, tags, type, dates and typed edges written there) and builds a provisional
``Vault`` of those pages: a "names vault", built with the same code as the full one, so every
request answers from it exactly as it would from a vault whose pages had no body. The full
vault replaces it in one step when it is built (``lsp/live.py``).

What a names vault lacks: bodies (so no body words, snippets, links in the body, inline tags,
headings or block ids). Its link resolution is the full vault's for links by path, file name,
title or alias (those depend on names only), not for heading or block anchors.

Must not: read more of a file than its frontmatter needs (its first 16 KB, almost always), or
be used where an answer must be final (diagnostics wait for the full vault).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence

from .fields import PageFields, page_fields
from .model import Page
from .page import LARGE_PAGE_BYTES, parse_page

HEAD_BYTES = 16_384  # read first: a frontmatter is almost always shorter (else the whole file is read)

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_CLOSE = re.compile(rb"\n(?:---|\.\.\.)")  # a line that may close a frontmatter


def frontmatter_text(data: bytes) -> bytes:
    """The part of a file ``parse_page`` reads its frontmatter from: the opening ``---`` line
    to the closing ``---``/``...`` line, both included; ``b""`` when it has none, or none closed
    in ``data`` (a whole file's unclosed frontmatter is none to ``parse_page`` either)."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    if data[start : start + 3] != b"---":
        return b""
    if b"\r" not in data:  # lines end at "\n" only: look at the lines that may close it, no more
        first = data.find(b"\n")
        if first < 0 or data[start:first].decode("utf-8", errors="replace").rstrip() != "---":
            return b""
        for m in _CLOSE.finditer(data, first):
            end = data.find(b"\n", m.end())
            end = len(data) if end < 0 else end
            if data[m.start() + 1 : end].decode("utf-8", errors="replace").rstrip() in ("---", "..."):
                return data[:end]
        return b""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n") if "\r" not in text else _LINE_SPLIT.split(text)
    if lines[0].lstrip("\ufeff").rstrip() != "---":
        return b""
    for i in range(1, len(lines)):  # as ``page._frontmatter`` finds the end
        line = lines[i]
        if line[:3] in ("---", "...") and line.rstrip() in ("---", "..."):
            return "\n".join(lines[: i + 1]).encode("utf-8", errors="surrogatepass")
    return b""


def read_head(path: str, size: int) -> bytes | None:
    """The first ``HEAD_BYTES`` of the file at ``path`` (all of it when its frontmatter runs
    past them); None when it cannot be read (the full pass will say why)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device: never waited on
            return None
        data = os.read(fd, HEAD_BYTES)
        if len(data) < HEAD_BYTES or not data.startswith((b"---", b"\xef\xbb\xbf---")):
            return data
        head = data[: data.rfind(b"\n") + 1]  # whole lines: the last one may go on past the bytes read
        if frontmatter_text(head):
            return head
        rest = [data]
        got = len(data)
        while got <= LARGE_PAGE_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            rest.append(chunk)
            got += len(chunk)
        return b"".join(rest)
    except OSError:
        return None
    finally:
        os.close(fd)


def names_page(path: str, data: bytes | None, size: int, *, label_first: bool = False) -> Page:
    """Page ``path`` as the names pass sees it: ``parse_page`` of its frontmatter alone (so its
    title, aliases, tags, type, dates and typed edges are those the full parse finds there), no
    body. ``data`` is the file's first bytes (``read_head``), ``size`` its size."""
    if data is None or size > LARGE_PAGE_BYTES:
        return parse_page(path, b"", label_first=label_first)  # as the full parse: by its file name
    return parse_page(path, frontmatter_text(data), label_first=label_first)


def read_names(root: str, rels: Sequence[str], stats: Mapping[str, tuple[int, ...]], *,
               label_first: bool = False) -> list[tuple[Page, PageFields]]:
    """The names pages (``names_page``) of ``rels`` and their fields, in order; a file gone or
    unreadable gets a bare page (its file name), as the full pass would give it at worst."""
    out = []
    for rel in rels:
        listed = stats.get(rel)
        size = listed[0] if listed else -1
        page = names_page(rel, read_head(os.path.join(root, rel), size), size, label_first=label_first)
        out.append((page, page_fields(page)))
    return out
