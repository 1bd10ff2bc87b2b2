"""parse_page(path, text) -> Page: frontmatter, headings, links, tags, aliases and typed edges.

Parsing never raises on odd Markdown or YAML: what is wrong becomes a ``Problem`` on the page,
and the rest of the page is still indexed. Nothing inside fenced, indented or inline code is a
link or a tag. Positions are 0-based lines and UTF-16 columns of the whole document.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from typing import Any
from urllib.parse import unquote

import yaml

from .model import Heading, Link, Page, Problem, Span, Tag, fast_constructor, path_stem
from .text import utf16_col

try:  # libyaml's C loader is several times faster; the pure loader is the same language.
    _SafeLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _SafeLoader = yaml.SafeLoader

LARGE_PAGE_BYTES = 5_000_000  # larger pages are indexed by title only
META_NODE_BUDGET = 10_000  # frontmatter values walked at most (guards alias bombs)
EDGE_KEYS = ("sources", "related", "depends_on")

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_span, _link, _heading, _tag = map(fast_constructor, (Span, Link, Heading, Tag))  # see fast_constructor
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}((?:>[ \t]?)+)")  # block quote (and callout) markers, nested
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
# Patterns start with a literal so the regex engine can skip to candidates; an embed's "!" and
# a tag's required preceding character are checked by hand (see _links_in_line, _tags_in_line).
_WIKILINK = re.compile(r"\[\[([^\[\]\n]*)\]\]")
_MDLINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_TAG = re.compile(r"#([^\W\d_/-][\w/\-]*|[\w/\-]*[^\W\d_/-][\w/\-]*)")  # at line start or after [\s(,;]
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9\-]+)[ \t]*$")
_WIKI_IN_VALUE = re.compile(r"^\s*!?\[\[(.*)\]\]\s*$")
# YAML errors whose problem mark is where the parser gave up (often the end of the frontmatter),
# while the context mark is the quote or bracket that was never closed.
_UNCLOSED_CONTEXTS = ("while scanning a quoted scalar", "while parsing a flow")


def parse_page(path: str, data: str | bytes, *, label_first: bool = False) -> Page:
    """Parse one page. ``path`` is vault-relative with ``/``; ``data`` is its text or bytes.

    ``label_first`` reads ``[[label|target]]`` (Dendron) instead of ``[[target|label]]``.
    """
    # Interned: every index names the page by this string, and marshal then writes and reads
    # it as one object wherever it occurs (the persistent index's pieces, parse workers' parts).
    path = sys.intern(path)
    problems: list[Problem] = []
    # Size in UTF-8 bytes whether the text came from disk (bytes) or an editor (str), so the
    # same file gets the same page, and the same large-page cut-off, either way.
    if isinstance(data, bytes) or data.isascii():
        size = len(data)
    else:
        size = len(data.encode("utf-8", "surrogatepass"))
    stem = path_stem(path)
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
    if "\x00" in text:  # Markdown has no use for NUL: most likely a binary file named .md
        line = len(_LINE_SPLIT.split(text[: text.index("\x00")])) - 1
        problems.append(Problem("nul-bytes", "text has NUL bytes (a binary file?); indexed as text", line))
    lines = text.split("\n") if "\r" not in text else _LINE_SPLIT.split(text)

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
        created=_text_value(meta.get("created")) or _text_value(meta.get("created_at")) or None,  # OpenViking's key
        updated=_text_value(meta.get("updated")) or _text_value(meta.get("updated_at")) or None,
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
    close = None
    for i in range(1, len(lines)):
        line = lines[i]
        if line[:3] in ("---", "...") and line.rstrip() in ("---", "..."):
            close = i
            break
    if close is None:
        problems.append(Problem("frontmatter-unclosed", "frontmatter starts with --- but has no closing --- line", 0))
        return {}, 0
    source = "\n".join(lines[1:close])
    try:
        loaded = simple_yaml(source)
        if loaded is _NOT_SIMPLE:
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
    except RecursionError:
        problems.append(Problem("frontmatter-yaml", "malformed YAML frontmatter: nested too deeply", 1))
        return {}, close + 1
    except (ValueError, TypeError, OverflowError) as exc:
        problems.append(Problem("frontmatter-yaml", f"malformed YAML frontmatter: {exc}", 1))
        return {}, close + 1
    if loaded is None:
        return {}, close + 1
    if not isinstance(loaded, dict):
        problems.append(
            Problem("frontmatter-not-mapping", f"frontmatter is {_KINDS.get(type(loaded), 'a single value')}, "
                    "not a mapping of keys (key: value lines)", 1)
        )
        return {}, close + 1
    budget = [META_NODE_BUDGET]
    meta = _json_safe(loaded, budget)
    if budget[0] < 0:
        problems.append(Problem("frontmatter-too-large", "frontmatter is too large or too nested; cut short", 1))
    return meta if isinstance(meta, dict) else {}, close + 1


_KINDS = {list: "a list", str: "a line of text"}  # what frontmatter that is not a mapping is


# A fast reader for the frontmatter most vaults write: ``key: scalar``, ``key: [a, "b"]`` and
# ``key:`` followed by ``- item`` lines. It is exact or it declines: on anything outside that
# subset it returns _NOT_SIMPLE and libyaml reads the text, so the result is always what
# ``yaml.load(source, CSafeLoader)`` gives (tests/property/test_simple_yaml.py checks this).
# PyYAML still builds the Python objects in Python even with the C parser, which made YAML
# a fifth of the parse time of a generated 10,000-page vault.
_NOT_SIMPLE: Any = object()
_SIMPLE_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?: +(.*))?")
_SIMPLE_ITEM = re.compile(r"( *)-(?: +(.*))?")
_YAML_WORDS = frozenset(  # YAML 1.1 plain scalars that resolve to booleans or null
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split()
)
_SIMPLE_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_SIMPLE_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# Characters YAML does not allow in a stream, or reads as line breaks or a byte-order mark.
_YAML_ODD_CHAR = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def simple_yaml(source: str) -> Any:
    """``source`` read as YAML when it is in the simple subset, else ``_NOT_SIMPLE``."""
    if "\t" in source or _YAML_ODD_CHAR.search(source):
        return _NOT_SIMPLE
    out: dict[str, Any] = {}
    items: list[Any] | None = None  # the block sequence being read, if any
    item_indent = -1
    pending: str | None = None  # a key whose value is empty so far
    for line in source.split("\n"):
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if line[0] != " " and line[0] != "-":
            m = _SIMPLE_KEY.fullmatch(line)
            if m is None:
                return _NOT_SIMPLE
            key, text = m.group(1), m.group(2)
            if key in _YAML_WORDS:
                return _NOT_SIMPLE
            if pending is not None:
                out[pending] = items
            text = text.rstrip(" ") if text else ""
            if text:
                value = _simple_scalar(text, block=True)
                if value is _NOT_SIMPLE:
                    return _NOT_SIMPLE
                out[key] = value
                pending = None
            else:
                out[key] = None  # keeps the key's place; the value is set when the key ends
                pending = key
            items, item_indent = None, -1
            continue
        m = _SIMPLE_ITEM.fullmatch(line)
        if m is None or pending is None:
            return _NOT_SIMPLE
        indent = len(m.group(1))
        if items is None:
            items, item_indent = [], indent
        elif indent != item_indent:
            return _NOT_SIMPLE
        text = (m.group(2) or "").rstrip(" ")
        value = _simple_scalar(text, block=True) if text else None
        if value is _NOT_SIMPLE:
            return _NOT_SIMPLE
        items.append(value)
    if pending is not None:
        out[pending] = items
    return out or None


def _simple_scalar(text: str, *, block: bool) -> Any:
    """One scalar or flow sequence of the simple subset (``text`` has no outer spaces)."""
    first = text[0]
    if first == "[":
        value, end = _simple_flow(text, 0)
        return value if end == len(text) else _NOT_SIMPLE
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            return _NOT_SIMPLE
        return inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner:
            return _NOT_SIMPLE
        return inner
    if first.isdigit():
        if _SIMPLE_INT.fullmatch(text):
            return int(text)
        m = _SIMPLE_DATE.fullmatch(text)
        if m is None:
            return _NOT_SIMPLE
        try:
            return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:  # libyaml fails the same way; let it word the problem
            return _NOT_SIMPLE
    if not (first.isalpha() or (first.isalnum() and not first.isdecimal())) or text in _YAML_WORDS:
        return _NOT_SIMPLE
    if "#" in text or ": " in text or text[-1] == ":":
        return _NOT_SIMPLE
    if not block and any(c in text for c in ",[]{}:\"'"):
        return _NOT_SIMPLE
    return text


def _simple_flow(text: str, i: int) -> tuple[Any, int]:
    """A flow sequence starting at ``text[i] == "["``: (list, index after "]"), else (_NOT_SIMPLE, -1)."""
    out: list[Any] = []
    n = len(text)
    i += 1
    while True:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            return _NOT_SIMPLE, -1
        ch = text[i]
        if ch == "]" and not out:
            return out, i + 1
        if ch == "[":
            value, i = _simple_flow(text, i)
            if value is _NOT_SIMPLE:
                return _NOT_SIMPLE, -1
        elif ch in "\"'":
            close = text.find(ch, i + 1)
            if close < 0:
                return _NOT_SIMPLE, -1
            value = _simple_scalar(text[i : close + 1], block=False)
            if value is _NOT_SIMPLE:
                return _NOT_SIMPLE, -1
            i = close + 1
        else:
            j = i
            while j < n and text[j] not in ",]":
                j += 1
            value = _simple_scalar(text[i:j].rstrip(" "), block=False) if text[i:j].strip(" ") else _NOT_SIMPLE
            if value is _NOT_SIMPLE:
                return _NOT_SIMPLE, -1
            i = j
        out.append(value)
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            return _NOT_SIMPLE, -1
        if text[i] == "]":
            return out, i + 1
        if text[i] != ",":
            return _NOT_SIMPLE, -1
        i += 1
        while i < n and text[i] == " ":
            i += 1
        if i >= n or text[i] == "]":  # a trailing comma: leave it to libyaml
            return _NOT_SIMPLE, -1


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
            out[_clean(k) if isinstance(k, str) else str(k)] = _json_safe(v, budget, depth + 1)
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
    if isinstance(value, str):
        return _clean(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _clean(text: str) -> str:
    """``text`` with lone surrogates (a YAML ``"\\ud800"`` escape, which the pure-Python loader
    accepts) as ``?``, so nothing that cannot be written as UTF-8 reaches the index."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


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
            edges.append(_link(key, target, heading, block, label, span, span, raw))
    return edges


