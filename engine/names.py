"""The names pass of a cold start: every page's names (title, aliases, file name) before any body.

A cold start parses every page in full (``engine.scan.load_vault``: seconds at 10,000 pages).
Most of what an editor asks first needs only the pages' names: workspace symbols, ``[[``
completion, where a link goes. So a cold load first reads each page's names only (its title
and aliases from the frontmatter, ``NAME_KEYS``; its file name) and builds a provisional
``Vault`` of those pages: a "names vault", built with the same code as the full one, so every
request answers from it exactly as it would from a vault whose pages had no body. The full
vault replaces it in one step when it is built (``lsp/live.py``).

What a names vault lacks: bodies (so no body words, snippets, links in the body, inline tags,
headings or block ids) and the frontmatter's other keys (tags, type, dates, typed edges). Its
link resolution is the full vault's for links by path, file name, title or alias (those
depend on names only), not for heading or block anchors.

Must not: read more of a file than its frontmatter needs (its first 16 KB, almost always), or
be used where an answer must be final (diagnostics wait for the full vault).
"""

from __future__ import annotations

import os
import re
import stat

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


def names_text(frontmatter: bytes) -> bytes:
    """A frontmatter (``frontmatter_text``) cut to its top-level keys that hold names
    (``NAME_KEYS``), each key with the lines that continue its value, in order.

    YAML reads each key of a block mapping on its own, so ``parse_page`` finds the same values
    for these keys in the cut text (a few of its lines, and no typed edges to locate), unless the rest is YAML it cannot read at all: then the full parse finds no
    frontmatter, while the names pass still finds these keys (until the full vault is in).
    """
    lines = frontmatter.split(b"\n")
    kept = [lines[0]]
    keep = False
    for line in lines[1:-1]:
        head = line[:1]
        if head and head not in b" \t-#":  # a top-level key (or text YAML rejects either way)
            keep = line.split(b":", 1)[0].strip() in NAME_KEYS
        if keep:
            kept.append(line)
    kept.append(lines[-1])
    return b"\n".join(kept)


NAME_KEYS = frozenset((b"title", b"aliases", b"alias"))


def names_page(path: str, data: bytes | None, size: int, *, label_first: bool = False) -> Page:
    """Page ``path`` as the names pass sees it: ``parse_page`` of its frontmatter's name keys
    alone (``names_text``: so its title and aliases are those the full parse finds), no body.
    ``data`` is the file's first bytes (``read_head``), ``size`` its size."""
    if data is None or size > LARGE_PAGE_BYTES:
        return parse_page(path, b"", label_first=label_first)  # as the full parse: by its file name
    found = frontmatter_text(data)
    return parse_page(path, names_text(found) if found else b"", label_first=label_first)
