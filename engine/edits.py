"""Vault edits as data: renaming pages and headings, moving files, creating pages, relinking.

Nothing here writes a file. Every function returns a ``Change`` (pages to create, text edits
against the current text of each page, files to rename) for the caller to hand to an editor,
or raises ``EditError`` with a sentence for the user. A rename is planned against a copy of
the affected part of the vault in which the pages already have their new paths and names:
every link that resolved before must resolve to the same (renamed) page after, and a link
that would not is rewritten, keeping its ``|label``, ``#heading``, ``^block``, ``.md`` and
path style. Each text edit is checked against the page's current text before it is returned,
so a stale index can make a rename fail but never makes it write in the wrong place.

Spans are 0-based lines and UTF-16 columns of the text *before* the change; the edits of one
page never overlap. Paths are vault-relative.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import unquote

import yaml

from .locate import Texts, anchor_span, frontmatter_value, heading_text_span, page_line, text_at
from .model import Heading, Link, Page, Span, path_stem
from .navigate import find_block, find_heading, slug, target_at, title_heading, heading_key
from .render import link_target
from .vault import Resolution, Vault, link_keys

_BAD_FILE_CHARS = set('\\/:*?"<>|#^[]')
_BAD_LINK_CHARS = ("|", "#", "^", "[[", "]]", "\n", "\r")
_MD_ENCODE = {c: f"%{ord(c):02X}" for c in ' %()<>#?[]"\t'}


class EditError(ValueError):
    """An edit that cannot be made safely; the message is a sentence for the user."""


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``span`` of page ``path`` (its text before the change) with ``new_text``."""

    path: str
    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class Change:
    """A vault edit, applied in this order: create ``creates`` (new, empty pages), apply
    ``edits`` (grouped by page, never overlapping), then rename each (old, new) of ``renames``."""

    creates: tuple[str, ...] = ()
    edits: tuple[TextEdit, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()

    def paths(self) -> list[str]:
        """The pages whose text this change edits, sorted."""
        return sorted({e.path for e in self.edits})


@dataclass(frozen=True, slots=True)
class RenameSubject:
    """What a rename at a position renames.

    ``kind`` is ``page`` or ``heading``. For a page, ``name`` says which name the user is
    changing: ``stem`` (the file name, when the link names the file) or ``title``. ``span`` is
    the text to highlight; ``placeholder`` the current name.
    """

    kind: str
    path: str
    span: Span
    placeholder: str
    heading: Heading | None = None
    name: str = "title"
    renames_file: bool = False


# --- small helpers --------------------------------------------------------------------------


def _noext(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def _is_markdown(link: Link) -> bool:
    """Whether a link is written as a Markdown link ``[x](dest)`` (or its ``![x](dest)`` embed)."""
    return link.kind == "md" or (link.kind == "embed" and not link.raw.startswith("![["))


def md_encode(path: str) -> str:
    """A Markdown link destination for ``path``: spaces as ``%20`` and the characters that
    would end or break the destination escaped; other characters (accents, CJK) kept."""
    return "".join(_MD_ENCODE.get(c, c) for c in path)


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML value for ``key: <value>``: plain when it reads back the same,
    else double-quoted."""
    try:
        plain = "\n" not in text and text == text.strip() and yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text, ensure_ascii=False)


def _unescaped(value: str, quote: str) -> set[str]:
    """What a one-line YAML scalar written as ``value`` (inside ``quote``, if any) may read as."""
    out = {value.strip()}
    if quote == "'":
        out.add(value.replace("''", "'"))
    elif quote == '"':
        try:
            out.add(json.loads(f'"{value}"'))
        except ValueError:
            pass
    return out


def has_own_title(page: Page) -> bool:
    """Whether the page's title is written in its frontmatter (else it is the file name)."""
    value = page.meta.get("title")
    while isinstance(value, list) and value:
        value = value[0]
    return value is not None and not isinstance(value, (dict, list)) and str(value).strip() != ""


MAX_NAME_CHARS = 1000  # a new title or heading; a file name is also held to NAME_MAX_BYTES
NAME_MAX_BYTES = 255  # the longest file name (with ".md") most file systems accept, in UTF-8 bytes


def _shown(name: str) -> str:
    """A name as quoted in a message: control characters escaped, at most 60 characters."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in name[:60])
    return text + ("…" if len(name) > 60 else "")


def _check_link_text(name: str, what: str) -> None:
    if not name.strip():
        raise EditError(f"The new {what} is empty.")
    if len(name) > MAX_NAME_CHARS:
        raise EditError(f"The new {what} has {len(name):,} characters; at most {MAX_NAME_CHARS:,} are allowed.")
    control = next((c for c in name if unicodedata.category(c) in ("Cc", "Cs") and c not in "\n\r"), None)
    if control is not None:
        raise EditError(f"The new {what} “{_shown(name)}” contains the control character {control!r}; "
                        "no file or link can hold it.")
    for bad in _BAD_LINK_CHARS:
        if bad in name:
            shown = {"\n": "a line break", "\r": "a line break"}.get(bad, f"“{bad}”")
            raise EditError(f"The new {what} “{name}” contains {shown}, which would break wikilinks.")


def _check_file_name(name: str) -> None:
    _check_link_text(name, "name")
    bad = sorted(c for c in set(name) if c in _BAD_FILE_CHARS)
    if bad:
        raise EditError(
            f"“{name}” cannot be a file name (it contains {' '.join(bad)}); "
            "give the page a frontmatter title instead."
        )
    if name.startswith(".") or name.strip() != name:
        raise EditError(f"“{name}” cannot be a page's file name (leading dot or surrounding spaces).")
    size = len((name + ".md").encode("utf-8", errors="surrogatepass"))
    if size > NAME_MAX_BYTES:
        raise EditError(f"“{_shown(name)}” is too long for a file name ({size:,} bytes with .md; at most "
                        f"{NAME_MAX_BYTES}); give the page a frontmatter title instead.")


def _line_of(texts: Texts, path: str, line: int, cache: dict[str, str]) -> str | None:
    if path not in cache:
        text = texts(path)
        if text is None:
            raise EditError(f"Cannot read {path}; nothing was changed.")
        cache[path] = text
    lines = re.split(r"\r\n|\r|\n", cache[path].removeprefix("\ufeff"))
    return lines[line] if 0 <= line < len(lines) else None


# --- the relinker ---------------------------------------------------------------------------


@dataclass
class _Plan:
    vault: Vault
    texts: Texts
    edits: list[tuple[TextEdit, str, bool]]  # (edit, expected old text, compare URL-decoded)
    cache: dict[str, str]
    checks: list[tuple[TextEdit, str, bool]] = field(default_factory=list)  # spans verified, not edited

    def add(self, edit: TextEdit, old: str, decoded: bool = False) -> None:
        """Plan ``edit``, whose span must hold ``old`` (URL-decoded first when ``decoded``)."""
        self.edits.append((edit, old, decoded))

    def expect(self, path: str, span: Span, old: str, decoded: bool = False) -> None:
        """Require ``span`` of ``path`` to hold ``old`` without editing it."""
        self.checks.append((TextEdit(path, span, old), old, decoded))

    def change(self, renames: Iterable[tuple[str, str]] = (), creates: Iterable[str] = ()) -> Change:
        """The checked change: every edit's old text matches the page's current text."""
        by_path: dict[str, list[TextEdit]] = {}
        for edit, old, decoded in [*self.edits, *self.checks]:
            if edit.path not in self.cache:
                text = self.texts(edit.path)
                if text is None:
                    raise EditError(f"Cannot read {edit.path}; nothing was changed.")
                self.cache[edit.path] = text
            actual = text_at(self.cache[edit.path].removeprefix("\ufeff"), edit.span)
            if actual is None or (unquote(actual) if decoded else actual) != old:
                raise EditError(
                    f"{edit.path} has changed since it was indexed (expected “{old}” at line "
                    f"{edit.span.start_line + 1}); save or reload it and try again. Nothing was changed."
                )
        for edit, _old, _decoded in self.edits:
            by_path.setdefault(edit.path, []).append(edit)
        out: list[TextEdit] = []
        for path in sorted(by_path):
            edits = sorted(set(by_path[path]), key=lambda e: (e.span.start_line, e.span.start_char, e.span.end_char))
            for a, b in zip(edits, edits[1:]):
                if (b.span.start_line, b.span.start_char) < (a.span.end_line, a.span.end_char):
                    raise EditError(f"Two edits overlap in {path} at line {a.span.start_line + 1}; nothing was changed.")
            out += [e for e in edits if (text_at(self.cache[path].removeprefix("\ufeff"), e.span) != e.new_text)]
        return Change(tuple(creates), tuple(out), tuple(renames))


def _retarget(
    after: Vault, source: str, want: str, link: Link, via: str | None, relative_style: bool, before_path: str = ""
) -> str | None:
    """New target text for ``link`` (written in page ``source``, after the change) so that it
    resolves to ``want``, in the link's own style where possible; None when nothing works.

    ``relative_style`` says a Markdown link was written relative to its page (else from the
    vault root). A link that resolved by path (``via``) must resolve by path again. Wikilinks
    keep their form: ``./`` and ``../`` paths, full paths (``before_path`` spelled out) or
    partial ones, a ``.md`` suffix, the title when they named the page by its title.
    """
    page = after.pages[want]
    noext = _noext(want)
    source_dir = posixpath.dirname(source)
    original = link.target
    options: list[tuple[str, str]] = []  # (text to write, target as the parser will read it)
    if _is_markdown(link):
        relative = posixpath.relpath(want, source_dir or ".")
        if original.startswith("./") and not relative.startswith("../"):
            relative = "./" + relative
        encode = (lambda t: t.replace("<", "%3C").replace(">", "%3E")) if "](<" in link.raw else md_encode
        forms = [relative, want] if relative_style else [want, relative]
        options = [(encode(f), f) for f in forms]
    else:
        ext = original[-3:] if original.lower().endswith(".md") else ""
        lead = "/" if original.startswith("/") else ""
        forms: list[str] = []
        if via in ("title", "alias"):
            forms.append(page.title)
        stripped = original.strip("/")
        if "/" in stripped:
            if original.startswith(("./", "../")):
                relative = posixpath.relpath(noext, source_dir or ".")
                if original.startswith("./") and not relative.startswith("../"):
                    relative = "./" + relative
                forms.append(relative + ext)
            else:
                n = stripped.count("/") + 1
                partial = lead + "/".join(noext.split("/")[-n:]) + ext
                full = _noext(stripped).casefold() == _noext(before_path).casefold()
                forms += [lead + noext + ext, partial] if full else [partial]
        forms.append(page.stem + ext)
        if via not in ("title", "alias"):
            forms.append(page.title)
        forms.append(lead + noext + ext)
        options = [(f, f) for f in forms if not any(bad in f for bad in _BAD_LINK_CHARS)]
    fallback = None
    for written, read in options:
        res = after.resolve(read, source, link.kind)
        if res.path == want and (via != "path" or res.via == "path" or "/" not in want):
            if not res.ambiguous:
                return written
            fallback = fallback or written
    return fallback


def retarget_link(
    after: Vault, source: str, want: str, link: Link, via: str | None, relative_style: bool, before_path: str = ""
) -> str | None:
    """The relinker's new target text for ``link`` (see ``_retarget``), for the other planners
    (``engine/extract.py``): ``after`` is the vault as it will be, ``source`` the page the link
    will stand in."""
    return _retarget(after, source, want, link, via, relative_style, before_path)


def _anchor_text(link: Link, old_anchor: str, heading: Heading, new_text: str) -> str:
    """The anchor to write for a renamed heading, in the style the link used."""
    markdown = _is_markdown(link)
    prefix = ""
    if "#" in old_anchor and heading_key(old_anchor) != heading_key(heading.text):
        prefix = old_anchor.rsplit("#", 1)[0] + "#"  # nested [[Page#A#B]]: keep A
    if markdown:
        if unquote(old_anchor) == slug(heading.text) and slug(heading.text) != heading.text:
            return prefix + slug(new_text)
        return prefix + md_encode(new_text)
    return prefix + new_text


def _relink(
    vault: Vault,
    afters: Mapping[str, Page],
    headings: Mapping[str, tuple[Heading, str]],
    plan: _Plan,
) -> None:
    """Add to ``plan`` the link edits that keep every link resolving to the same page once the
    pages in ``afters`` (old path -> page as it will be) have their new paths and names, and
    that follow the renamed ``headings`` (page path -> (heading, new text))."""
    moves = {old: page.path for old, page in afters.items()}
    keys: set[str] = set()
    for old, page in afters.items():
        keys |= vault.page_keys(vault.pages[old]) | vault.page_keys(page)
    for path in headings:
        keys |= vault.page_keys(vault.pages[path])
    sources: set[str] = set(afters) | set(headings)
    for key in keys:
        sources.update(vault.linkers.get(key, ()))
    moved = {old for old, new in moves.items() if old != new}

    candidates: list[tuple[str, Link]] = []
    for source in sorted(sources):
        page = vault.pages.get(source)
        if page is None:
            continue
        for link in (*page.edges, *page.links):
            names = set(link_keys(link.target))
            if source in moved or source in headings or not names.isdisjoint(keys):
                candidates.append((source, link))

    wanted: set[str] = set(sources) | set(afters)
    lookups = set(keys)
    for _, link in candidates:
        lookups.update(link_keys(link.target))
    for page in afters.values():
        lookups.add(_noext(page.path).casefold())
        lookups.add(page.stem.casefold())
    for key in lookups:
        for index in (vault.by_stem, vault.by_title, vault.by_alias):
            wanted.update(index.get(key, ()))
    after = Vault.from_pages(
        (afters.get(p) or vault.pages[p] for p in sorted(wanted) if p in vault.pages),
        vault.root,
        label_first=vault.label_first,
    )

    for source, link in candidates:
        before: Resolution = vault.resolve_link(link, source)
        if before.path is None:
            continue  # a link that leads nowhere is left as written
        want = moves.get(before.path, before.path)
        new_source = moves.get(source, source)
        now = after.resolve(link.target, new_source, link.kind)
        # a link written as a path keeps resolving as a path (not by a name that happens to match)
        if now.path != want or (before.via == "path" and now.via != "path" and "/" in want):
            markdown = _is_markdown(link)
            relative_style = markdown and posixpath.normpath(
                posixpath.join(posixpath.dirname(source), _noext(link.target))
            ).casefold() == _noext(before.path).casefold()
            written = _retarget(after, new_source, want, link, before.via, relative_style, before.path)
            if written is None:
                raise EditError(
                    f"Cannot rewrite the link “{link.raw}” in {source} so that it still reaches "
                    f"{want}; nothing was changed."
                )
            plan.add(TextEdit(source, link.target_span, written), link.target, decoded=markdown)
        renamed = headings.get(before.path)
        if renamed is not None and link.heading:
            heading, new_text = renamed
            if find_heading(vault.pages[before.path], link.heading) == heading:
                line = None if link.kind in ("wiki", "embed", "md") else _line_of(
                    plan.texts, source, link.target_span.start_line, plan.cache
                )
                span = anchor_span(link, line)
                if span is None:
                    raise EditError(f"Cannot find the heading part of “{link.raw}” in {source}; nothing was changed.")
                written = text_at(
                    _line_of(plan.texts, source, span.start_line, plan.cache) or "",
                    Span(0, span.start_char, 0, span.end_char),
                )
                if written is None:
                    raise EditError(f"{source} has changed since it was indexed; nothing was changed.")
                markdown = _is_markdown(link)
                # checked against the index: the anchor as parsed, and the target before it
                plan.add(TextEdit(source, span, _anchor_text(link, written, heading, new_text)), link.heading, markdown)
                plan.expect(source, link.target_span, link.target, markdown)


# --- renaming -------------------------------------------------------------------------------


def rename_subject(vault: Vault, path: str, line: int, char: int, text: str | None = None) -> RenameSubject | None:
    """What renaming at the position would rename, or None where nothing can be renamed.

    On a link: the page it leads to (by the name the link uses), or on its ``#heading`` part
    that heading. On the frontmatter title or the title heading: the page. On another heading:
    the heading. A link that resolves to no page, a tag or plain text: nothing.
    """
    target = target_at(vault, path, line, char, text)
    if target is None:
        return None
    if target.kind == "link" and target.link is not None:
        link = target.link
        res = vault.resolve_link(link, path)
        if res.path is None:
            return None
        page = vault.pages[res.path]
        if target.anchor and link.heading:
            heading = find_heading(page, link.heading)
            if heading is None:
                return None
            if heading is title_heading(page) and heading_key(heading.text) == heading_key(page.title):
                return _page_subject(page, link_anchor_span(link, vault, path, text), "title")
            line_text = None if link.kind in ("wiki", "embed", "md") else page_line(vault.pages[path], link.span.start_line, text)
            span = anchor_span(link, line_text) or link.span
            return RenameSubject("heading", res.path, span, heading.text, heading)
        if not link.target.strip():
            return None
        name = "title" if res.via in ("title", "alias") else "stem"
        return _page_subject(page, link.target_span, name)
    page = vault.pages[path]
    if target.kind == "title":
        if target.heading is not None and heading_key(target.heading.text) != heading_key(page.title):
            return RenameSubject("heading", path, target.span, target.heading.text, target.heading)
        return _page_subject(page, target.span, "title")
    if target.kind == "heading" and target.heading is not None:
        return RenameSubject("heading", path, target.span, target.heading.text, target.heading)
    return None


def link_anchor_span(link: Link, vault: Vault, path: str, text: str | None) -> Span:
    """The span of a link's anchor part (its whole span when it has none)."""
    line = None if link.kind in ("wiki", "embed", "md") else page_line(vault.pages[path], link.span.start_line, text)
    return anchor_span(link, line) or link.span


def _page_subject(page: Page, span: Span, name: str) -> RenameSubject:
    own = has_own_title(page)
    same = own and page.title.casefold() == page.stem.casefold()
    if name == "title" and own and not same:
        return RenameSubject("page", page.path, span, page.title, name="title", renames_file=False)
    return RenameSubject("page", page.path, span, page.stem if name == "stem" else page.title, name=name, renames_file=True)


def rename(vault: Vault, subject: RenameSubject, new_name: str, texts: Texts) -> Change:
    """The change that renames ``subject`` to ``new_name`` across the vault."""
    if subject.kind == "heading" and subject.heading is not None:
        return rename_heading(vault, subject.path, subject.heading, new_name, texts)
    return rename_page(vault, subject.path, new_name, texts, name=subject.name)


def rename_page(vault: Vault, path: str, new_name: str, texts: Texts, *, name: str = "title") -> Change:
    """Rename a page: its file (when the name is its file name, or its title comes from the
    file name), its frontmatter title (when it has one that is being renamed or equals the
    file name), its title heading (when it reads as the old title), and every link to it.

    ``name`` is ``stem`` when the user renames the file name, ``title`` for the title.
    """
    page = vault.get(path)
    if page is None:
        raise EditError(f"{path} is not a page of this vault.")
    new_name = new_name.strip()
    if new_name.lower().endswith(".md"):
        new_name = new_name[:-3].rstrip()
    own = has_own_title(page)
    same = own and page.title.casefold() == page.stem.casefold()
    renames_file = name == "stem" or not own or same
    retitles = (name == "title" and own) or same or not own
    if renames_file:
        _check_file_name(new_name)
    else:
        _check_link_text(new_name, "title")
    folder = posixpath.dirname(path)
    new_path = posixpath.join(folder, new_name + ".md") if renames_file else path
    if renames_file and new_path != path:
        existing = vault.by_path.get(_noext(new_path).casefold())
        if existing is not None and existing != path:
            raise EditError(f"A page {existing} already exists; choose another name.")
    new_title = new_name if retitles else page.title
    if new_path == path and new_title == page.title:
        return Change()

    plan = _Plan(vault, texts, [], {})
    text = texts(path)
    if text is None:
        raise EditError(f"Cannot read {path}; nothing was changed.")
    plan.cache[path] = text
    if own and retitles:
        span = frontmatter_value(text, "title")
        if span is None:
            raise EditError(f"Cannot find the title in the frontmatter of {path}; nothing was changed.")
        old = text_at(text.removeprefix("\ufeff"), span) or ""
        line = _line_of(texts, path, span.start_line, plan.cache) or ""
        quote = line[span.start_char - 1] if span.start_char > 0 and len(line) >= span.start_char else ""
        if page.title not in _unescaped(old, quote):
            raise EditError(
                f"The title of {path} is not written as one plain or quoted line; rename it by hand. "
                "Nothing was changed."
            )
        if quote == '"':
            written = json.dumps(new_title, ensure_ascii=False)[1:-1]
        elif quote == "'":
            written = new_title.replace("'", "''")
        else:
            written = yaml_scalar(new_title)
        plan.add(TextEdit(path, span, written), old)
    headings: dict[str, tuple[Heading, str]] = {}
    heading = title_heading(page)
    new_headings = page.headings
    if heading is not None and new_title != page.title and heading_key(heading.text) == heading_key(page.title):
        plan.add(TextEdit(path, heading_text_span(page, heading), new_title), heading.text)
        headings[path] = (heading, new_title)
        new_headings = tuple(Heading(h.level, new_title, h.span) if h is heading else h for h in page.headings)
    new_stem = path_stem(new_path)
    after = replace(page, path=new_path, stem=new_stem, title=new_title, headings=new_headings)
    _relink(vault, {path: after}, headings, plan)
    return plan.change(renames=[(path, new_path)] if new_path != path else [])


def rename_heading(vault: Vault, path: str, heading: Heading, new_text: str, texts: Texts) -> Change:
    """Rename one heading of a page and every link anchored on it (``[[Page#Heading]]``,
    ``[[#Heading]]``, ``Page.md#heading``)."""
    page = vault.get(path)
    if page is None or heading not in page.headings:
        raise EditError(f"That heading is no longer in {path}; nothing was changed.")
    new_text = new_text.strip()
    _check_link_text(new_text, "heading")
    if new_text == heading.text:
        return Change()
    plan = _Plan(vault, texts, [], {})
    plan.add(TextEdit(path, heading_text_span(page, heading), new_text), heading.text)
    _relink(vault, {}, {path: (heading, new_text)}, plan)
    return plan.change()


def move_pages(vault: Vault, moves: Mapping[str, str], texts: Texts) -> Change:
    """The link edits for files that are being moved or renamed (old path -> new path), as
    ``workspace/willRenameFiles`` needs: no file operation, only text, on the old paths.

    A page whose title comes from its file name takes the new name as its title, as the
    index will see it. Moves to paths that are not pages (another extension, a dot-folder)
    are left out: those pages leave the vault.
    """
    afters: dict[str, Page] = {}
    for old, new in sorted(moves.items()):
        page = vault.get(old)
        if page is None or old == new or not new.lower().endswith(".md") or any(
            part.startswith(".") for part in new.split("/")
        ):
            continue
        stem = path_stem(new)
        afters[old] = replace(page, path=new, stem=stem, title=page.title if has_own_title(page) else stem)
    if not afters:
        return Change()
    plan = _Plan(vault, texts, [], {})
    _relink(vault, afters, {}, plan)
    return plan.change()


# --- quick-fix edits ------------------------------------------------------------------------


def relink_to(vault: Vault, source: str, link: Link, path: str) -> TextEdit:
    """An edit of ``link``'s target so that it leads to ``path`` alone (for ambiguous links)."""
    markdown = _is_markdown(link)
    if markdown:
        written = md_encode(posixpath.relpath(path, posixpath.dirname(source) or "."))
    else:
        page = vault.pages[path]
        written = link_target(vault, page, "auto")
        if link.target.lower().endswith(".md"):
            written += ".md"
    return TextEdit(source, link.target_span, written)


def alias_fix(vault: Vault, source: str, link: Link, path: str) -> TextEdit:
    """Rewrite a link that reaches ``path`` only through an alias as ``[[Target|Alias]]``
    (the label kept when the link has one); typed edges just get the target."""
    page = vault.pages[path]
    target = link_target(vault, page, "auto")
    if link.kind not in ("wiki", "embed") or not link.raw.endswith("]]"):
        return TextEdit(source, link.target_span, target)
    anchor = ""
    if link.heading:
        anchor = "#" + link.heading
    elif link.block:
        anchor = "#^" + link.block
    label = link.label or link.target
    bang = "!" if link.raw.startswith("!") else ""
    inner = f"{label}|{target}{anchor}" if vault.label_first else f"{target}{anchor}|{label}"
    return TextEdit(source, link.span, f"{bang}[[{inner}]]")


def closest(names: Iterable[str], wanted: str, limit: int = 3) -> list[str]:
    """Up to ``limit`` names most like ``wanted`` (difflib ratio, casefolded), best first."""
    scored = []
    for name in dict.fromkeys(names):
        ratio = difflib.SequenceMatcher(None, wanted.casefold(), name.casefold()).ratio()
        scored.append((-ratio, name.casefold(), name))
    scored.sort()
    return [name for _, _, name in scored[:limit]]


def anchor_fixes(vault: Vault, source: str, link: Link, path: str, text: str | None = None) -> list[tuple[str, TextEdit]]:
    """For a link to a missing heading or block of ``path``: (the name, an edit of the anchor)
    for the closest existing headings or block ids."""
    page = vault.pages[path]
    line = None if link.kind in ("wiki", "embed", "md") else page_line(vault.pages[source], link.span.start_line, text)
    span = anchor_span(link, line)
    if span is None:
        return []
    markdown = _is_markdown(link)
    out = []
    if link.heading and find_heading(page, link.heading) is None:
        for name in closest([h.text for h in page.headings if h.text], link.heading):
            written = md_encode(name) if markdown else name
            if markdown or not any(bad in name for bad in _BAD_LINK_CHARS):
                out.append((name, TextEdit(source, span, written)))
    elif link.block and find_block(page, link.block) is None:
        for name in closest([b for b, _ in page.blocks], link.block):
            out.append(("^" + name, TextEdit(source, span, "^" + name)))
    return out


def _safe_name(name: str) -> str:
    cleaned = "".join(" " if c in _BAD_FILE_CHARS else c for c in name)
    cleaned = " ".join(cleaned.split()).strip(". ")
    return cleaned or "Untitled"


def new_page_path(vault: Vault, source: str, link: Link, folder: str) -> tuple[str, str] | None:
    """Where "create page" puts the page a link names, and its title: a path-like target
    (``a/b``, ``./b``, a Markdown link) where it points, else ``folder``/name. None when the
    path would leave the vault or is taken."""
    target = link.target.strip().replace("\\", "/")
    if not target:
        return None
    markdown = _is_markdown(link)
    title = _noext(target).rsplit("/", 1)[-1].strip()
    if markdown or target.startswith(("./", "../")):
        path = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
    elif "/" in target.strip("/"):
        path = posixpath.normpath(target.strip("/"))
    else:
        path = posixpath.join(folder.strip("/"), target) if folder.strip("/") else target
    head, _, name = _noext(path).rpartition("/")
    name = _safe_name(name)
    path = (head + "/" if head else "") + name + ".md"
    if path.startswith(("../", "/")) or path == ".." or any(p.startswith(".") for p in path.split("/")):
        return None
    if _noext(path).casefold() in vault.by_path:
        return None
    return path, title or name


def create_page(vault: Vault, source: str, link: Link, folder: str) -> tuple[str, Change] | None:
    """The change that creates the page an unresolved link names, with a frontmatter title
    (so the link resolves even when the file name had to drop characters), or None."""
    found = new_page_path(vault, source, link, folder)
    if found is None:
        return None
    path, title = found
    content = f"---\ntitle: {yaml_scalar(title)}\n---\n"
    return path, Change(creates=(path,), edits=(TextEdit(path, Span(0, 0, 0, 0), content),))


# --- linking mentions -----------------------------------------------------------------------


def mention_link(vault: Vault, page: Page, written: str, style: str = "auto") -> str:
    """The wikilink that turns the text ``written`` into a link to ``page``: ``[[written]]``
    when the target in the vault's link style is that text (any case), else
    ``[[Target|written]]`` (``[[written|Target]]`` in a label-first vault), so the text reads
    the same."""
    target = link_target(vault, page, style)
    if written.casefold() == target.casefold() and not any(bad in written for bad in _BAD_LINK_CHARS):
        res = vault.resolve(written)
        if res.path == page.path and not res.ambiguous:
            return f"[[{written}]]"
    label = written.replace("|", " ").replace("]]", " ")
    return f"[[{label}|{target}]]" if vault.label_first else f"[[{target}|{label}]]"


def link_mentions(vault: Vault, mentions: Iterable, target: str, texts: Texts, style: str = "auto") -> Change:
    """The change that links each of ``mentions`` (``engine.mentions.Mention``) to page
    ``target``: every span must still hold the text as found, and once applied every page
    edited must keep every link it had, each resolving where it did, plus one new link per
    mention resolving to ``target`` (checked by parsing the edited text); else EditError."""
    from collections import Counter

    from .page import parse_page

    page = vault.pages.get(target)
    if page is None:
        raise EditError(f"{target} is not a page of this vault.")
    plan = _Plan(vault, texts, [], {})
    added: Counter[str] = Counter()
    for m in mentions:
        plan.add(TextEdit(m.path, m.span, mention_link(vault, page, m.text, style)), m.text)
        added[m.path] += 1
    change = plan.change()
    for path in change.paths():
        before = vault.pages[path]
        text = plan.cache[path].removeprefix("\ufeff")
        after = parse_page(path, apply_edits(text, [e for e in change.edits if e.path == path]),
                           label_first=vault.label_first)
        had = Counter(vault.resolve_link(link, path).path for link in (*before.edges, *before.links))
        now = Counter(vault.resolve_link(link, path).path for link in (*after.edges, *after.links))
        had[target] += added[path]
        if now != had:
            raise EditError(f"Linking the mentions in {path} would change where its links lead; nothing was changed.")
    return change


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (spans of the text before them)."""
    lines = re.split(r"(\r\n|\r|\n)", text)
    rows, breaks = lines[0::2], lines[1::2]
    for edit in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_char), reverse=True):
        s = edit.span
        first, last = rows[s.start_line], rows[s.end_line]
        a = _code_index(first, s.start_char)
        b = _code_index(last, s.end_char)
        merged = first[:a] + edit.new_text + last[b:]
        rows[s.start_line : s.end_line + 1] = merged.split("\n")
        del breaks[s.start_line : s.end_line]
        breaks[s.start_line : s.start_line] = ["\n"] * merged.count("\n")
    out = []
    for i, row in enumerate(rows):
        out.append(row)
        if i < len(breaks):
            out.append(breaks[i])
    return "".join(out)


def _code_index(line: str, col: int) -> int:
    from .text import index_of_utf16

    return index_of_utf16(line, col)
