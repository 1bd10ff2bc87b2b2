"""Writing pages, safely: create, append to and edit a page, and the report of every link written.

The write operations of ``engine/ops.py`` (``create_page``, ``append_to_page``, ``edit_page``,
``add``) call these functions. Every write:

- is confined to the vault: a path with ``..``, an absolute path, a dot-folder, or a folder or
  file that is a symbolic link leading anywhere is refused (``OutsideVault``), and so is a file
  that is a symbolic link at all (writing through it would change another file);
- is atomic: the text goes to a temporary file in the same folder (a dot-file, never a page),
  which is then linked (a new page: never over an existing file) or renamed over the page;
  nothing half-written is left behind;
- refuses to touch a file changed since the caller read it: ``version`` (what ``read`` and
  every write return, ``page_version`` of the file's text) must match the file on disk;
- updates the vault it was given at once (``Vault.upsert``), so the next search sees the page.

The ``links`` report names every link in the written text: ``resolved`` (to which page),
``ambiguous`` (the candidates), ``alias`` (reached only through an alias, which Obsidian does
not follow), ``unresolved`` (with the best suggestions from the engine's search) or
``attachment``. ``strict_links`` refuses a write whose text has an ambiguous or unresolved link.

Must not: know any protocol.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import re
import stat
import unicodedata
from typing import Any

import yaml

from .model import Link, Page
from .page import parse_page
from .scan import OutsideVault, confined_path, is_page_path, read_bytes
from .vault import Vault

VERSION_PREFIX = "sha256:"
_TEMP_PREFIX = ".vaultlens-write-"  # a dot-file: never listed as a page, never indexed
_BAD_NAME_CHARS = set('\\/:*?"<>|#^[]')
MAX_SUGGESTIONS = 3


class WriteError(ValueError):
    """A write refused as asked; the message says why and what to do instead."""


def page_version(text: str) -> str:
    """The version of a page's text: what ``read`` returns and a write must be given back."""
    return VERSION_PREFIX + hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


# --- paths ----------------------------------------------------------------------------------------


def clean_rel(path: str) -> str:
    """``path`` as a vault-relative POSIX page path, or WriteError/OutsideVault when it could not
    be one: absolute, with ``..``, in a dot-folder, or not a ``.md`` file."""
    text = path.strip().replace("\\", "/")
    if not text:
        raise WriteError("the page path is empty")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text) or os.path.isabs(text):
        raise OutsideVault(errno.EACCES, "an absolute path leads outside the vault", path)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise OutsideVault(errno.EACCES, "a path with '..' leads outside the vault", path)
    rel = "/".join(parts)
    if not rel.lower().endswith(".md"):
        rel += ".md"
    if not is_page_path(rel):
        raise WriteError(f"{rel} is not a page path (a .md file outside dot-folders)")
    return rel


def clean_folder(folder: str | None) -> str:
    """A vault-relative folder (``""`` for the vault's top), confined like ``clean_rel``."""
    text = (folder or "").strip().replace("\\", "/").strip()
    if not text or text in ("/", "."):
        return ""
    rel = clean_rel(text.rstrip("/") + "/x.md")
    return rel[: -len("/x.md")] if "/" in rel else ""


def confined_target(root: str, rel: str) -> str:
    """The file-system path for writing page ``rel``: OutsideVault when ``rel`` or any folder on
    the way is a symbolic link (inside the vault or not) or leads outside the vault, WriteError
    when the file itself is a symbolic link or not a regular file."""
    rel = clean_rel(rel)
    real_root = os.path.realpath(root)
    probe = root
    for part in rel.split("/")[:-1]:
        probe = os.path.join(probe, part)
        if os.path.islink(probe):
            raise OutsideVault(errno.EACCES, "a folder on the way is a symbolic link: not written through", rel)
        if not os.path.exists(probe):
            break
        if not os.path.isdir(probe):
            raise WriteError(f"{rel}: {os.path.relpath(probe, root)} is a file, not a folder")
    full = confined_path(root, rel)
    if os.path.islink(full):
        raise OutsideVault(errno.EACCES, "the page is a symbolic link: not written through", rel)
    real_parent = os.path.realpath(os.path.dirname(full))
    if real_parent != real_root and not real_parent.startswith(real_root.rstrip(os.sep) + os.sep):
        raise OutsideVault(errno.EACCES, "the path leads outside the vault", rel)
    if os.path.exists(full) and not os.path.isfile(full):
        raise WriteError(f"{rel} is not a regular file")
    return full


def current_text(root: str, rel: str) -> str | None:
    """The page's text on disk (None when there is no such file)."""
    try:
        return read_bytes(root, rel).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


