"""parse_page(path, text) -> Page: frontmatter, headings, links, tags, aliases and typed edges.

Parsing never raises on odd Markdown or YAML: what is wrong becomes a ``Problem`` on the page,
and the rest of the page is still indexed. Nothing inside fenced, indented or inline code is a
link or a tag. Positions are 0-based lines and UTF-16 columns of the whole document.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any
from urllib.parse import unquote

import yaml

from .model import Heading, Link, Page, Problem, Span, Tag
from .text import utf16_col

try:  # libyaml's C loader is several times faster; the pure loader is the same language.
    _SafeLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _SafeLoader = yaml.SafeLoader

LARGE_PAGE_BYTES = 5_000_000  # larger pages are indexed by title only
META_NODE_BUDGET = 10_000  # frontmatter values walked at most (guards alias bombs)
EDGE_KEYS = ("sources", "related", "depends_on")

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]*?)\]\]")
_MDLINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_TAG = re.compile(r"(?:^|(?<=[\s(,;]))#([^\W\d_/-][\w/\-]*|[\w/\-]*[^\W\d_/-][\w/\-]*)")
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9\-]+)[ \t]*$")
_WIKI_IN_VALUE = re.compile(r"^\s*!?\[\[(.*)\]\]\s*$")
# YAML errors whose problem mark is where the parser gave up (often the end of the frontmatter),
# while the context mark is the quote or bracket that was never closed.
_UNCLOSED_CONTEXTS = ("while scanning a quoted scalar", "while parsing a flow")


def parse_page(path: str, data: str | bytes, *, label_first: bool = False) -> Page:
    """Parse one page. ``path`` is vault-relative with ``/``; ``data`` is its text or bytes.

    ``label_first`` reads ``[[label|target]]`` (Dendron) instead of ``[[target|label]]``.
    """
    problems: list[Problem] = []
    # Size in UTF-8 bytes whether the text came from disk (bytes) or an editor (str), so the
    # same file gets the same page, and the same large-page cut-off, either way.
    if isinstance(data, bytes) or data.isascii():
        size = len(data)
    else:
        size = len(data.encode("utf-8", "surrogatepass"))
    stem = path.rsplit("/", 1)[-1]
    if stem.lower().endswith(".md"):
        stem = stem[:-3]
    if size > LARGE_PAGE_BYTES:
        problems.append(
            Problem("too-large", f"page is larger than {LARGE_PAGE_BYTES:,} bytes: indexed by title only", 0)
        )
        return _bare_page(path, stem, problems, size)
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            problems.append(
                Problem("invalid-utf8", f"not valid UTF-8 (byte {exc.start}); undecodable bytes shown as U+FFFD", 0)
            )
    else:
        text = data
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone UTF-16 surrogates, as JSON can carry them
                text = text.encode("utf-8", errors="replace").decode("utf-8")
                problems.append(Problem("invalid-utf16", "text has lone UTF-16 surrogates; shown as '?'", 0))
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE_SPLIT.split(text)

    meta, body_start = _frontmatter(lines, problems)
    fm_lines = lines[1 : body_start - 1] if body_start else []
    title = _text_value(meta.get("title")) or stem
    aliases = _string_list(meta.get("aliases", meta.get("alias")), split_spaces=False)
    fm_tags = [t.lstrip("#") for t in _string_list(meta.get("tags", meta.get("tag")), split_spaces=True)]
    page_type = _text_value(meta.get("type")) or None
    edges = _edges(meta, fm_lines, label_first)

    body_lines = lines[body_start:]
    scan = _scan_body(body_lines, body_start, label_first)
    tags = sorted({t.casefold() for t in fm_tags if t} | {t.name.casefold() for t in scan.tags})
    return Page(
        path=path,
        title=title,
        stem=stem,
        aliases=tuple(a for a in dict.fromkeys(aliases) if a),
        tags=tuple(tags),
        type=page_type,
        created=_text_value(meta.get("created")) or None,
        updated=_text_value(meta.get("updated")) or None,
        links=tuple(scan.links),
        edges=tuple(edges),
        headings=tuple(scan.headings),
        blocks=tuple(scan.blocks),
        inline_tags=tuple(scan.tags),
        body="\n".join(body_lines),
        body_line=body_start,
        problems=tuple(problems),
        meta=meta,
        size=size,
    )


def _bare_page(path: str, stem: str, problems: list[Problem], size: int) -> Page:
    return Page(
        path=path, title=stem, stem=stem, aliases=(), tags=(), type=None, created=None, updated=None,
        links=(), edges=(), headings=(), blocks=(), inline_tags=(), body="", body_line=0,
        problems=tuple(problems), meta={}, size=size,
    )


# --- frontmatter -------------------------------------------------------------------------


def _frontmatter(lines: list[str], problems: list[Problem]) -> tuple[dict[str, Any], int]:
    """The frontmatter mapping and the line the body starts on (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return {}, 0
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        problems.append(Problem("frontmatter-unclosed", "frontmatter starts with --- but has no closing --- line", 0))
        return {}, 0
    source = "\n".join(lines[1:close])
    try:
        loaded = yaml.load(source, Loader=_SafeLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        context = getattr(exc, "context", None) or ""
        if context.startswith(_UNCLOSED_CONTEXTS) and getattr(exc, "context_mark", None) is not None:
            mark = exc.context_mark  # an unclosed quote or bracket: point at where it opens
        line = 1 + (mark.line if mark is not None else 0)
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(Problem("frontmatter-yaml", f"malformed YAML frontmatter: {reason}", min(line, close)))
        return {}, close + 1
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        problems.append(Problem("frontmatter-yaml", f"malformed YAML frontmatter: {exc}", 1))
        return {}, close + 1
    if loaded is None:
        return {}, close + 1
    if not isinstance(loaded, dict):
        problems.append(
            Problem("frontmatter-not-mapping", f"frontmatter is a {type(loaded).__name__}, not a mapping of keys", 1)
        )
        return {}, close + 1
    budget = [META_NODE_BUDGET]
    meta = _json_safe(loaded, budget)
    if budget[0] < 0:
        problems.append(Problem("frontmatter-too-large", "frontmatter is too large or too nested; cut short", 1))
    return meta if isinstance(meta, dict) else {}, close + 1


def _json_safe(value: Any, budget: list[int], depth: int = 0) -> Any:
    """Frontmatter as plain JSON data: str keys, dates as ISO text, bounded in size and depth."""
    budget[0] -= 1
    if budget[0] < 0 or depth > 32:
        budget[0] = min(budget[0], -1)
        return None
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if budget[0] < 0:
                break
            out[str(k) if not isinstance(k, str) else k] = _json_safe(v, budget, depth + 1)
        return out
    if isinstance(value, (list, tuple, set)):
        out_list = []
        for v in value:
            if budget[0] < 0:
                break
            out_list.append(_json_safe(v, budget, depth + 1))
        return out_list
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _text_value(value: Any) -> str:
    """A scalar frontmatter value as stripped text ('' for missing, lists give their first item)."""
    while isinstance(value, list) and value:
        value = value[0]
    if value is None or isinstance(value, (dict, list)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def _string_list(value: Any, *, split_spaces: bool) -> list[str]:
    """A list-or-string frontmatter value as a flat list of stripped strings."""
    if value is None:
        return []
    if isinstance(value, str):
        parts = re.split(r"[,\s]+" if split_spaces else r",", value)
        return [p.strip() for p in parts if p.strip()]
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if isinstance(item, list):  # `- [[Page]]` unquoted is a nested list in YAML
                out.extend(_string_list(item, split_spaces=split_spaces))
            elif item is not None and not isinstance(item, dict):
                text = _text_value(item)
                if text:
                    out.append(text)
        return out
    if isinstance(value, dict):
        return []
    return [_text_value(value)] if _text_value(value) else []


def _edges(meta: dict[str, Any], fm_lines: list[str], label_first: bool) -> list[Link]:
    """Typed edges from ``sources``/``related``/``depends_on``: wikilinks or plain titles."""
    edges: list[Link] = []
    for key in EDGE_KEYS:
        value = meta.get(key)
        items: list[str] = []
        if isinstance(value, list):
            for item in value:
                if isinstance(item, list):  # unquoted [[X]]: YAML reads a nested flow list
                    flat = _string_list(item, split_spaces=False)
                    if len(flat) == 1:
                        items.append(flat[0])
                elif isinstance(item, str):
                    items.append(item)
                elif item is not None and not isinstance(item, dict):
                    items.append(str(item))
        elif isinstance(value, str):
            items.append(value)
        for raw in items:
            m = _WIKI_IN_VALUE.match(raw)
            inner = m.group(1) if m else raw.strip()
            if not inner:
                continue
            target, heading, block, label = _split_inner(inner, label_first)
            if not target:
                continue
            span = _locate(fm_lines, target, key)
            edges.append(Link(key, target, heading, block, label, span, span, raw))
    return edges


def _locate(fm_lines: list[str], needle: str, key: str) -> Span:
    """Where an edge's target is written in the frontmatter (document lines start at 1)."""
    in_key = False
    for i, line in enumerate(fm_lines):
        if re.match(rf"^{re.escape(key)}\s*:", line):
            in_key = True
        elif in_key and line and not line[0].isspace() and not line.startswith("-"):
            in_key = False
        if in_key:
            col = line.find(needle)
            if col >= 0:
                start = utf16_col(line, col)
                return Span(i + 1, start, i + 1, start + utf16_col(needle, len(needle)))
    return Span(1, 0, 1, 0)


# --- body --------------------------------------------------------------------------------


class _Scan:
    __slots__ = ("links", "headings", "tags", "blocks")

    def __init__(self) -> None:
        self.links: list[Link] = []
        self.headings: list[Heading] = []
        self.tags: list[Tag] = []
        self.blocks: list[tuple[str, int]] = []


def _scan_body(lines: list[str], first: int, label_first: bool) -> _Scan:
    """One pass over the body: code regions masked, then headings, links, tags, block ids."""
    scan = _Scan()
    fence: str | None = None
    prev_blank = True
    in_list = False
    in_indented_code = False
    prev_paragraph: tuple[int, str] | None = None  # (line, text) a setext underline may promote
    for offset, line in enumerate(lines):
        lineno = first + offset
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence[0] * len(fence)) and not stripped.lstrip(fence[0]).strip():
                fence = None
            continue
        if "`" in line or "~" in line:
            fm = _FENCE.match(line)
            if fm:
                fence = fm.group(1)
                if not line[:1].isspace():
                    in_list = False
                prev_blank, prev_paragraph = False, None
                continue
        if not stripped:
            prev_blank, prev_paragraph = True, None
            continue
        indented = line.startswith(("    ", "\t"))
        if indented and not in_list and (prev_blank or in_indented_code):
            in_indented_code = True
            prev_blank = False
            continue
        in_indented_code = False
        is_item = _LIST_ITEM.match(line) is not None
        if is_item:
            in_list = True
        elif not indented and prev_blank:
            in_list = False
        prev_blank = False

        # Masking keeps code-point indexes but not UTF-16 widths (an emoji in code becomes one
        # space), so columns are always counted on the line as written, ``source``.
        source = line
        if "`" in line:
            line = _mask_inline_code(line)

        heading_level = 0
        if stripped.startswith("#"):
            m = _ATX.match(source)  # heading text keeps its inline code
            if m:
                heading_level = len(m.group(1))
                text = _ATX_CLOSE.sub("", m.group(2) or "").strip()
                span = Span(lineno, 0, lineno, utf16_col(source, len(source)))
                scan.headings.append(Heading(heading_level, text, span))
        elif prev_paragraph is not None and (stripped[0] in "=-") and _SETEXT.match(line):
            pline, ptext = prev_paragraph
            level = 1 if stripped[0] == "=" else 2
            scan.headings.append(Heading(level, ptext.strip(), Span(pline, 0, pline, utf16_col(ptext, len(ptext)))))
            prev_paragraph = None
            continue
        prev_paragraph = None if (heading_level or is_item or in_list) else (lineno, source)

        if "[" in line:
            _links_in_line(line, lineno, label_first, scan.links, source)
        if "#" in line:
            # A Markdown link's destination is a URL: its `#fragment` is not a tag.
            dests = [d.span(3) for d in _MDLINK.finditer(line)] if "](" in line else []
            for m in _TAG.finditer(line):
                name = m.group(1).rstrip("/")
                if any(a <= m.start() < b for a, b in dests):
                    continue
                if name and not (heading_level and m.start() == 0):
                    scan.tags.append(
                        Tag(name, Span(lineno, utf16_col(source, m.start()), lineno, utf16_col(source, m.end())))
                    )
        if "^" in line:
            bm = _BLOCK_ID.search(line)
            if bm:
                scan.blocks.append((bm.group(1), lineno))
    return scan


def _mask_inline_code(line: str) -> str:
    """The line with inline code spans (matched backtick runs) blanked, columns kept."""
    out = []
    i, n = 0, len(line)
    last = 0
    while i < n:
        if line[i] != "`":
            i += 1
            continue
        j = i
        while j < n and line[j] == "`":
            j += 1
        run = j - i
        k = j
        close = -1
        while k < n:
            if line[k] == "`":
                m = k
                while m < n and line[m] == "`":
                    m += 1
                if m - k == run:
                    close = k
                    break
                k = m
            else:
                k += 1
        if close < 0:
            i = j
            continue
        out.append(line[last:i])
        out.append(" " * (close + run - i))
        last = i = close + run
    out.append(line[last:])
    return "".join(out)


def _split_inner(inner: str, label_first: bool) -> tuple[str, str | None, str | None, str | None]:
    """Split the inside of ``[[…]]`` into (target, heading, block, label)."""
    label = None
    if "|" in inner:
        left, right = inner.split("|", 1)
        if label_first:
            label, inner = left.strip(), right
        else:
            inner, label = left, right.strip()
    inner = inner.rstrip("\\")  # `[[T\|label]]` inside tables
    if inner.startswith("dendron://"):  # Dendron cross-vault link: dendron://<vault>/<note>
        inner = inner[len("dendron://") :].split("/", 1)[-1]
    heading = block = None
    if "#" in inner:
        inner, anchor = inner.split("#", 1)
        anchor = anchor.strip()
        if anchor.startswith("^"):
            block = anchor[1:].strip() or None
        elif anchor:
            heading = anchor
    return inner.strip(), heading, block, (label or None)


def _links_in_line(line: str, lineno: int, label_first: bool, out: list[Link], source: str) -> None:
    """Links in ``line`` (inline code masked); UTF-16 columns are counted on ``source``."""
    found: list[tuple[int, Link]] = []
    if "[[" in line:
        for m in _WIKILINK.finditer(line):
            inner = m.group(2)
            target, heading, block, label = _split_inner(inner, label_first)
            if not target and not heading and not block:
                continue
            kind = "embed" if m.group(1) else "wiki"
            tstart = m.start(2)
            if label_first and "|" in inner:
                tstart += inner.index("|") + 1
            lead = len(line[tstart:]) - len(line[tstart:].lstrip())
            tstart += lead
            tend = tstart + len(target)
            span = Span(lineno, utf16_col(source, m.start()), lineno, utf16_col(source, m.end()))
            tspan = Span(lineno, utf16_col(source, tstart), lineno, utf16_col(source, tend))
            found.append((m.start(), Link(kind, target, heading, block, label, span, tspan, m.group(0))))
    if "](" in line:
        for m in _MDLINK.finditer(line):
            dest = m.group(3)
            if dest.startswith("<"):
                dest = dest[1:-1]
            if _SCHEME.match(dest) or dest.startswith("#"):
                continue
            anchor = None
            if "#" in dest:
                dest, anchor = dest.split("#", 1)
            target = unquote(dest)
            if not target.lower().endswith(".md"):
                continue
            heading = block = None
            if anchor:
                if anchor.startswith("^"):
                    block = anchor[1:]
                else:
                    heading = unquote(anchor)
            kind = "embed" if m.group(1) else "md"
            span = Span(lineno, utf16_col(source, m.start()), lineno, utf16_col(source, m.end()))
            ds = m.start(3) + (1 if m.group(3).startswith("<") else 0)
            tspan = Span(lineno, utf16_col(source, ds), lineno, utf16_col(source, ds + len(dest)))
            found.append((m.start(), Link(kind, target, heading, block, m.group(2) or None, span, tspan, m.group(0))))
    found.sort(key=lambda item: item[0])
    out.extend(link for _, link in found)