def _locate(fm_lines: list[str], needle: str, key: str) -> Span:
    """Where an edge's target is written in the frontmatter (document lines start at 1)."""
    in_key = False
    for i, line in enumerate(fm_lines):
        if line.startswith(key) and line[len(key) :].lstrip().startswith(":"):  # ^key\s*:
            in_key = True
        elif in_key and line and not line[0].isspace() and not line.startswith("-"):
            in_key = False
        if in_key:
            col = line.find(needle)
            if col >= 0:
                start = utf16_col(line, col)
                return _span(i + 1, start, i + 1, start + utf16_col(needle, len(needle)))
    return _span(1, 0, 1, 0)


# --- body --------------------------------------------------------------------------------


class _Scan:
    __slots__ = ("links", "headings", "tags", "blocks")

    def __init__(self) -> None:
        self.links: list[Link] = []
        self.headings: list[Heading] = []
        self.tags: list[Tag] = []
        self.blocks: list[tuple[str, int]] = []


def _scan_body(lines: list[str], first: int, label_first: bool) -> _Scan:
    """One pass over the body: code regions masked, then headings, links, tags, block ids.

    Most lines are prose: each check below starts with a substring test that rules the
    expensive regular expression out for them (the regexes decide, the tests only skip).
    """
    scan = _Scan()
    headings, tags, links, blocks = scan.headings, scan.tags, scan.links, scan.blocks
    fence: str | None = None
    fence_depth = 0  # how many block quotes (callouts) hold the open fence
    prev_blank = True
    in_list = False
    in_indented_code = False
    prev_paragraph: tuple[int, str] | None = None  # (line, text) a setext underline may promote
    lineno = first - 1
    for line in lines:
        lineno += 1
        if fence is not None:
            inner = line
            if fence_depth:
                q = _QUOTE.match(line)
                if q is None or q.group(1).count(">") < fence_depth:
                    fence = None  # the quote (callout) holding the fence ended, and the fence with it
                else:
                    inner = line[q.end():]
            if fence is not None:
                stripped = inner.strip()
                if stripped.startswith(fence) and not stripped.lstrip(fence[0]).strip():
                    fence = None
                continue
        if not line:
            prev_blank, prev_paragraph = True, None
            continue
        ticks = "`" in line
        if ticks or "~" in line:
            fm = _FENCE.match(line)
            if fm:
                fence, fence_depth = fm.group(1), 0
                if not line[:1].isspace():
                    in_list = False
                prev_blank, prev_paragraph = False, None
                continue
            q = _QUOTE.match(line) if ">" in line else None
            fm = _FENCE.match(line[q.end():]) if q else None
            if fm:  # a fence inside a block quote or callout (``> ```css``): code, as outside
                fence, fence_depth = fm.group(1), q.group(1).count(">")
                prev_blank, prev_paragraph = False, None
                continue
        stripped = line.strip()
        if not stripped:
            prev_blank, prev_paragraph = True, None
            continue
        indented = line[0] == "\t" or line.startswith("    ")
        if indented and not in_list and (prev_blank or in_indented_code):
            in_indented_code = True
            prev_blank = False
            continue
        in_indented_code = False
        lead = stripped[0]
        # _LIST_ITEM's first non-space character is a marker or a (Unicode) decimal digit.
        is_item = (lead in "-*+" or lead.isdecimal()) and _LIST_ITEM.match(line) is not None
        if is_item:
            in_list = True
        elif not indented and prev_blank:
            in_list = False
        prev_blank = False

        # Masking keeps code-point indexes but not UTF-16 widths (an emoji in code becomes one
        # space), so columns are always counted on the line as written, ``source``.
        source = line
        if ticks:
            line = _mask_inline_code(line)

        heading_level = 0
        if lead == "#":
            m = _ATX.match(source)  # heading text keeps its inline code
            if m:
                heading_level = len(m.group(1))
                text = _ATX_CLOSE.sub("", m.group(2) or "").strip()
                span = _span(lineno, 0, lineno, utf16_col(source, len(source)))
                headings.append(_heading(heading_level, text, span))
        elif prev_paragraph is not None and (lead == "=" or lead == "-") and _SETEXT.match(line):
            pline, ptext = prev_paragraph
            level = 1 if lead == "=" else 2
            headings.append(_heading(level, ptext.strip(), _span(pline, 0, pline, utf16_col(ptext, len(ptext)))))
            prev_paragraph = None
            continue
        prev_paragraph = None if (heading_level or is_item or in_list) else (lineno, source)

        wide = not source.isascii()  # columns need counting in UTF-16 units
        if "[" in line:
            _links_in_line(line, lineno, label_first, links, source, wide)
        if "#" in line:
            # A Markdown link's destination is a URL: its `#fragment` is not a tag.
            dests = [d.span(2) for d in _MDLINK.finditer(line)] if "](" in line else ()
            for start, end, name in _tags_in_line(line):
                name = name.rstrip("/")
                if dests and any(a <= start < b for a, b in dests):
                    continue
                if name and not (heading_level and start == 0):
                    if wide:
                        start, end = utf16_col(source, start), utf16_col(source, end)
                    tags.append(_tag(name, _span(lineno, start, lineno, end)))
        if "^" in line:
            bm = _BLOCK_ID.search(line)
            if bm:
                blocks.append((bm.group(1), lineno))
    return scan