def write_text(root: str, rel: str, text: str, *, create: bool, version: str | None = None) -> str:
    """Write ``text`` to page ``rel`` atomically; returns the new version.

    ``create``: the page must not exist (never overwritten, even by a file made meanwhile).
    Else it must exist, and when ``version`` is given, match it right before the rename.

    Where the platform has ``dir_fd`` calls, every folder on the way is opened relative to the
    one before with ``O_NOFOLLOW`` and the file is made and renamed inside the folder opened, so
    a folder swapped for a symbolic link between the checks and the write is still never
    written through.
    """
    confined_target(root, rel)
    parts = rel.split("/")
    data = text.encode("utf-8")
    if not _HAS_DIR_FD:  # pragma: no cover - Windows: the path checks above are what there is
        return _write_by_path(root, rel, data, text, create=create, version=version)
    folder = _open_folder(root, parts[:-1], rel)
    name = parts[-1]
    try:
        mode = 0o644
        if not create:
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                raise WriteError(f"{rel} does not exist (it was moved or deleted): nothing written") from None
            if not stat.S_ISREG(st.st_mode):
                raise OutsideVault(errno.EACCES, "the page is not a regular file: not written through", rel)
            mode = stat.S_IMODE(st.st_mode)
        temp = _temp_name(folder, mode)
        try:
            fd, temp_name = temp
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            if create:
                try:
                    os.link(temp_name, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
                except FileExistsError:
                    raise WriteError(f"{rel} already exists: nothing written") from None
                except OSError:  # a file system without hard links
                    if _exists_in(folder, name):
                        raise WriteError(f"{rel} already exists: nothing written") from None
                    os.replace(temp_name, name, src_dir_fd=folder, dst_dir_fd=folder)
            else:
                if version is not None:
                    _check_version_in(folder, name, rel, version)
                os.replace(temp_name, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            if _exists_in(folder, temp[1]):
                os.unlink(temp[1], dir_fd=folder)
    finally:
        os.close(folder)
    return page_version(text)


# os.replace takes src_dir_fd/dst_dir_fd on POSIX though os.supports_dir_fd lists only ``dir_fd`` users
_HAS_DIR_FD = os.name == "posix" and all(f in os.supports_dir_fd for f in (os.open, os.stat, os.mkdir, os.unlink)) \
    and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")


def _open_folder(root: str, parts: list[str], rel: str) -> int:
    """A descriptor of the folder ``parts`` under ``root``, each step opened with O_NOFOLLOW
    (made when missing): OutsideVault when one is a symbolic link or not a folder."""
    flags = os.O_RDONLY | os.O_DIRECTORY
    fd = os.open(root, flags)
    try:
        for part in parts:
            try:
                step = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o755, dir_fd=fd)
                step = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise OutsideVault(errno.EACCES, "a folder on the way is a symbolic link or a file: not written through", rel) from None
                raise
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def _exists_in(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _temp_name(folder: int, mode: int) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    for _ in range(100):
        name = f"{_TEMP_PREFIX}{os.urandom(6).hex()}.tmp"
        try:
            return os.open(name, flags, mode, dir_fd=folder), name
        except FileExistsError:
            continue
    raise WriteError("cannot make a temporary file for the page")


def _check_version_in(folder: int, name: str, rel: str, version: str) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=folder)
    except FileNotFoundError:
        raise WriteError(f"{rel} does not exist (it was moved or deleted): nothing written") from None
    with os.fdopen(fd, "rb") as f:
        now = page_version(f.read().decode("utf-8", errors="replace"))
    if now != version.strip():
        raise WriteError(
            f"{rel} changed since it was read (version {version.strip()}, now {now}): nothing written; "
            "read it again and redo the change on what it holds now"
        )


def _write_by_path(root: str, rel: str, data: bytes, text: str, *, create: bool,
                   version: str | None) -> str:  # pragma: no cover - platforms without dir_fd
    full = confined_target(root, rel)
    folder = os.path.dirname(full)
    mode = 0o644
    if not create:
        try:
            mode = stat.S_IMODE(os.stat(full).st_mode)
        except FileNotFoundError:
            raise WriteError(f"{rel} does not exist (it was moved or deleted): nothing written") from None
    os.makedirs(folder, exist_ok=True)
    confined_target(root, rel)
    fd, temp = _temp_file(folder, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if create:
            if os.path.lexists(full):
                raise WriteError(f"{rel} already exists: nothing written")
            os.replace(temp, full)
        else:
            if version is not None:
                check_version(root, rel, version)
            os.replace(temp, full)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
    return page_version(text)


def _temp_file(folder: str, mode: int) -> tuple[int, str]:  # pragma: no cover - platforms without dir_fd
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = os.path.join(folder, f"{_TEMP_PREFIX}{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, mode), name
        except FileExistsError:
            continue
    raise WriteError(f"cannot make a temporary file in {folder}")


def check_version(root: str, rel: str, version: str) -> str:
    """The page's text on disk, or WriteError when its version is not ``version``."""
    text = current_text(root, rel)
    if text is None:
        raise WriteError(f"{rel} does not exist (it was moved or deleted): nothing written")
    now = page_version(text)
    if now != version.strip():
        raise WriteError(
            f"{rel} changed since it was read (version {version.strip()}, now {now}): nothing written; "
            "read it again and redo the change on what it holds now"
        )
    return text


# --- the links report -----------------------------------------------------------------------------


def link_entry(vault: Vault, page: Page, link: Link) -> dict[str, Any]:
    """How one written link resolves in ``vault`` (with ``page`` as written), for the report."""
    entry: dict[str, Any] = {
        "target": link.target,
        "kind": link.kind,
        "line": link.span.start_line + 1,
        "column": link.span.start_char + 1,
    }
    res = vault.resolve_link(link, page.path)
    if res.path is None and not res.attachment and link.target.strip().casefold() in _names(page):
        entry.update(status="resolved", file=page.path, via="self")
        return entry
    if res.attachment:
        entry.update(status="attachment", file=None)
    elif res.path is None:
        entry.update(status="unresolved", file=None, suggestions=suggestions(vault, link.target, page.path))
    elif res.ambiguous:
        entry.update(status="ambiguous", file=res.path, candidates=list(res.candidates))
    elif res.via == "alias":
        target = vault.pages[res.path]
        entry.update(status="alias", file=res.path, title=target.title,
                     fix=f"[[{target.title}|{link.target}]]")
    else:
        entry.update(status="resolved", file=res.path, via=res.via)
    return entry


def _names(page: Page) -> set[str]:
    return {page.stem.casefold(), page.title.casefold(), *(a.casefold() for a in page.aliases)}


def suggestions(vault: Vault, target: str, source: str) -> list[dict[str, str]]:
    """The pages an unresolved link most likely meant: the engine's top search hits for its text."""
    from .query import parse_query
    from .search import search

    words = re.sub(r"[^\w\s-]", " ", posixpath.basename(target.replace("\\", "/"))).strip()
    if not words:
        return []
    try:
        hits = search(vault, parse_query(words, limit=MAX_SUGGESTIONS + 1, operators=False))
    except ValueError:
        return []
    out = [{"file": h.page.path, "title": h.page.title, "link": f"[[{h.page.title}]]"}
           for h in hits if h.page.path != source]
    return out[:MAX_SUGGESTIONS]


def links_report(vault: Vault, page: Page, text: str | None = None, start: int = 0,
                 end: int | None = None) -> list[dict[str, Any]]:
    """Every link of ``page`` (its ``text``) that begins in ``text[start:end]`` (all of them
    without ``text``), frontmatter edges included, in document order."""
    line_starts = [0]
    if text is not None:
        line_starts += [m.end() for m in re.finditer("\n", text)]
    out = []
    for link in (*page.edges, *page.links):
        if text is not None:
            line = link.span.start_line
            offset = (line_starts[line] if line < len(line_starts) else len(text)) + link.span.start_char
            if offset < start or (end is not None and offset >= end):
                continue
        out.append(link_entry(vault, page, link))
    out.sort(key=lambda e: (e["line"], e["column"]))
    return out


def link_summary(report: list[dict[str, Any]]) -> dict[str, int]:
    """How many written links have each status."""
    counts = {"resolved": 0, "ambiguous": 0, "alias": 0, "unresolved": 0, "attachment": 0}
    for entry in report:
        counts[entry["status"]] += 1
    return counts


def refuse_broken(report: list[dict[str, Any]], rel: str) -> None:
    """WriteError naming each link that does not lead to exactly one page (``strict_links``)."""
    bad = [e for e in report if e["status"] in ("unresolved", "ambiguous")]
    if not bad:
        return
    parts = []
    for e in bad:
        if e["status"] == "unresolved":
            hint = ", ".join(s["link"] for s in e.get("suggestions", ())) or "no similar page"
            parts.append(f'"{e["target"]}" (line {e["line"]}) resolves to no page (did you mean {hint}?)')
        else:
            parts.append(f'"{e["target"]}" (line {e["line"]}) is ambiguous: {", ".join(e["candidates"])}')
    raise WriteError(f"strict_links: {rel} not written: " + "; ".join(parts))


# --- composing pages ------------------------------------------------------------------------------


def safe_name(title: str) -> str:
    """A file name (without ``.md``) for a page title: characters no file system or link takes
    become spaces, runs of space one space."""
    cleaned = "".join(" " if c in _BAD_NAME_CHARS or unicodedata.category(c)[0] == "C" else c for c in title)
    cleaned = " ".join(cleaned.split()).strip(". ")
    return cleaned[:120].rstrip(". ") or "Untitled"


def slugify(title: str) -> str:
    """A lower-case, hyphenated file name for a page title (letters of any script kept)."""
    text = unicodedata.normalize("NFKC", title).casefold()
    text = re.sub(r"[^\w]+", "-", text).strip("-_")
    return text[:80].strip("-") or "page"


def dump_frontmatter(meta: dict[str, Any]) -> str:
    """``---`` YAML ``---`` for ``meta`` (keys in the order given), or "" when empty."""
    if not meta:
        return ""
    body = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{body}---\n"


def split_frontmatter(text: str) -> tuple[str, str]:
    """``(frontmatter block with its fences, or "", the rest)``."""
    if text.startswith("---\n") or text.startswith("---\r\n"):
        m = re.search(r"^(---|\.\.\.)[ \t]*\r?\n?", text[4:], re.M)
        if m:
            end = 4 + m.end()
            return text[:end], text[end:]
    return "", text


def _payload(vault: Vault, command: str, rel: str, text: str, version: str | None, report: list[dict[str, Any]],
             **extra: Any) -> dict[str, Any]:
    from .render import vault_name

    return {
        "command": command,
        "vault": vault_name(vault),
        "path": rel,
        "version": version,
        "written": version is not None,
        **extra,
        "links": report,
        "link_summary": link_summary(report),
    }


def _commit(vault: Vault, rel: str, text: str) -> None:
    """The written page into the live index at once (the next search sees it)."""
    vault.upsert(parse_page(rel, text, label_first=vault.label_first))


def _existing_name(vault: Vault, title: str, stem: str) -> str | None:
    """A page whose file name or title is already ``title`` or ``stem`` (a new one would make
    links by that name ambiguous)."""
    for key in {title.casefold(), stem.casefold()}:
        for index in (vault.by_stem, vault.by_title):
            found = index.get(key)
            if found:
                return sorted(found)[0]
    return None


# --- the write operations -------------------------------------------------------------------------


def create_page(
    vault: Vault, root: str, title: str, *, body: str = "", folder: str | None = None, path: str | None = None,
    frontmatter: dict[str, Any] | None = None, tags: list[str] | None = None, strict_links: bool = False,
    dry_run: bool = False, command: str = "create_page",
) -> dict[str, Any]:
    """A new page named ``title`` in ``folder`` (or at ``path``), with ``body`` and frontmatter.

    The file name is the title (characters no file name takes dropped); the frontmatter keeps
    the title when the file name could not. Refused when the file exists or another page has
    that title or file name."""
    title = " ".join(title.split())
    if not title:
        raise WriteError('"title" must not be empty')
    if path:
        rel = clean_rel(path)
    else:
        name = safe_name(title)
        base = clean_folder(folder)
        rel = clean_rel(f"{base}/{name}.md" if base else f"{name}.md")
    stem = posixpath.basename(rel)[:-3]
    taken = _existing_name(vault, title, stem)
    if taken is not None or rel in vault.pages or os.path.lexists(os.path.join(root, *rel.split("/"))):
        where = taken or rel
        raise WriteError(
            f"a page named {title!r} already exists ({where}): nothing written; "
            "use append_to_page or edit_page to change it, or choose another title"
        )
    meta: dict[str, Any] = {}
    if stem != title:
        meta["title"] = title
    for key, value in (frontmatter or {}).items():
        meta[str(key)] = value
    if tags:
        meta["tags"] = [t.lstrip("#") for t in tags]
    text = dump_frontmatter(meta) + (body if body.endswith("\n") or not body else body + "\n")
    page = parse_page(rel, text, label_first=vault.label_first)
    report = links_report(vault, page)
    if strict_links:
        refuse_broken(report, rel)
    version = None
    if not dry_run:
        confined_target(root, rel)
        version = write_text(root, rel, text, create=True)
        _commit(vault, rel, text)
    return _payload(vault, command, rel, text, version, report, title=page.title, created=True)


def find_for_write(vault: Vault, name: str) -> str:
    """The path of the page ``name`` names, refusing a name several pages share."""
    from .retrieve import page_choice

    text = name.strip()
    slashed = text.replace("\\", "/")
    if slashed.startswith(("/", "../")) or "/../" in slashed or slashed == ".." or os.path.isabs(text):
        raise OutsideVault(errno.EACCES, "the path leads outside the vault", name)
    while slashed.startswith("./"):
        slashed = slashed[2:]
    if slashed in vault.pages:
        return slashed
    page, candidates = page_choice(vault, name)
    if candidates:
        raise WriteError(f"{name!r} names {len(candidates)} pages ({', '.join(candidates)}): give the path of one")
    return page.path


def _heading_section(text: str, heading: str) -> tuple[int, int] | None:
    """``(end of the heading's line, end of its section)`` as offsets into ``text``, for the
    first heading whose text is ``heading`` (case and ``#`` marks ignored), outside code fences."""
    want = heading.strip().lstrip("#").strip().casefold()
    level = None
    start = None
    fence = None
    offset = 0
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        m_fence = re.match(r"^(```+|~~~+)", bare)
        if m_fence:
            if fence is None:
                fence = m_fence.group(1)[0] * 3
            elif bare.startswith(fence):
                fence = None
        elif fence is None:
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line.rstrip("\r\n"))
            if m:
                if start is not None and len(m.group(1)) <= level:
                    return start, offset
                if start is None and m.group(2).strip().casefold() == want:
                    level, start = len(m.group(1)), offset + len(line)
        offset += len(line)
    return (start, len(text)) if start is not None else None


def append_to_page(
    vault: Vault, root: str, page: str, text: str, *, heading: str | None = None, version: str | None = None,
    strict_links: bool = False,
) -> dict[str, Any]:
    """``text`` added at the end of ``page``, or of its section ``heading`` (made at the end, as
    a level-2 heading unless written with its ``#`` marks, when the page has none)."""
    rel = find_for_write(vault, page)
    confined_target(root, rel)
    old = check_version(root, rel, version) if version else current_text(root, rel)
    if old is None:
        raise WriteError(f"{rel} does not exist on disk: nothing written")
    addition = text if text.endswith("\n") else text + "\n"
    created_heading = False
    found = _heading_section(old, heading) if heading and heading.strip().lstrip("#").strip() else None
    if heading and heading.strip().lstrip("#").strip() and found is None:
        marks = re.match(r"^\s*(#{1,6})\s", heading)
        addition = (heading.strip() if marks else "## " + heading.strip()) + "\n\n" + addition
        created_heading = True
    at = found[1] if found is not None else len(old)
    before = old[:at]
    lead = "" if not before or before.endswith("\n\n") else ("\n" if before.endswith("\n") else "\n\n")
    tail = "\n" if at < len(old) else ""  # a blank line before the next heading
    new = old[:at] + lead + addition + tail + old[at:]
    parsed = parse_page(rel, new, label_first=vault.label_first)
    report = links_report(vault, parsed, new, at + len(lead), at + len(lead) + len(addition))
    if strict_links:
        refuse_broken(report, rel)
    written = write_text(root, rel, new, create=False, version=page_version(old))
    _commit(vault, rel, new)
    return _payload(vault, "append_to_page", rel, new, written, report, title=parsed.title,
                    heading_created=created_heading)


def edit_page(
    vault: Vault, root: str, page: str, old_text: str, new_text: str, *, version: str | None = None,
    strict_links: bool = False,
) -> dict[str, Any]:
    """Replace the one place ``old_text`` stands in ``page`` by ``new_text``; ``version`` (from
    ``read`` or the last write) must be the page's version on disk."""
    if not version:
        raise WriteError('"version" is required: read the page first (its result has "version") and pass it back')
    if not old_text:
        raise WriteError('"old_text" must not be empty: give the exact text to replace')
    rel = find_for_write(vault, page)
    confined_target(root, rel)
    old = check_version(root, rel, version)
    count = old.count(old_text)
    if count == 0:
        raise WriteError(f"old_text is not in {rel}: nothing written; read the page and copy the text exactly")
    if count > 1:
        raise WriteError(f"old_text stands {count} times in {rel}: nothing written; give more of the text around it")
    at = old.index(old_text)
    new = old[:at] + new_text + old[at + len(old_text):]
    parsed = parse_page(rel, new, label_first=vault.label_first)
    report = links_report(vault, parsed, new, at, at + len(new_text)) if new_text else []
    if strict_links:
        refuse_broken(report, rel)
    written = write_text(root, rel, new, create=False, version=version)
    _commit(vault, rel, new)
    return _payload(vault, "edit_page", rel, new, written, report, title=parsed.title)
