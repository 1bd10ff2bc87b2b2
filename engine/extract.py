"""Extract to a new page: move a selection, or a heading's section, to a page of its own and
leave a link (or an embed) in its place, every link kept resolving.

The new page is named from the heading (a section, or a selection that starts with one), else
from the selection's first line; it goes to the new-page folder "Create page" uses, under a
name no page, title, alias or file holds yet (``Name 2``, ``Name 3``, ... on a collision), so
the link left behind reaches it alone. Links are kept:

- links inside the moved text that resolved through the old page's folder (``./x``, ``../x``,
  Markdown ``[x](../a.md)``) are rewritten for the new folder, in their own style;
- ``[[#Heading]]`` and ``[[#^block]]`` inside the moved text whose heading or block stays
  behind become ``[[Page#Heading]]``; those in the old page (and ``[[Page#Heading]]`` anywhere)
  whose heading or block moves are retargeted to the new page.

Nothing here writes a file: ``extract_page`` returns a ``Change`` (the new page created with
its text, then text edits), every edited span checked against the current text.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from .edits import Change, EditError, TextEdit, md_encode, retarget_link, yaml_scalar
from .locate import Texts, text_at
from .model import Link, Page, Span
from .navigate import find_block, find_heading, title_heading
from .page import parse_page
from .render import link_target
from .text import index_of_utf16, utf16_len
from .vault import Vault

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_BAD_FILE_CHARS = set('\\/:*?"<>|#^[]')
_LEAD_MARKS = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+(?:\[.\]\s+)?|\d{1,9}[.)]\s+)?")
_WIKI = re.compile(r"!?\[\[([^\[\]|#]*)(?:#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")
_MD = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MAX_NAME_CHARS = 80  # a name taken from a first line is cut (at a word) to this length
MAX_TRIES = 1000


@dataclass(frozen=True, slots=True)
class Extraction:
    """A planned extraction: the new page's path and title, what moves (``section`` or
    ``selection``), and the change."""

    path: str
    title: str
    what: str
    change: Change


def _is_markdown(link: Link) -> bool:
    return link.kind == "md" or (link.kind == "embed" and not link.raw.startswith("![["))


def _noext(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def _inside(region: Span, span: Span) -> bool:
    return (region.start_line, region.start_char) <= (span.start_line, span.start_char) and (
        span.end_line, span.end_char) <= (region.end_line, region.end_char)


def _overlaps(region: Span, span: Span) -> bool:
    return (span.start_line, span.start_char) < (region.end_line, region.end_char) and (
        region.start_line,
        region.start_char,
    ) < (span.end_line, span.end_char)


def _line_inside(region: Span, line: int, lines: list[str]) -> bool:
    """Whether the whole of document line ``line`` lies in ``region``."""
    if not 0 <= line < len(lines):
        return False
    return _inside(region, Span(line, 0, line, utf16_len(lines[line])))


def _section_region(page: Page, lines: list[str], line: int) -> tuple[Span, str] | None:
    """The section of the heading on ``line`` (down to the next heading of its level or
    higher, trailing blank lines left out) and the heading's text."""
    heads = page.headings
    for i, h in enumerate(heads):
        if h.span.start_line != line:
            continue
        if not h.text.strip() or h is title_heading(page) and h.level == 1:
            return None  # the page's own title: that is the whole page, not a part of it
        stop = len(lines)
        for later in heads[i + 1:]:
            if later.level <= h.level:
                stop = later.span.start_line
                break
        end = stop - 1
        while end > line and not lines[end].strip():
            end -= 1
        return Span(line, 0, end, utf16_len(lines[end])), h.text
    return None


def _plain(line: str) -> str:
    """A first line as a name: list and quote marks dropped, links as their shown text."""
    m = _ATX.match(line)
    if m:
        text = m.group(1)
    else:
        text = line[_LEAD_MARKS.match(line).end():]
    text = _WIKI.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MD.sub(lambda m: m.group(1), text)
    text = re.sub(r"[*_`~=]+", "", text)
    text = re.sub(r"\s\^[A-Za-z0-9\-]+\s*$", "", text)
    text = " ".join(text.split())
    if len(text) > MAX_NAME_CHARS:
        cut = text[:MAX_NAME_CHARS].rsplit(" ", 1)[0]
        text = cut if len(cut) >= MAX_NAME_CHARS // 2 else text[:MAX_NAME_CHARS]
    return text.strip(" .,:;")


def _file_name(name: str) -> str:
    cleaned = "".join(" " if c in _BAD_FILE_CHARS or not c.isprintable() else c for c in name)
    cleaned = " ".join(cleaned.split()).strip(". ")
    while len((cleaned + ".md").encode("utf-8", errors="surrogatepass")) > 200:
        cleaned = cleaned[:-1].rstrip()
    return cleaned or "Untitled"