def _tags_in_line(line: str) -> list[tuple[int, int, str]]:
    """``#tags`` in a line: (start, end, name) where the ``#`` starts the line or follows
    whitespace, ``(``, ``,`` or ``;`` (what ``(?:^|(?<=[\\s(,;]))#`` matched, found faster)."""
    out = []
    pos = 0
    search = _TAG.search
    while True:
        m = search(line, pos)
        if m is None:
            return out
        start = m.start()
        if start == 0 or line[start - 1] in "(,;" or line[start - 1].isspace():
            out.append((start, m.end(), m.group(1)))
            pos = m.end()
        else:
            pos = start + 1


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


def _links_in_line(
    line: str, lineno: int, label_first: bool, out: list[Link], source: str, wide: bool = True
) -> None:
    """Links in ``line`` (inline code masked); UTF-16 columns are counted on ``source``.

    ``wide`` is False when ``source`` is ASCII, where code-point and UTF-16 columns agree.
    """
    found: list[tuple[int, Link]] = []
    # Matches are found on the masked line; their text is taken from ``source`` (same code-point
    # indexes), so inline code inside a link (``[[a `b` c]]``) stays as written.
    masked = line is not source
    if "[[" in line:
        for m in _WIKILINK.finditer(line):
            inner = source[m.start(1) : m.end(1)] if masked else m.group(1)
            if "|" in inner or "#" in inner or "\\" in inner or "dendron://" in inner:
                target, heading, block, label = _split_inner(inner, label_first)
                if not target and not heading and not block:
                    continue
            else:  # the common [[Target]]: what _split_inner gives, without the calls
                target = inner.strip()
                if not target:
                    continue
                heading = block = label = None
            offset = 0
            if label_first and "|" in inner:
                offset = inner.index("|") + 1
            # Spaces before the target: they end inside the link, at the latest at its "]]".
            rest = inner[offset:] if offset else inner
            start, end = m.span()
            tstart = start + 2 + offset + len(rest) - len(rest.lstrip())
            tend = tstart + len(target)
            embed = start > 0 and line[start - 1] == "!"
            if embed:
                start -= 1
            if wide:
                span = _span(lineno, utf16_col(source, start), lineno, utf16_col(source, end))
                tspan = _span(lineno, utf16_col(source, tstart), lineno, utf16_col(source, tend))
            else:
                span = _span(lineno, start, lineno, end)
                tspan = _span(lineno, tstart, lineno, tend)
            link = _link("embed" if embed else "wiki", target, heading, block, label, span, tspan, source[start:end])
            found.append((start, link))
    if "](" in line:
        col = (lambda i: utf16_col(source, i)) if wide else (lambda i: i)
        for m in _MDLINK.finditer(line):
            if masked:
                m = _MDLINK.match(source, m.start(), m.end()) or m  # the same link, as written
            dest = m.group(2)
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
            start, end = m.span()
            embed = start > 0 and line[start - 1] == "!"
            if embed:
                start -= 1
            span = _span(lineno, col(start), lineno, col(end))
            ds = m.start(2) + (1 if m.group(2).startswith("<") else 0)
            tspan = _span(lineno, col(ds), lineno, col(ds + len(dest)))
            link = _link("embed" if embed else "md", target, heading, block, m.group(1) or None, span, tspan, source[start:end])
            found.append((start, link))
        found.sort(key=lambda item: item[0])
    out.extend(link for _, link in found)
