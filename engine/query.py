"""Query: what to look for (terms, phrase tokens) and which pages may answer (filters)."""

from __future__ import annotations

import datetime as dt
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .model import Page
from .text import query_terms, tokenize
from .timeparse import TimeError, parse_bound, parse_time
from .users import check_user, page_owner
from .weights import SCAFFOLDS, WEAK_WORDS

RANKS = ("default", "hybrid")  # the ranking modes: see README.md, Ranking

# Every per-query cost is bounded by the query's size, and the size by these caps (every surface
# parses its query here: CLI, jsonl, wiki/search, MCP, workspace/symbol, completion, hover). What
# a cap cut is said in the result's ``query_plan.truncated``.
MAX_QUERY_CHARS = 4096  # the text past this is ignored
MAX_QUERY_TERMS = 64  # distinct terms past this are ignored
MAX_TERM_CHARS = 100  # a longer word is cut to this many characters


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed search.

    ``tokens`` is the query's token sequence (for the phrase channel); ``terms`` the same tokens
    without duplicates. ``prefix`` turns on as-you-type matching of the last, partial term.
    ``rank`` is ``default`` (the explained channel ranking) or ``hybrid`` (reciprocal rank fusion
    of that ranking with a BM25F arm and, when installed, a vector arm).
    """

    text: str
    terms: tuple[str, ...]
    tokens: tuple[str, ...]
    type: str | None = None
    folder: str | None = None
    tag: str | None = None
    graph: bool = False
    folders: tuple[str, ...] = ()  # every folder scope (``folder`` is the first): a page under any of them
    graph_filtered: bool = False  # the walk keeps to the filters too (what --graph did before issue 25)
    limit: int = 10
    prefix: bool = False
    rank: str = "default"
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    time_field: str = "updated"
    min_score: float | None = None
    where: tuple[tuple[str, str], ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()
    excluded: tuple[str, ...] = ()
    hints: bool = False
    operators: tuple[tuple[str, str], ...] = ()
    context: str | None = None
    user: str | None = None  # --user: other users' pages are left out (engine/users.py)
    users_folder: str = "users"  # where the users' folders are (the vault's setting: ops.search sets it)
    include_users: bool = True  # without a user: whether users' pages are searched (idem)
    truncated: tuple[str, ...] = ()  # what the caps above cut, one sentence each
    weak: tuple[str, ...] = ()  # terms that count only in phrase and exact-name channels (``weak_terms``)
    # the as-you-type surfaces (workspace symbols, ``[[`` completion): only the pages whose names
    # match (``scoring.name_matches``), ranked by what their names earn (no body channel:
    # ``scoring.Plan.body``). Set with
    # ``as_you_type``, not a ``parse_query`` option (no other surface offers it)
    names_only: bool = False
    mtime_of: Callable[[str], float | None] | None = field(default=None, compare=False, hash=False)

    @property
    def partial(self) -> str | None:
        """The last term when it may still be being typed (as-you-type mode only)."""
        if not self.prefix or not self.tokens or self.text[-1:].isspace():
            return None
        return self.tokens[-1]


TIME_FIELDS = ("updated", "created")
# OpenViking spells the same fields updated_at/created_at: accepted, and read as these
TIME_FIELD_ALIASES = {"updated_at": "updated", "created_at": "created"}
TIME_FIELD_NAMES = (*TIME_FIELDS, *TIME_FIELD_ALIASES)
_OPERATOR = re.compile(r"^(-?)(type|path|after|before|tag):(.+)$", re.IGNORECASE)


def split_operators(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The free text of a query and its operators, in order.

    Operators: ``"exact phrase"``, ``-term`` (exclude pages that have it), ``#tag``,
    ``type:concept``, ``path:wiki/ai``, ``tag:ai``, ``after:7d``, ``before:2026-01-01``.
    Anything that does not parse as an operator stays plain text, never an error.
    """
    try:
        parts = shlex.split(text, posix=True) if '"' in text else text.split()
    except ValueError:  # an unbalanced quote: all plain text
        return text, []
    words: list[str] = []
    ops: list[tuple[str, str]] = []
    quoted = re.findall(r'"([^"]+)"', text)
    for part in parts:
        if part in quoted:
            ops.append(("phrase", part))
            words.append(part)
            continue
        m = _OPERATOR.match(part)
        if m and not m.group(1):
            ops.append((m.group(2).lower(), m.group(3)))
            continue
        if part.startswith("-") and len(part) > 1 and tokenize(part[1:]):
            ops.append(("exclude", part[1:]))
            continue
        if part.startswith("#") and len(part) > 1 and tokenize(part[1:]):
            ops.append(("tag", part[1:]))
            words.append(part[1:])
            continue
        words.append(part)
    return " ".join(words), ops