def _free_name(vault: Vault, folder: str, name: str, title: str, taken: Callable[[str], bool]) -> tuple[str, str, str]:
    """(path, stem, title) of the new page: the first of ``name``, ``name 2``, ... that no page
    holds as a path, file name, title or alias, and no file on disk (``taken``)."""
    folder = folder.strip("/")
    for n in range(1, MAX_TRIES + 1):
        stem = name if n == 1 else f"{name} {n}"
        shown = title if n == 1 else f"{title} {n}"
        path = (folder + "/" if folder else "") + stem + ".md"
        keys = {stem.casefold(), shown.casefold()}
        busy = _noext(path).casefold() in vault.by_path or taken(path) or any(
            index.get(key) for key in keys for index in (vault.by_stem, vault.by_title, vault.by_alias)
        )
        if not busy:
            return path, stem, shown
    raise EditError(f"Every name from “{name}” to “{name} {MAX_TRIES}” is taken; nothing was changed.")


def _one_line(lines: list[str], span: Span) -> str | None:
    """The text of a one-line span (None when it is not one line of ``lines``)."""
    if span.start_line != span.end_line or not 0 <= span.start_line < len(lines):
        return None
    line = lines[span.start_line]
    return line[index_of_utf16(line, span.start_char) : index_of_utf16(line, span.end_char)]


def _region_text(lines: list[str], region: Span, rewrites: list[tuple[Span, str]]) -> str:
    """The text of ``region`` with ``rewrites`` (one-line spans inside it) applied."""
    out: list[str] = []
    for line in range(region.start_line, region.end_line + 1):
        text = lines[line]
        edits = sorted((s for s in rewrites if s[0].start_line == line), key=lambda s: s[0].start_char, reverse=True)
        end = index_of_utf16(text, region.end_char) if line == region.end_line else len(text)
        start = index_of_utf16(text, region.start_char) if line == region.start_line else 0
        for span, new in edits:
            a, b = index_of_utf16(text, span.start_char), index_of_utf16(text, span.end_char)
            text = text[:a] + new + text[b:]
            if b <= end:
                end += len(new) - (b - a)
        out.append(text[start:end])
    return "\n".join(out)


def extract_subject(vault: Vault, path: str, span: Span, text: str) -> tuple[Span, str, str] | None:
    """What extracting at ``span`` would move: (region, name, ``section`` or ``selection``),
    or None (an empty selection off a heading, the frontmatter, only blank text)."""
    page = vault.get(path)
    if page is None:
        return None
    lines = _LINE_SPLIT.split(text.removeprefix("\ufeff"))
    if span.start_line >= len(lines):
        return None
    if (span.start_line, span.start_char) == (span.end_line, span.end_char):
        found = _section_region(page, lines, span.start_line)
        return None if found is None else (found[0], found[1], "section")
    if span.start_line < page.body_line:
        return None
    end_line, end_char = min(span.end_line, len(lines) - 1), span.end_char
    if span.end_line >= len(lines):
        end_char = utf16_len(lines[end_line])
    if end_char == 0 and end_line > span.start_line:  # selected whole lines: the last newline stays
        end_line -= 1
        end_char = utf16_len(lines[end_line])
    end_char = min(end_char, utf16_len(lines[end_line]))
    region = Span(span.start_line, span.start_char, end_line, end_char)
    moved = _region_text(lines, region, [])
    first = next((line for line in moved.split("\n") if line.strip()), "")
    if not first:
        return None
    return region, _plain(first), "selection"


