"""Capture: one external document (a URL, a local file, standard input) as a page, with provenance.

``vaultlens add REF`` and the MCP tool ``add`` call ``capture`` (fetch or read, convert, infer,
compose) and then ``write_capture``. The page goes to the capture folder (``.vaultlens.toml``
``capture.folder``, else Obsidian's new-note folder, else ``inbox/``), named by a slug of its
title, never over an existing file. Its frontmatter says where it came from::

    title, source (URL or path), fetched (ISO time, UTC), provenance: inferred,
    content_hash (sha256 of the body), type, usage, related (candidate links, never put in the text)

HTML becomes Markdown with readability-lxml (the main content, boilerplate dropped) and
markdownify (headings, lists, code, tables and links kept): chosen by measurement on the saved
pages in tests/data/capture (docs/reference.md, "Capture"). Both come with the ``capture``
extra; Markdown and plain text need nothing.

``--update`` (``update``) replaces the page captured from the same source, but only while the
page is as it was captured (its body still hashes to ``content_hash`` and ``provenance`` is still
``inferred``): a page a person edited or reviewed is refused, never overwritten.

Must not: know any protocol; write anywhere but through ``engine.writes``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import posixpath
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from . import writes
from .page import parse_page
from .scan import read_bytes
from .text import tokenize
from .vault import Vault

MAX_BYTES = 5_000_000  # the default size limit of a captured document (capture.max_bytes)
TIMEOUT_SECONDS = 20.0
MAX_REDIRECTS = 5
DEFAULT_FOLDER = "inbox"
MAX_RELATED = 8
USER_AGENT = "vaultlens-capture (+https://pypi.org/project/vaultlens/)"

HTML_TYPES = ("text/html", "application/xhtml+xml")
MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
TEXT_TYPES = ("text/plain",)


class CaptureError(ValueError):
    """A document that cannot be captured as asked: one line saying why (exit status 2)."""


# --- settings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaptureSettings:
    folder: str = DEFAULT_FOLDER
    max_bytes: int = MAX_BYTES


def capture_settings(root: str) -> CaptureSettings:
    """``[capture]`` ``folder`` and ``max_bytes`` of the vault's ``.vaultlens.toml``; the folder
    defaults to Obsidian's new-note folder (``.obsidian/app.json``), else ``inbox``."""
    folder, max_bytes = None, MAX_BYTES
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(read_bytes(root, ".vaultlens.toml").decode("utf-8"))
        section = data.get("capture") if isinstance(data.get("capture"), dict) else {}
        if isinstance(section.get("folder"), str):
            folder = section["folder"].strip("/")
        if isinstance(section.get("max_bytes"), int) and not isinstance(section["max_bytes"], bool) \
                and section["max_bytes"] > 0:
            max_bytes = section["max_bytes"]
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    if folder is None:
        try:
            app = json.loads(read_bytes(root, ".obsidian/app.json"))
            if isinstance(app, dict) and app.get("newFileLocation") == "folder" \
                    and isinstance(app.get("newFileFolderPath"), str) and app["newFileFolderPath"].strip("/"):
                folder = app["newFileFolderPath"].strip("/")
        except (OSError, ValueError):
            pass
    return CaptureSettings(folder if folder is not None else DEFAULT_FOLDER, max_bytes)