def parse_query(
    text: str,
    *,
    type: str | None = None,  # noqa: A002 - the user-facing name of the filter
    folder: str | list[str] | tuple[str, ...] | None = None,
    tag: str | None = None,
    graph: bool = False,
    graph_filtered: bool = False,
    limit: int = 10,
    prefix: bool = False,
    rank: str = "default",
    since: str | None = None,
    until: str | None = None,
    time_field: str = "updated",
    min_score: float | None = None,
    where: dict[str, str] | None = None,
    hints: bool = False,
    operators: bool = True,
    context: str | None = None,
    user: str | None = None,
    now: dt.datetime | None = None,
    mtime_of: Callable[[str], float | None] | None = None,
) -> Query:
    """Build a Query from free text and options (ValueError, with a message for the person who
    typed it, for an option that is not of its kind). Operators in the text are parsed unless
    ``operators`` is False (as-you-type completion keeps the text as typed)."""
    scopes = list(folder) if isinstance(folder, (list, tuple)) else [folder] if folder is not None else []
    if not all(isinstance(f, str) for f in scopes):
        raise ValueError('"folder" must be a string or a list of strings')
    for name, value in (("type", type), ("tag", tag), ("since", since), ("until", until),
                        ("context", context)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f'"{name}" must be a string')
    if user is not None:
        user = check_user(user)
    if rank not in RANKS:
        raise ValueError('"rank" must be ' + " or ".join(f'"{r}"' for r in RANKS))
    time_field = TIME_FIELD_ALIASES.get(time_field, time_field) if isinstance(time_field, str) else time_field
    if time_field not in TIME_FIELDS:
        raise ValueError('"time_field" must be "updated" or "created" (or "updated_at", "created_at")')
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))):
        raise ValueError('"min_score" must be a number')
    pairs: list[tuple[str, str]] = []
    for key, value in sorted((where or {}).items()):
        if not isinstance(key, str) or not key or isinstance(value, (dict, list)):
            raise ValueError('"where" takes KEY=VALUE pairs with a text value')
        pairs.append((key, _text(value)))
    now = now or dt.datetime.now(dt.timezone.utc)
    truncated: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        truncated.append(f"the query's {len(text):,} characters were cut to the first {MAX_QUERY_CHARS:,}")
        text = text[:MAX_QUERY_CHARS]
    words, ops = split_operators(text) if operators else (text, [])
    phrases: list[tuple[str, ...]] = []
    excluded: list[str] = []
    kept: list[tuple[str, str]] = []
    for op, value in ops:
        try:
            if op == "phrase":
                phrases.append(tuple(tokenize(value)))
            elif op == "exclude":
                excluded.extend(tokenize(value))
            elif op == "tag" and tag is None:
                tag = value
            elif op == "type" and type is None:
                type = value  # noqa: A001
            elif op == "path" and folder is None:
                scopes.append(value)  # a second path: widens the scope (any of them)
            elif op == "after" and since is None:
                parse_bound(value, now)
                since = value
            elif op == "before" and until is None:
                parse_bound(value, now, end=True)
                until = value
            else:
                continue
        except TimeError:
            words = f"{words} {op}:{value}".strip()  # not a time: plain text after all
            continue
        kept.append((op, value))
    try:
        since_at = parse_bound(since, now) if since else None
        until_at = parse_bound(until, now, end=True) if until else None
    except TimeError as exc:
        raise ValueError(str(exc)) from None
    terms, tokens = query_terms(words), tuple(tokenize(words))
    if any(len(t) > MAX_TERM_CHARS for t in tokens):
        truncated.append(f"words longer than {MAX_TERM_CHARS} characters were cut to their first {MAX_TERM_CHARS}")
        tokens = tuple(t[:MAX_TERM_CHARS] for t in tokens)
        terms = tuple(dict.fromkeys(tokens))
    if len(terms) > MAX_QUERY_TERMS:
        truncated.append(f"the query's {len(terms):,} distinct terms were cut to the first {MAX_QUERY_TERMS}")
        terms = terms[:MAX_QUERY_TERMS]
        kept_terms = set(terms)
        tokens = tuple(t for t in tokens if t in kept_terms)
    return Query(
        text=text,
        terms=terms,
        tokens=tokens,
        weak=weak_terms(tokens, terms, tokens[-1] if prefix and tokens and not text[-1:].isspace() else None),
        type=type or None,
        folder=normalize_folder(scopes[0]) if scopes else None,
        folders=tuple(dict.fromkeys(normalize_folder(f) for f in scopes)),
        tag=tag.lstrip("#").casefold() if tag else None,
        graph=graph,
        graph_filtered=graph_filtered,
        limit=limit,
        prefix=prefix,
        rank=rank,
        since=since_at,
        until=until_at,
        time_field=time_field,
        min_score=min_score,
        where=tuple(pairs),
        phrases=tuple(p for p in phrases if p),
        excluded=tuple(dict.fromkeys(excluded)),
        hints=hints,
        operators=tuple(kept),
        context=context.strip() if context and context.strip() else None,
        user=user,
        truncated=tuple(truncated),
        mtime_of=mtime_of,
    )