def extract_page(
    vault: Vault,
    path: str,
    span: Span,
    texts: Texts,
    *,
    folder: str = "",
    embed: bool = False,
    taken: Callable[[str], bool] = lambda rel: False,
) -> Extraction | None:
    """The change that moves what ``span`` selects (or the section of the heading it is on)
    of page ``path`` to a new page in ``folder``, leaving ``[[New]]`` (``![[New]]`` with
    ``embed``) in its place; None when there is nothing to move there.

    ``taken`` says whether a vault-relative path is already a file (one the index does not
    hold); such a name is never used.
    """
    page = vault.get(path)
    text = texts(path)
    if page is None or text is None:
        return None
    text = text.removeprefix("\ufeff")
    subject = extract_subject(vault, path, span, text)
    if subject is None:
        return None
    region, name, what = subject
    lines = _LINE_SPLIT.split(text)
    own_links = (*page.edges, *page.links)
    for link in page.links:  # the index must describe this text, or every span below is wrong
        if _one_line(lines, link.span) != link.raw:
            raise EditError(f"{path} has changed since it was indexed; save or reload it and try again. Nothing was changed.")
        if _overlaps(region, link.span) and not _inside(region, link.span):
            raise EditError(f"The selection cuts the link “{link.raw}”; select all of it or none. Nothing was changed.")
    if not name:
        name = "Untitled"
    new_path, stem, title = _free_name(vault, folder, _file_name(name), name.strip(), taken)
    header = "" if title == stem else f"---\ntitle: {yaml_scalar(title)}\n---\n"
    draft = parse_page(new_path, header, label_first=vault.label_first)
    after = Vault.from_pages([draft], vault.root, label_first=vault.label_first)  # the new page's names alone

    def moved_heading(link: Link) -> bool | None:
        """Whether a link into the old page names a heading or block that moves (None: no anchor
        or no such anchor)."""
        if link.heading:
            heading = find_heading(page, link.heading)
            return None if heading is None else _line_inside(region, heading.span.start_line, lines)
        if link.block:
            line = find_block(page, link.block)
            return None if line is None else _line_inside(region, line, lines)
        return None

    def relative_style(link: Link, source: str, before: str) -> bool:
        return _is_markdown(link) and posixpath.normpath(
            posixpath.join(posixpath.dirname(source), _noext(link.target))
        ).casefold() == _noext(before).casefold()

    def to_new(link: Link, source: str, via: str | None) -> str:
        written = retarget_link(after, source, new_path, link, via, relative_style(link, source, path), path)
        if written is None:
            raise EditError(f"Cannot point “{link.raw}” in {source} at {new_path}; nothing was changed.")
        return written

    def name_of_old(link: Link, source: str) -> str:
        if _is_markdown(link):
            return md_encode(posixpath.relpath(path, posixpath.dirname(source) or "."))
        return link_target(vault, page, "auto")

    inner: list[tuple[Span, str]] = []  # rewrites inside the moved text (spans of the old page)
    edits: list[tuple[TextEdit, str, bool]] = []  # (edit, the text it replaces, compare URL-decoded)
    for link in own_links:
        res = vault.resolve_link(link, path)
        if res.path is None:
            continue
        moves = link.kind in ("wiki", "embed", "md") and _inside(region, link.span)  # typed edges stay in the frontmatter
        anchor_moves = res.path == path and moved_heading(link)
        if moves:
            if not link.target.strip():
                if anchor_moves is False:  # [[#Heading]] whose heading stays behind
                    inner.append((link.target_span, name_of_old(link, new_path)))
                continue
            if anchor_moves:
                inner.append((link.target_span, to_new(link, new_path, res.via)))
                continue
            now = vault.resolve(link.target, new_path, link.kind)
            if now.path != res.path or (res.via == "path" and now.via != "path" and "/" in res.path):
                written = retarget_link(vault, new_path, res.path, link, res.via, relative_style(link, path, res.path), res.path)
                if written is None:
                    raise EditError(f"Cannot rewrite “{link.raw}” so that it still reaches {res.path} from {new_path}; nothing was changed.")
                inner.append((link.target_span, written))
        elif anchor_moves:
            written = link_target(after, draft, "auto") if not link.target.strip() and not _is_markdown(link) else to_new(link, path, res.via)
            edits.append((TextEdit(path, link.target_span, written), link.target, _is_markdown(link)))
    for source, link in vault.backlinks(path):
        if source == path or not moved_heading(link):
            continue
        res = vault.resolve_link(link, source)
        edits.append((TextEdit(source, link.target_span, to_new(link, source, res.via)), link.target, _is_markdown(link)))

    body = _region_text(lines, region, inner)
    content = header + body + ("" if body.endswith("\n") else "\n")
    left = ("![[" if embed else "[[") + stem + "]]"
    out = [TextEdit(new_path, Span(0, 0, 0, 0), content), TextEdit(path, region, left)]
    checked = _checked(vault, texts, {path: text}, edits)
    return Extraction(new_path, title, what, Change(creates=(new_path,), edits=(*out, *checked)))


def _checked(
    vault: Vault, texts: Texts, cache: dict[str, str], edits: list[tuple[TextEdit, str, bool]]
) -> list[TextEdit]:
    """The link edits, each checked against its page's current text, sorted, none overlapping."""
    for edit, old, decoded in edits:
        if edit.path not in cache:
            current = texts(edit.path)
            if current is None:
                raise EditError(f"Cannot read {edit.path}; nothing was changed.")
            cache[edit.path] = current.removeprefix("\ufeff")
        actual = text_at(cache[edit.path], edit.span)
        if actual is None or (unquote(actual) if decoded else actual) != old:
            raise EditError(
                f"{edit.path} has changed since it was indexed (expected “{old}” at line "
                f"{edit.span.start_line + 1}); save or reload it and try again. Nothing was changed."
            )
    out = sorted({e for e, _, _ in edits}, key=lambda e: (e.path, e.span.start_line, e.span.start_char))
    for a, b in zip(out, out[1:]):
        if a.path == b.path and (b.span.start_line, b.span.start_char) < (a.span.end_line, a.span.end_char):
            raise EditError(f"Two edits overlap in {a.path} at line {a.span.start_line + 1}; nothing was changed.")
    return out