# --- getting the document -------------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """The bytes of a document, where they came from and what they are (html, markdown, text)."""

    source: str  # the URL (after redirects) or the path as given
    kind: str
    data: bytes
    charset: str | None = None
    name: str = ""  # a file or URL name, for a title when the document has none


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follow at most MAX_REDIRECTS redirects, to http or https only."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001
        scheme = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, newurl)).scheme.lower()
        if scheme not in ("http", "https"):
            raise CaptureError(f"{req.full_url} redirects to a {scheme or 'relative'}: URL ({newurl}): not followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def is_url(ref: str) -> bool:
    return urllib.parse.urlsplit(ref).scheme.lower() in ("http", "https")


def fetch(url: str, max_bytes: int = MAX_BYTES, timeout: float = TIMEOUT_SECONDS) -> Document:
    """GET ``url``: a Document, or CaptureError for a network error, an answer other than 200,
    more than ``max_bytes``, binary content or a redirect to another scheme."""
    opener = urllib.request.build_opener(_Redirects, urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/markdown, text/plain;q=0.9, */*;q=0.1"})
    try:
        with opener.open(request, timeout=timeout) as answer:
            status = answer.status
            if status != 200:
                raise CaptureError(f"{url}: HTTP {status} {answer.reason}: nothing captured")
            length = answer.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > max_bytes:
                raise CaptureError(f"{url} is {int(length)} bytes, over the {max_bytes}-byte limit (capture.max_bytes, --max-bytes)")
            data = answer.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise CaptureError(f"{url} is over the {max_bytes}-byte limit (capture.max_bytes, --max-bytes)")
            final = answer.geturl()
            ctype = answer.headers.get_content_type()
            charset = answer.headers.get_content_charset()
    except CaptureError:
        raise
    except urllib.error.HTTPError as exc:
        raise CaptureError(f"{url}: HTTP {exc.code} {exc.reason}: nothing captured") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, CaptureError):
            raise reason from None
        raise CaptureError(f"cannot fetch {url}: {getattr(reason, 'strerror', None) or reason}") from None
    except (OSError, ValueError) as exc:  # timeouts, resets, a malformed URL
        raise CaptureError(f"cannot fetch {url}: {exc}") from None
    name = posixpath.basename(urllib.parse.urlsplit(final).path.rstrip("/"))
    return Document(final, _kind(ctype, data, name, final), data, charset, name)


def read_file(path: str, max_bytes: int = MAX_BYTES) -> Document:
    """A local file as a Document (CaptureError when missing, too big or binary)."""
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            raise CaptureError(f"{path} is {size} bytes, over the {max_bytes}-byte limit (capture.max_bytes, --max-bytes)")
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except CaptureError:
        raise
    except OSError as exc:
        raise CaptureError(f"cannot read {path}: {exc.strerror or exc}") from None
    name = os.path.basename(path)
    return Document(os.path.abspath(path), _kind("", data, name, path), data, None, name)


def read_stdin(data: bytes, max_bytes: int = MAX_BYTES) -> Document:
    if len(data) > max_bytes:
        raise CaptureError(f"standard input is over the {max_bytes}-byte limit (capture.max_bytes, --max-bytes)")
    return Document("stdin", _kind("", data, "", "standard input"), data, None, "")


def _kind(ctype: str, data: bytes, name: str, where: str) -> str:
    ext = posixpath.splitext(name.lower())[1]
    if ctype == "application/pdf" or ext == ".pdf" or data.startswith(b"%PDF-"):
        raise CaptureError(f"{where} is a PDF: not supported (save it as text or HTML first)")
    head = data[:8192]
    if b"\x00" in head:
        raise CaptureError(f"{where} is binary content ({ctype or 'not text'}): nothing captured")
    if ctype and not ctype.startswith("text/") and ctype not in HTML_TYPES and ctype not in (
            "application/json", "application/xml"):
        raise CaptureError(f"{where} is binary content ({ctype}): nothing captured")
    if ctype in HTML_TYPES or ext in (".html", ".htm", ".xhtml"):
        return "html"
    if ctype in MARKDOWN_TYPES or ext in (".md", ".markdown"):
        return "markdown"
    if ctype in TEXT_TYPES or ext in (".txt", ".text"):
        return "text"
    sniff = head.lstrip()[:512].lower()
    if sniff.startswith((b"<!doctype html", b"<html")) or b"<body" in sniff:
        return "html"
    return "markdown"


def _decode(doc: Document) -> str:
    for charset in (doc.charset, "utf-8"):
        if charset:
            try:
                return doc.data.decode(charset).lstrip("\ufeff")
            except (LookupError, UnicodeDecodeError):
                continue
    if doc.kind == "html":
        m = re.search(rb"<meta[^>]+charset=[\"']?([\w-]+)", doc.data[:4096], re.I)
        if m:
            try:
                return doc.data.decode(m.group(1).decode("ascii"))
            except (LookupError, UnicodeDecodeError):
                pass
    raise CaptureError(f"{doc.source} is not text in UTF-8 or its declared charset: nothing captured")


# --- converting -----------------------------------------------------------------------------------


def html_to_markdown(html: str, base_url: str | None = None) -> tuple[str, str]:
    """``(title, Markdown)`` of an HTML page's main content: readability-lxml picks it (menus,
    sidebars, footers, comments dropped), markdownify writes it (ATX headings, ``-`` bullets,
    fenced code, pipe tables, links made absolute against ``base_url``)."""
    try:
        import lxml.html
        from markdownify import markdownify
        from readability import Document as Readable
    except ImportError:
        raise CaptureError(
            "HTML capture needs the capture extra (readability-lxml and markdownify): install vaultlens with "
            "'.[capture]' (Markdown and text need nothing)"
        ) from None
    try:
        page = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        raise CaptureError("the HTML page has no content to capture") from None
    for edit in page.xpath('//*[contains(concat(" ", normalize-space(@class), " "), " mw-editsection ")]'):
        edit.drop_tree()  # MediaWiki's "[edit]" links in headings: readability drops such headings
    h1 = " ".join(str(page.xpath("string(//h1)")).split())
    readable = Readable(lxml.html.tostring(page, encoding="unicode"))
    full_title = " ".join((readable.title() or "").split())
    title = h1 if h1 and (not full_title or h1.casefold() in full_title.casefold()) else \
        " ".join((readable.short_title() or "").split())
    summary = readable.summary(html_partial=True)
    tree = lxml.html.fromstring(summary)
    if base_url:
        tree.make_links_absolute(base_url, resolve_base_href=True)
    body = markdownify(lxml.html.tostring(tree, encoding="unicode"), heading_style="ATX", bullets="-",
                       code_language="", strip=["script", "style"])
    body = re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
    # a web page has no wikilinks: "[[1]](#cite)" (a link on "[1]") must not become one
    body = body.replace("[[", "[\\[").replace("]]", "\\]]")
    first = re.match(r"#\s+(.+)\n", body)
    if first and (not title or first.group(1).strip().casefold() in title.casefold()):
        title = first.group(1).strip()
        body = body[first.end():].lstrip("\n")
    return title, body


def _markdown_title(text: str) -> tuple[str, str, dict[str, Any]]:
    """``(title, body, the frontmatter it had)`` of a Markdown document."""
    block, body = writes.split_frontmatter(text)
    meta: dict[str, Any] = {}
    if block:
        meta = dict(parse_page("x.md", text).meta)
    title = str(meta.get("title") or "").strip()
    m = re.search(r"^#\s+(.+?)\s*#*\s*$", body, re.M)
    if not title and m:
        title = m.group(1).strip()
    if m and m.group(1).strip() == title and not body[: m.start()].strip():
        body = body[m.end():].lstrip("\n")
    return title, body, meta


def convert(doc: Document) -> tuple[str, str, dict[str, Any]]:
    """``(title, Markdown body, frontmatter kept from the document)``."""
    text = _decode(doc)
    if doc.kind == "html":
        title, body = html_to_markdown(text, doc.source if is_url(doc.source) else None)
        kept: dict[str, Any] = {}
    elif doc.kind == "markdown":
        title, body, meta = _markdown_title(text)
        kept = {k: meta[k] for k in ("aliases", "tags") if k in meta}
    else:
        body = text.replace("\r\n", "\n")
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        title = first if len(first) <= 80 else ""
        kept = {}
    if not title:
        title = posixpath.splitext(doc.name)[0].replace("-", " ").replace("_", " ").strip() or "Captured page"
    if not body.strip():
        raise CaptureError(f"{doc.source} has no text to capture")
    return " ".join(title.split()), body if body.endswith("\n") else body + "\n", kept


# --- what kind of page it is ----------------------------------------------------------------------

KINDS = {  # type -> usage: how a reader (or an agent) uses such a page
    "policy": "rules to follow",
    "caveat": "a warning to check before acting",
    "definition": "what a term means",
    "reference": "facts to look up",
}
_POLICY_TITLE = re.compile(r"\b(polic(y|ies)|terms|code of conduct|guidelines?|rules|regulations?|bylaws|procedure)\b", re.I)
_CAVEAT_TITLE = re.compile(r"\b(caveats?|warnings?|pitfalls?|gotchas?|known (issues?|problems?)|limitations?|troubleshooting|do not|don't)\b", re.I)
_OBLIGATION = re.compile(r"\b(must|must not|shall|shall not|is prohibited|are prohibited|is not permitted|may not)\b", re.I)
_DEFINITION_TITLE = re.compile(r"^(what is|what are|definition of|glossary)\b", re.I)


def infer_type(title: str, body: str) -> tuple[str, str, str]:
    """``(type, usage, why)``: simple rules, tried in this order, the first that holds wins.

    1. policy: the title names a policy, rules, terms or guidelines and a sentence obliges
       (must, shall, may not, is prohibited), or at least 3 sentences oblige;
    2. caveat: the title names a caveat, warning, pitfall, known issue or limitation;
    3. definition: the title asks "what is", or the first sentence says "<title> is a/an/the";
    4. reference: anything else (documentation, articles, notes to look things up in).
    """
    obligations = len(_OBLIGATION.findall(body))
    if _POLICY_TITLE.search(title) and obligations:
        return "policy", KINDS["policy"], (f"the title names a policy ({_POLICY_TITLE.search(title).group(0)!r}) "
                                           f"and {obligations} sentence(s) oblige")
    if obligations >= 3:
        return "policy", KINDS["policy"], f"{obligations} sentences oblige (must, shall, may not, prohibited)"
    if _CAVEAT_TITLE.search(title):
        return "caveat", KINDS["caveat"], f"the title names a caveat ({_CAVEAT_TITLE.search(title).group(0)!r})"
    if _DEFINITION_TITLE.search(title):
        return "definition", KINDS["definition"], "the title asks what something is"
    first = re.sub(r"[*_`]", "", next((p for p in body.split("\n\n") if p.strip() and not p.lstrip().startswith(("#", "|", "-", "```"))), ""))
    name = re.escape(title.casefold())
    if re.match(rf"^\s*(an? |the )?{name}\s+(\([^)]*\)\s+)?(is|are|refers to|means)\s", first.casefold()):
        return "definition", KINDS["definition"], "the first sentence says what the title is"
    return "reference", KINDS["reference"], "no policy, caveat or definition rule holds"


# --- candidate links ------------------------------------------------------------------------------

_MAX_NAME_WORDS = 6


def related_candidates(vault: Vault, title: str, body: str, limit: int = MAX_RELATED) -> list[dict[str, Any]]:
    """Existing pages whose title or alias the text names, best first: more mentions first, then
    longer names (more specific), then title matches before alias matches, then path. The words
    are read left to right and the longest name at each place counts (so "hot composting" does
    not count for "Composting" too); a one-word name shorter than 4 letters is too common to
    count. Never put into the text."""
    words = tokenize(f"{title}\n{body}")
    names: dict[str, tuple[str, str]] = {}  # casefolded name -> (via, name as the page has it)
    for path, page in vault.pages.items():
        for via, name in (("title", page.title), *(("alias", a) for a in page.aliases)):
            key = " ".join(tokenize(name))
            if not key or (" " not in key and len(key) < 4) or len(key.split()) > _MAX_NAME_WORDS:
                continue
            names.setdefault(key, (via, name))
    counts: dict[str, int] = {}
    n = len(words)
    i = 0
    while i < n:  # the longest name at each word wins ("thermophilic composting", not "composting")
        for size in range(min(_MAX_NAME_WORDS, n - i), 0, -1):
            key = " ".join(words[i : i + size])
            if key in names:
                counts[key] = counts.get(key, 0) + 1
                i += size
                break
        else:
            i += 1
    out = []
    for key, mentions in counts.items():
        via, name = names[key]
        index = vault.by_title if via == "title" else vault.by_alias
        paths = sorted(index.get(name.casefold(), ()) or ())
        if not paths:
            continue
        page = vault.pages[paths[0]]
        out.append({"title": page.title, "file": page.path, "via": via, "name": name, "mentions": mentions,
                    "link": f"[[{page.title}]]"})
    out.sort(key=lambda c: (-c["mentions"], -len(c["name"]), c["via"] != "title", c["file"]))
    seen: set[str] = set()
    unique = []
    for c in out:
        if c["file"] not in seen:
            seen.add(c["file"])
            unique.append(c)
    return unique[:limit]


# --- the page -------------------------------------------------------------------------------------


@dataclass
class Capture:
    """A captured page as it would be written: its path, text and what was inferred."""

    path: str
    title: str
    text: str
    meta: dict[str, Any]
    why: str
    related: list[dict[str, Any]]
    replaces: str | None = None  # with update: the page from the same source it replaces
    version: str | None = None  # that page's version when read
    links: list[dict[str, Any]] = field(default_factory=list)


def content_hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _free_path(vault: Vault, root: str, folder: str, slug: str) -> str:
    for n in range(1, 10_000):
        name = slug if n == 1 else f"{slug}-{n}"
        rel = writes.clean_rel(f"{folder}/{name}.md" if folder else f"{name}.md")
        if rel not in vault.pages and not os.path.lexists(os.path.join(root, *rel.split("/"))) \
                and not vault.by_path.get(rel[:-3].casefold()):
            return rel
    raise CaptureError(f"no free file name for {slug!r} in {folder or 'the vault'}")


def same_source(vault: Vault, source: str, under: str = "") -> str | None:
    """The page captured from ``source`` (its frontmatter ``source``), if any (the first by path);
    with ``under``, only a page in that folder (a user's own capture, never another user's)."""
    for path in vault.sorted_paths():
        if under and not path.startswith(under + "/"):
            continue
        if str(vault.pages[path].meta.get("source", "")) == source:
            return path
    return None


def target_folder(root: str, folder: str | None, user: str | None) -> str:
    """Where a capture goes: ``folder`` (default: the capture folder); with ``user``, inside that
    user's own folder (``users/<id>/``, then ``folder`` under it if given)."""
    if user is None:
        return writes.clean_folder(folder if folder is not None else capture_settings(root).folder)
    from .users import user_folder

    own = user_folder(root, user)
    return writes.clean_folder(f"{own}/{folder.strip('/')}" if folder and folder.strip("/") else own)


def capture(
    vault: Vault, root: str, doc: Document, *, folder: str | None = None, slug: str | None = None,
    update: bool = False, fetched: str | None = None, user: str | None = None,
) -> Capture:
    """The page ``doc`` becomes (nothing written yet); ``user`` puts it in that user's folder."""
    base = target_folder(root, folder, user)
    title, body, kept = convert(doc)
    kind, usage, why = infer_type(title, body)
    related = related_candidates(vault, title, body)
    meta: dict[str, Any] = {
        "title": title,
        "source": doc.source,
        "fetched": fetched or _now(),
        "provenance": "inferred",
        "content_hash": content_hash(body),
        "type": kind,
        "usage": usage,
    }
    meta.update(kept)
    if related:
        meta["related"] = [c["link"] for c in related]
    text = writes.dump_frontmatter(meta) + "\n" + body
    replaces = version = None
    if update:
        replaces = same_source(vault, doc.source, base if user is not None else "")
    if replaces is not None:
        old = writes.current_text(root, replaces)
        if old is not None:
            _check_unedited(replaces, old)
            version = writes.page_version(old)
        path = replaces
    else:
        path = _free_path(vault, root, base, writes.slugify(slug) if slug else writes.slugify(title))
    page = parse_page(path, text, label_first=vault.label_first)
    return Capture(path, title, text, meta, why, related, replaces, version, writes.links_report(vault, page))


def _check_unedited(rel: str, text: str) -> None:
    """CaptureError unless the page is as captured: body hash equal, provenance still inferred."""
    page = parse_page(rel, text)
    stored = str(page.meta.get("content_hash", ""))
    _block, rest = writes.split_frontmatter(text)
    body = rest[1:] if rest.startswith("\n") else rest
    if page.meta.get("provenance") != "inferred":
        raise CaptureError(f"{rel} was reviewed (provenance: {page.meta.get('provenance')}): not replaced; "
                           "delete it or capture without --update to keep both")
    if stored != content_hash(body):
        raise CaptureError(f"{rel} was edited since it was captured (its text no longer matches content_hash): "
                           "not replaced; capture without --update to keep both, or undo the edits")


def write_capture(vault: Vault, root: str, cap: Capture) -> str:
    """Write the captured page atomically; returns its version."""
    if cap.replaces is not None and cap.version is not None:
        version = writes.write_text(root, cap.path, cap.text, create=False, version=cap.version)
    else:
        version = writes.write_text(root, cap.path, cap.text, create=True)
    vault.upsert(parse_page(cap.path, cap.text, label_first=vault.label_first))
    return version


def payload(vault: Vault, cap: Capture, version: str | None) -> dict[str, Any]:
    """What ``vaultlens add --json`` prints (and the MCP tool ``add`` returns)."""
    from .render import vault_name

    return {
        "command": "add",
        "vault": vault_name(vault),
        "path": cap.path,
        "version": version,
        "written": version is not None,
        "replaced": cap.replaces is not None,
        "title": cap.title,
        "source": cap.meta["source"],
        "type": cap.meta["type"],
        "usage": cap.meta["usage"],
        "why": cap.why,
        "related": cap.related,
        "frontmatter": cap.meta,
        "content": cap.text,
        "links": cap.links,
        "link_summary": writes.link_summary(cap.links),
    }


def load(ref: str, max_bytes: int, stdin: bytes | None = None) -> Document:
    """The document ``ref`` names: a URL, ``-`` (``stdin``'s bytes) or a local file."""
    if ref == "-":
        return read_stdin(stdin or b"", max_bytes)
    scheme = urllib.parse.urlsplit(ref).scheme.lower()
    if is_url(ref):
        return fetch(ref, max_bytes)
    if scheme and len(scheme) > 1:
        raise CaptureError(f"{ref}: only http and https URLs, local files and - (standard input) can be captured")
    return read_file(ref, max_bytes)