def as_you_type(text: str, limit: int, *, operators: bool = True) -> Query:
    """The query of an as-you-type surface (workspace symbols, ``[[`` completion): prefix on,
    the pages whose names match only (``Query.names_only``)."""
    return replace(parse_query(text, prefix=True, limit=limit, operators=operators), names_only=True)


def weak_terms(tokens: tuple[str, ...], terms: tuple[str, ...], partial: str | None = None) -> tuple[str, ...]:
    """The query's weak terms, in query order: function words (``weights.WEAK_WORDS``) and the
    words of question scaffolding (``weights.SCAFFOLDS``, a whole sequence in the query). None
    when every term would be weak (a query of such words means them) and never ``partial``, the
    word still being typed."""
    weak = {t for t in terms if t in WEAK_WORDS}
    for scaffold in SCAFFOLDS:
        n = len(scaffold)
        if any(tokens[i : i + n] == scaffold for i in range(len(tokens) - n + 1)):
            weak.update(scaffold)
    weak.discard(partial)
    if not weak or all(t in weak for t in terms):
        return ()
    return tuple(t for t in terms if t in weak)


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def normalize_folder(folder: str) -> str:
    """A folder filter as a clean vault-relative prefix: ``./wiki//ai/`` -> ``wiki/ai``.

    A folder that climbs out of the vault (``../x``, ``/etc``) becomes ``"\\0"``, which no page
    path starts with, so it matches nothing and nothing outside the vault is read.
    """
    f = folder.strip().replace("\\", "/")
    if f.startswith("/"):
        return "\0"
    parts: list[str] = []
    for part in f.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return "\0"
        parts.append(part)
    return "/".join(parts)


def page_time(page: Page, query: Query) -> dt.datetime | None:
    """The page's time for the query's time filter: frontmatter, else the file's mtime."""
    value = page.updated if query.time_field == "updated" else page.created
    when = parse_time(value)
    if when is None and query.mtime_of is not None:
        mtime = query.mtime_of(page.path)
        if mtime is not None:
            when = dt.datetime.fromtimestamp(mtime, dt.timezone.utc)
    return when


def _meta_matches(value: object, want: str) -> bool:
    if isinstance(value, list):
        return any(_meta_matches(v, want) for v in value)
    if value is None or isinstance(value, dict):
        return False
    text = _text(value)
    return text == want or text.casefold() == want.casefold()


def _has_sequence(page: Page, seq: tuple[str, ...]) -> bool:
    pattern = r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, seq)) + r"(?![^\W_])"
    rx = re.compile(pattern)
    return any(rx.search(t.casefold()) for t in (page.title, *page.aliases, page.body))


def _has_term(page: Page, term: str) -> bool:
    if term in tokenize(page.title) or any(term in tokenize(a) for a in page.aliases):
        return True
    if any(term == t or term in t.split("/") for t in page.tags):
        return True
    return _has_sequence(page, (term,))


def passes_filters(page: Page, query: Query) -> bool:
    """Whether a page is a candidate under the query's filters (all of them must hold): type,
    user scope, folder, tag, time, frontmatter ``where`` pairs, required phrases and excluded terms."""
    if query.type is not None and page.type != query.type:
        return False
    scopes = query.folders or ((query.folder,) if query.folder is not None else ())
    if scopes and "" not in scopes:
        if not any(page.path.startswith(f + "/") for f in scopes):
            return False
    if query.user is not None or not query.include_users:  # per-user scopes: another user's page is out
        owner = page_owner(page.path, query.users_folder)
        if owner is not None and owner != (query.user or "").casefold():
            return False
    if query.tag is not None:
        want = query.tag
        if not any(t == want or t.startswith(want + "/") for t in page.tags):
            return False
    if query.since is not None or query.until is not None:
        when = page_time(page, query)
        if when is None:
            return False
        if query.since is not None and when < query.since:
            return False
        if query.until is not None and when > query.until:
            return False
    for key, want in query.where:
        if not _meta_matches(page.meta.get(key), want):
            return False
    for seq in query.phrases:
        if not _has_sequence(page, seq):
            return False
    for term in query.excluded:
        if _has_term(page, term):
            return False
    return True


def context_page(vault, query: Query) -> str | None:
    """The vault path of the query's context page (a path, title, alias or [[link]]), if any."""
    name = query.context
    if not name:
        return None
    m = re.fullmatch(r"!?\[\[(.*?)(?:\|.*)?\]\]", name)
    if m:
        name = m.group(1).split("#", 1)[0].strip()
    if name in vault.pages:
        return name
    if name + ".md" in vault.pages:
        return name + ".md"
    return vault.resolve(name).path
