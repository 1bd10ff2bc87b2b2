"""page_components: every point a page earns for a query, recorded as a component as it is earned.

The score of a hit is the sum of its components' points and nothing else (``score_of``), so
the explanation cannot disagree with the ranking. Pure: reads the page, its fields and the vault's indexes.
What depends only on the query and the vault (stem groups, synonyms, typo corrections,
document frequencies) is looked up once per query in a ``Plan``, so scoring a page is a few
set and dict look-ups per term.
"""

from __future__ import annotations

import math
import re
import threading
from itertools import accumulate
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .fields import LENGTH_FIELDS, BodyCounts, PageFields, holds_all
from .model import Match, Page
from .query import Query
from .text import fold, stem, tokenize
from .vault import Vault
from .weights import (
    BM25_B,
    BM25_K1,
    BM25_SCALE,
    BODY_CAP,
    CHANNEL_RANK,
    EXACT_BASE,
    FIELDS,
    FIXED_STEP,
    FOLDED_MINOR,
    FUZZY_LONG_CHARS,
    FUZZY_MIN_CHARS,
    HEADING_EXACT,
    LINK_PRIOR_PAGES,
    PATH_LEAF,
    POINTS,
    PREFIX_ALIAS,
    SECTION_MIN_TERMS,
    SYNONYM_MINOR,
)


def fixed(value: float) -> float:
    """``value`` rounded to a multiple of 1/FIXED_STEP (an exact binary fraction)."""
    return round(value * FIXED_STEP) / FIXED_STEP


def contains_sequence(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether ``needle`` occurs contiguously in ``haystack``."""
    n = len(needle)
    if n == 0 or n > len(haystack):
        return False
    if n == 1:
        return needle[0] in haystack
    first = needle[0]
    for i in range(len(haystack) - n + 1):
        if haystack[i] == first and haystack[i : i + n] == needle:
            return True
    return False


def starts_with_typed(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether ``haystack`` begins with ``needle``, its last token only typed in part."""
    n = len(needle)
    return 0 < n <= len(haystack) and haystack[: n - 1] == needle[:-1] and haystack[n - 1].startswith(needle[-1])


@lru_cache(maxsize=4096)
def _phrase_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    r"""``tokens`` as whole words, any non-word run between them (a body holds the phrase iff
    its casefolded text has a match). The pattern starts with the first word as a literal and
    checks the character before it with a look-behind after it, so the regular-expression
    engine scans for that literal (a leading look-behind is tried at every position: 10x slower
    on a page body); the same matches as ``(?<![^\W_])w1[\W_]+w2…(?![^\W_])``."""
    first = re.escape(tokens[0])
    rest = "".join(r"[\W_]+" + re.escape(t) for t in tokens[1:])
    return re.compile(first + r"(?<![^\W_]" + first + ")" + rest + r"(?![^\W_])")


def _field_has_sequence(field: str, seq: tuple[str, ...], page: Page, f: PageFields, counts: BodyCounts) -> bool:
    """Whether a synonym (a token sequence) occurs in one field of the page (``counts``: its
    body's, ``body_counts``)."""
    if field == "title":
        return contains_sequence(f.title_tokens, seq)
    if field == "alias":
        return any(contains_sequence(a, seq) for a in f.alias_tokens)
    if field == "tag":
        return len(seq) == 1 and seq[0] in f.tag_names
    if not all(t in counts for t in seq):
        return False
    return len(seq) == 1 or _phrase_pattern(seq).search(page.body.casefold()) is not None


def _field_tokens(field: str, f: PageFields, counts: BodyCounts):
    if field == "title":
        return f.title_set
    if field == "alias":
        return f.alias_set
    if field == "tag":
        return f.tag_tokens
    return counts


# --- a page's body counts, read off its text while they are packed ---------------------------

_TOKENS_SLOT = BodyCounts.__dict__["tokens"].__get__


class _CountsView:
    """The reads of a ``BodyCounts`` that scoring uses (``get``, ``in``, ``isdisjoint``), made
    from a subclass's ``count(token)``."""

    __slots__ = ()

    def count(self, token: str) -> int:
        raise NotImplementedError

    def get(self, token: str, default: int | None = None) -> int | None:
        return self.count(token) or default

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.count(token) > 0

    def isdisjoint(self, other: Iterable[str]) -> bool:
        return not any(self.count(t) for t in other)


class _NoBody(_CountsView):
    """The body counts of every page for an as-you-type query (``Plan.body`` False): none. The
    body channels (body-term, body-bm25, body-pair, section-term, a stand-in in the body) then
    never fire, and no page's body or counts are read."""

    __slots__ = ()

    def count(self, token: str) -> int:
        return 0


NO_BODY = _NoBody()


class TextCounts(_CountsView):
    """A page's body token counts read off its casefolded text: for every token, the count
    ``BodyCounts.of(tokenize(page.body))`` holds (a token is a maximal run of ``[^\\W_]`` in the
    casefolded text, so its occurrences are the matches of ``_word_pattern``; a property test
    compares the two). Each count is found once, when first asked.

    For a page whose ``BodyCounts`` are still packed (``compact.PackedBodyCounts``, read from
    the persistent index: unpacking one interns its few hundred tokens, ~0.2 ms), finding a
    query's few words in the text costs a tenth of that (``counts_of``)."""

    __slots__ = ("folded", "_found")

    def __init__(self, body: str) -> None:
        self.folded = body.casefold()
        self._found: dict[str, int] = {}

    def count(self, token: str) -> int:
        found = self._found.get(token)
        if found is None:
            folded = self.folded
            if token not in folded or not _is_token(token):  # (quicker than the pattern's search)
                found = 0
            else:
                found = _whole_words(folded, token)
                if found < 0:
                    found = len(_word_pattern(token).findall(folded))
            self._found[token] = found
        return found


_FIND_AT_MOST = 8  # a token in a text this often or less is counted without its pattern


@lru_cache(maxsize=4096)
def _is_token(token: str) -> bool:
    """Whether ``token`` is one token (a string that is not is in no body's counts)."""
    return tokenize(token) == [token]


def _whole_words(text: str, token: str) -> int:
    r"""How many times ``token`` is a whole word of ``text`` (-1 when it is in the text more than
    _FIND_AT_MOST times, as a word or in one): neither the character before it nor
    the one after is a letter or digit (``[^\W_]`` is ``str.isalnum``: the same matches as
    ``_word_pattern``, without compiling one for each word a query asks: ~0.1 ms each)."""
    n, seen, size, end = 0, 0, len(token), len(text)
    at = text.find(token)
    while at >= 0:
        seen += 1
        if seen > _FIND_AT_MOST:
            return -1  # (then the pattern's search is quicker)
        after = at + size
        if (at == 0 or not text[at - 1].isalnum()) and (after == end or not text[after].isalnum()):
            n += 1
        at = text.find(token, at + 1)
    return n


def counts_of(page: Page, fields: PageFields) -> BodyCounts | TextCounts:
    """The page's body token counts: ``fields.body_counts`` once they are unpacked (a plain
    ``BodyCounts``), else its ``TextCounts`` (the same counts, read off the text without
    unpacking them), kept for the ``TEXT_COUNTS`` pages read so most recently (a query's
    pages are often the next query's too)."""
    counts = fields.body_counts
    if type(counts) is BodyCounts:
        return counts
    try:
        _TOKENS_SLOT(counts)  # set once unpacked; a packed one's slot is still empty
    except AttributeError:
        pass
    else:
        return counts
    key = id(counts)
    found = _TEXTS.get(key)
    if found is not None and found[0] is counts:  # (the entry holds ``counts``: its id is not reused)
        return found[1]
    text = TextCounts(page.body)
    with _TEXTS_LOCK:  # (a request on the event loop and one on the worker thread may both read)
        _TEXTS[key] = (counts, text)
        while len(_TEXTS) > TEXT_COUNTS:
            del _TEXTS[next(iter(_TEXTS))]
    return text


def indexed_outside_body(fields: PageFields, token: str) -> bool:
    """Whether the page is filed under ``token`` in the postings for a field other than its
    body (``PageFields.vocabulary``): else a posting of it means the body holds it."""
    return (
        token in fields.title_set or token in fields.alias_set or token in fields.tag_tokens
        or token in fields.tag_names or token in fields.file_tokens
    )


class PostedCounts(_CountsView):
    """A page's body counts (``counts_of``) with the query's words answered from the postings
    where they tell the count exactly (``topk.Bounds.posted``): a word no posting gives the page
    is not in its body, and a term the page holds twice there (``body_twice``) is held twice.
    Only the other words are looked up in the counts (read off the text: a search of it).

    ``posted``: per query term, path -> 1 (a holder), 2 (twice in the body), 3 (three times
    or more); ``zero``: per other word, a set of pages holding every page that holds it."""

    __slots__ = ("counts", "page", "path", "posted", "zero", "fields")

    def __init__(self, page: Page, fields: PageFields, posted: dict, zero: dict) -> None:
        self.counts: BodyCounts | TextCounts | None = None  # ``counts_of``, once a word needs them
        self.page, self.path, self.fields, self.posted, self.zero = page, page.path, fields, posted, zero

    def count(self, token: str) -> int:
        found = self.posted.get(token)
        if found is not None:
            n = found.get(self.path, 0)
            if n == 0 or n == 2 or n == 1 and not indexed_outside_body(self.fields, token):
                return n
        else:
            holders = self.zero.get(token)
            if holders is not None and self.path not in holders:
                return 0
        if self.counts is None:
            self.counts = counts_of(self.page, self.fields)
        return self.counts.count(token)


TEXT_COUNTS = 4096  # pages whose ``TextCounts`` are kept (~2-5 KB each: the casefolded body)
_TEXTS: dict[int, tuple[BodyCounts, TextCounts]] = {}  # oldest first
_TEXTS_LOCK = threading.Lock()


# --- the per-query plan --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TermPlan:
    """What one query term can match in this vault.

    ``stems``: other vault tokens with the same Porter stem (diacritics-only variants excluded);
    ``folded``: vault tokens equal to the term up to diacritics; ``fuzzy``: vault tokens one
    edit away, only for a term the vault does not know at all; ``idf``: BM25's inverse document
    frequency of the term (0 when no page holds it).
    """

    term: str
    synonyms: tuple[tuple[str, ...], ...]
    stems: tuple[str, ...]
    folded: tuple[str, ...]
    fuzzy: tuple[str, ...]
    idf: float
    variants: frozenset[str] = frozenset()  # stems and folded together, for a quick disjointness test
    synonym_heads: frozenset[str] = frozenset()  # the first word of each synonym
    stat: str = ""  # the collection statistics body-bm25 used, said in its component's ``via``


@dataclass(frozen=True, slots=True)
class Plan:
    """A query looked up against the vault once: per-term plans and the vault statistics."""

    terms: tuple[TermPlan, ...]
    folded_tokens: tuple[str, ...]
    avg_body: float
    pairs: tuple[tuple[str, ...], ...] = ()  # body-pair: the query's words from one content term to the next
    # whether the body channels count: not for an as-you-type query (``Query.names_only``), which
    # ranks the pages by their names (title, aliases, tags, headings, path) and link-prior
    body: bool = True


def bm25_idf(n_pages: int, df: int) -> float:
    """BM25's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (never negative)."""
    if df <= 0:
        return 0.0
    return math.log(1.0 + (n_pages - df + 0.5) / (df + 0.5))


_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def one_edit_away(word: str) -> set[str]:
    """Every string one deletion, transposition, substitution or insertion away from ``word``
    (Norvig's ``edits1``), over ASCII letters, digits and the word's own characters."""
    letters = "".join(sorted(set(_ALPHABET) | set(word)))
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in letters}
    out |= {a + c + b for a, b in splits for c in letters}
    out.discard(word)
    return out


# Above this length the vault's tokens of a near length are each compared with the word
# (``_one_edit``, linear in the word) instead of building ``one_edit_away`` (~36·L strings of
# length L: quadratic). Both give the same set; below it the neighbourhood is the faster.
EDIT_SCAN_CHARS = 24


def _one_edit(word: str, token: str, letters: frozenset[str]) -> bool:
    """Whether ``token`` is in ``one_edit_away(word)`` (``letters``: the characters it may
    insert or substitute), in time linear in the word."""
    n, m = len(word), len(token)
    i = 0
    shortest = min(n, m)
    while i < shortest and word[i] == token[i]:
        i += 1
    if m == n:
        if i == n:
            return False  # the word itself
        if token[i] in letters and word[i + 1:] == token[i + 1:]:
            return True
        return i + 1 < n and word[i] == token[i + 1] and word[i + 1] == token[i] and word[i + 2:] == token[i + 2:]
    if m == n - 1:
        return word[i + 1:] == token[i:]
    if m == n + 1:
        return token[i] in letters and word[i:] == token[i + 1:]
    return False


def _near_tokens(postings: dict, word: str) -> list[str]:
    """The vault tokens one edit from ``word`` (see ``EDIT_SCAN_CHARS``)."""
    letters = frozenset(_ALPHABET) | frozenset(word)
    n = len(word)
    return [t for t in postings if n - 1 <= len(t) <= n + 1 and _one_edit(word, t, letters)]


def typo_corrections(vault: Vault, term: str) -> tuple[str, ...]:
    """Vault tokens one edit from ``term`` (two transposed letters count as one edit).

    Only for a term of FUZZY_MIN_CHARS or more that no page holds, exactly or by its stem:
    a word the vault knows is never corrected. Words shorter than FUZZY_LONG_CHARS must keep
    their first letter (typos rarely hit it, and it keeps "cat" from matching "bat").
    """
    if len(term) < FUZZY_MIN_CHARS or not term.isalpha() or term in vault.postings:
        return ()
    if vault.stem_tokens.get(stem(term)):
        return ()
    postings = vault.postings
    long = len(term) >= FUZZY_LONG_CHARS
    near = _near_tokens(postings, term) if len(term) > EDIT_SCAN_CHARS else (t for t in one_edit_away(term) if t in postings)
    return tuple(sorted(t for t in near if long or t[0] == term[0]))


def make_plan(vault: Vault, query: Query) -> Plan:
    """Look the query's terms up in the vault's indexes (once per query)."""
    n_pages = len(vault.pages)
    postings = vault.postings
    body_total = vault.field_lengths[LENGTH_FIELDS.index("body")]
    avg_body = body_total / n_pages if n_pages and body_total else 1.0
    terms = []
    weak = set(query.weak)
    for term in query.terms:
        if term in weak:  # counts only in the phrase and exact-name channels, by ``query.tokens``
            continue
        df = len(postings.get(term, ()))
        group = vault.stem_tokens.get(stem(term), ())
        folded_term = fold(term)
        folded = tuple(sorted(t for t in group if t != term and fold(t) == folded_term))
        stems = tuple(sorted(t for t in group if t != term and fold(t) != folded_term))
        synonyms = vault.vocabulary.synonyms(term)
        terms.append(
            TermPlan(
                term=term,
                synonyms=synonyms,
                stems=stems,
                folded=folded,
                fuzzy=typo_corrections(vault, term),
                idf=bm25_idf(n_pages, df),
                variants=frozenset(stems) | frozenset(folded),
                synonym_heads=frozenset(s[0] for s in synonyms if s),
                # the score's dependence on the rest of the vault, visible (issue 25)
                stat=f"collection: in {df} of {n_pages} pages, mean body {avg_body:.1f} tokens",
            )
        )
    return Plan(
        terms=tuple(terms),
        pairs=() if query.names_only else content_pairs(query),
        folded_tokens=tuple(fold(t) for t in query.tokens),
        avg_body=avg_body,
        body=not query.names_only,
    )


def content_pairs(query: Query) -> tuple[tuple[str, ...], ...]:
    """The query's words from each content (not weak) term to the next one, weak words between
    them kept (``tasks by their priority``, ``high priority``), each sequence once and shorter
    than the query: what ``body-pair`` looks for in a page's body."""
    weak = set(query.weak)
    tokens = query.tokens
    at = [i for i, t in enumerate(tokens) if t not in weak]
    # the whole query as one sequence is the phrase channels' (names, headings), not a piece of
    # it; a term starts one pair at most (its first), so body-pair is bounded per term
    first: dict[str, tuple[str, ...]] = {}
    for i, j in zip(at, at[1:]):
        if j - i + 1 < len(tokens):
            first.setdefault(tokens[i], tokens[i : j + 1])
    return tuple(first.values())


# --- scoring ---------------------------------------------------------------------------------


def exact_points(query: Query) -> int:
    """What ``title-exact`` is worth for this query: EXACT_BASE + POINTS["title-exact"] per term,
    more than any page without an exact match can earn (the bound is derived in ``weights``)."""
    return EXACT_BASE + POINTS["title-exact"] * len(query.terms)


def _exact_name(page: Page, fields: PageFields, plan: Plan) -> tuple[str, str] | None:
    """The query is the page's title, an alias or its file name, token for token (case and
    diacritics aside): the (term, field) of its ``title-exact`` component."""
    want = plan.folded_tokens
    n = len(want)
    if len(fields.title_tokens) == n and _same_folded(fields.title_tokens, want):
        return "", ""
    for alias, tokens in zip(page.aliases, fields.alias_tokens):
        if len(tokens) == n and _same_folded(tokens, want):
            return alias, "alias"
    if len(fields.file_tokens) == n and _same_folded(fields.file_tokens, want):
        return page.stem, "file"
    return None


def _leaf_is(page: Page, seq: tuple[str, ...]) -> bool:
    """Whether the last dotted segment of the file name is the query, token for token."""
    return tuple(tokenize(page.stem.rsplit(".", 1)[-1])) == seq


def _same_folded(tokens: tuple[str, ...], want: tuple[str, ...]) -> bool:
    if tokens == want:
        return True
    return not "".join(tokens).isascii() and tuple(map(fold, tokens)) == want


def _heading_phrase(page: Page, fields: PageFields, seq: tuple[str, ...]) -> Component | None:
    """The first heading that is the query (HEADING_EXACT), else the first that holds it."""
    # by the fields' tokens first: a compact page unpacks its headings only for the text of a match
    best = None
    for i, tokens in enumerate(fields.heading_tokens):
        if tokens == seq:
            return ("heading-phrase", page.headings[i].text, 1, HEADING_EXACT, "heading", "")
        if best is None and contains_sequence(tokens, seq):
            best = i
    if best is None:
        return None
    return ("heading-phrase", page.headings[best].text, 1, POINTS["heading-phrase"], "heading", "")


def link_prior(vault: Vault, page: Page) -> Component | None:
    """``link-prior``: how many other pages link here by file name, in their body or a typed
    edge (the page's standing in its vault; ``hits`` counts up to LINK_PRIOR_PAGES). Worth
    log2(1 + pages) / log2(1 + LINK_PRIOR_PAGES) of the channel's points. Never the reason a
    page is a hit on its own: it is added only to pages that matched.
    """
    n = min(vault.linker_count(page), LINK_PRIOR_PAGES)
    if n <= 0:
        return None
    return _PRIOR_COMPONENTS[n]


def prior_points(vault: Vault, paths: Iterable[str]) -> dict[str, float]:
    """``link_prior``'s points for the page at each of ``paths`` (0 where it has none), in one
    call: what the top-k search bounds thousands of pages by."""
    points, top = _PRIOR_POINTS, LINK_PRIOR_PAGES
    return {path: points[n] if n < top else points[top] for path, n in vault.linker_counts(paths).items()}


_PRIOR_POINTS = tuple(
    fixed(POINTS["link-prior"] * min(1.0, math.log2(1 + n) / math.log2(1 + LINK_PRIOR_PAGES)))
    for n in range(LINK_PRIOR_PAGES + 1)
)

# ``via`` says the collection statistic the points came from: the count of linking pages
_PRIOR_COMPONENTS = tuple(
    ("link-prior", "", n, _PRIOR_POINTS[n], "", f"collection: linked from {n}{'+' if n == LINK_PRIOR_PAGES else ''} pages")
    for n in range(LINK_PRIOR_PAGES + 1)
)

# A component as scoring records it: (channel, term, hits, points, field, via), the fields of
# a Match. Tuples are cheap to make for every candidate; Matches are made for the hits shown.
Component = tuple


def score_of(points: Iterable[int | float]) -> int | float:
    """The score of a hit: the sum of its components' points and nothing else.

    Points are whole numbers or exact binary fractions (``weights.FIXED_STEP``), so the sum is
    exact whatever the order of addition: the score equals the sum of the listed points.
    """
    return sum(points)


def page_components(
    page: Page, fields: PageFields, query: Query, vault: Vault, plan: Plan | None = None,
    counts: BodyCounts | TextCounts | None = None,
) -> list[Component]:
    """Every component one page earns for a query, as (channel, term, hits, points, field, via),
    except ``link-prior``, which depends on the page alone: ``search.rank`` adds it (``link_prior``)
    to the pages that can still reach the top once it is added. ``counts``: the page's
    ``counts_of`` when the caller has them.

    The components of the page's names and term counts (``head_components``), then those that
    read where the terms stand in its body (``body_components``: section-term, body-pair)."""
    if plan is None:
        plan = make_plan(vault, query)
    if counts is None:
        counts = counts_of(page, fields) if plan.body else NO_BODY
    found = head_components(page, fields, query, plan, counts)
    body_components(found, page, plan, counts)
    return found


def head_components(
    page: Page, fields: PageFields, query: Query, plan: Plan, counts: BodyCounts | TextCounts
) -> list[Component]:
    """``page_components`` but section-term and body-pair: every component from the page's
    names, tags, headings, path and body token counts (set and count look-ups only)."""
    found: list[Component] = []
    add = found.append
    seq = query.tokens
    title_tokens = fields.title_tokens
    title_set = fields.title_set
    alias_set = fields.alias_set
    aliases = page.aliases
    exact = None
    if seq:
        n = len(seq)
        # an exact name needs a title, alias or file name of as many tokens as the query
        if len(title_tokens) == n or len(fields.file_tokens) == n or any(len(a) == n for a in fields.alias_tokens):
            exact = _exact_name(page, fields, plan)
        # (a field holds the sequence only if it holds each of its tokens: the quick test first)
        if holds_all(title_set, seq) and contains_sequence(title_tokens, seq):
            add(("title-phrase", "", 1, POINTS["title-phrase"], "", ""))
        elif holds_all(alias_set, seq):
            for alias, tokens in zip(aliases, fields.alias_tokens):
                if contains_sequence(tokens, seq):
                    add(("title-phrase", alias, 1, POINTS["title-phrase"], "", ""))
                    break
        if exact is not None:
            add(("title-exact", exact[0], 1, exact_points(query), exact[1], ""))
        elif len(fields.leaf_tokens) <= n and holds_all(fields.leaf_tokens, seq) and _leaf_is(page, seq):
            add(("leaf-exact", page.stem, 1, POINTS["leaf-exact"], "file", ""))
        if holds_all(fields.heading_set, seq):
            heading = _heading_phrase(page, fields, seq)
            if heading is not None:
                add(heading)

    partial = query.partial
    if partial and not found:
        # As-you-type: "retrieval aug" is on its way to the title "Retrieval-Augmented Generation",
        # and "filt" to "Filters" more than to "Combining Filters".
        if starts_with_typed(title_tokens, seq):
            add(("prefix-phrase", "", 1, POINTS["prefix-phrase"], "", ""))
        else:
            for alias, tokens in zip(aliases, fields.alias_tokens):
                if starts_with_typed(tokens, seq):
                    add(("prefix-phrase", alias, 1, POINTS["prefix-phrase"], "", ""))
                    break

    body_counts = counts
    norm = 0.0  # BM25's length normalisation of this page's body, once it is needed
    covered: set[str] = set()  # title tokens some term matched (exactly, by stem or folded)
    for tp in plan.terms:
        term = tp.term
        in_title = term in title_set
        in_alias = term in alias_set
        in_tag = term in fields.tag_names
        count = body_counts.count(term)
        if in_title:
            covered.add(term)
            add(("title-term", term, 1, POINTS["title-term"], "", ""))
        elif in_alias:
            add(("alias-term", term, 1, POINTS["alias-term"], "", ""))
        if in_tag:
            add(("tag-term", term, 1, POINTS["tag-term"], "", ""))
        if count:
            add(("body-term", term, count, POINTS["body-term"] * min(count, BODY_CAP), "body", ""))
            if not norm:
                norm = bm25_norm(fields.lengths[4], plan.avg_body)
            bm25 = fixed(min(_BM25_MOST, BM25_SCALE * (tp.idf * count * (BM25_K1 + 1.0) / (count + norm))))
            if bm25 > 0:
                add(("body-bm25", term, count, bm25, "body", tp.stat))
        if term in fields.heading_set:
            add(("heading-term", term, 1, POINTS["heading-term"], "heading", ""))
        if not in_title and not in_alias and term in fields.path_tokens:
            if term in fields.leaf_tokens:
                add(("path-term", term, 1, PATH_LEAF, "file", ""))
            else:
                add(("path-term", term, 1, POINTS["path-term"], "path", ""))

        if not (tp.synonyms or tp.variants or tp.fuzzy):
            continue
        # A synonym occurs in a field only if its first word does, and a variant only if the
        # field holds it: most pages hold none of them, and skip the per-field look.
        synonyms = variants = ()
        tag_names = fields.tag_names
        for w in tp.synonym_heads:
            if w in body_counts or w in title_set or w in alias_set or w in tag_names:
                synonyms = tp.synonyms
                break
        tag_tokens = fields.tag_tokens
        for w in tp.variants:
            if w in body_counts or w in title_set or w in alias_set or w in tag_tokens:
                variants = tp.variants
                break
        if not (synonyms or variants or tp.fuzzy):
            continue
        matched = {f for f, hit in (("title", in_title), ("alias", in_alias), ("tag", in_tag), ("body", count)) if hit}
        for synonym in synonyms:
            for field in FIELDS:
                if field in matched:
                    continue
                if _field_has_sequence(field, synonym, page, fields, body_counts):
                    matched.add(field)
                    points = POINTS["synonym-term"] if field in ("title", "alias") else SYNONYM_MINOR
                    add(("synonym-term", term, 1, points, field, " ".join(synonym)))

        if variants:
            for field in FIELDS:
                if field in matched:
                    continue
                tokens = _field_tokens(field, fields, body_counts)
                # the body's counts test their own look-ups; a name or tag field is a few tokens
                disjoint = tokens.isdisjoint(variants) if field == "body" else variants.isdisjoint(tokens)
                if disjoint:
                    continue
                same = [t for t in tp.folded if t in tokens]
                if same:
                    points = POINTS["folded-term"] if field in ("title", "alias") else FOLDED_MINOR
                    add(("folded-term", term, len(same), points, field, same[0]))
                    if field == "title":
                        covered.update(same)
                    continue
                shared = [t for t in tp.stems if t in tokens]
                if shared:
                    add(("stem-term", term, len(shared), POINTS["stem-term"], field, shared[0]))
                    if field == "title":
                        covered.update(shared)

        if tp.fuzzy:
            fuzzy_title = [t for t in tp.fuzzy if t in title_set or t in alias_set]
            if fuzzy_title:
                covered.update(t for t in fuzzy_title if t in title_set)
                field = "title" if fuzzy_title[0] in title_set else "alias"
                add(("fuzzy-term", term, len(fuzzy_title), POINTS["fuzzy-term"], field, fuzzy_title[0]))
            else:
                # (a typo form in a tag counts as in the body, and so not as-you-type)
                fuzzy_body = [t for t in tp.fuzzy if t in body_counts or plan.body and t in fields.tag_names]
                if fuzzy_body:
                    add(("fuzzy-term", term, len(fuzzy_body), FOLDED_MINOR, "body", fuzzy_body[0]))

    if exact is None and covered:
        covered.update(t for t in query.weak if t in title_set)  # a weak term covers a title word too
    if exact is None and covered and covered.issuperset(title_set):
        add(("title-cover", "", len(title_set), POINTS["title-cover"], "", ""))

    if partial and partial not in title_set:
        for t in title_tokens:
            if t.startswith(partial):
                add(("prefix-term", partial, 1, POINTS["prefix-term"], "title", t))
                break
        else:
            if aliases and partial not in alias_set:
                alias_hit = next((t for a in fields.alias_tokens for t in a if t.startswith(partial)), None)
                if alias_hit is not None:
                    add(("prefix-term", partial, 1, PREFIX_ALIAS, "alias", alias_hit))
    return found


def body_components(found: list[Component], page: Page, plan: Plan, counts: BodyCounts | TextCounts) -> None:
    """Add to ``found`` (the page's ``head_components``) what ``page_components`` reads off where
    the terms stand in the body: section-term and body-pair (``body_most`` bounds them)."""
    add = found.append
    # the casefolded body, once body-pair or section-term needs it (read counts have it)
    inner = counts.counts if type(counts) is PostedCounts else counts
    folded_body = inner.folded if type(inner) is TextCounts else ""
    if len(plan.terms) >= SECTION_MIN_TERMS:
        held = [tp.term for tp in plan.terms if tp.term in counts]
        if len(held) >= 2 and not folded_body:
            folded_body = page.body.casefold()
        section = best_section(page, held, folded_body or None)
        if section is not None:  # each term found with the first, under its heading (via)
            heading, together = section
            for term in together[1:]:
                add(("section-term", term, len(together), POINTS["section-term"], "body", heading))
    if plan.pairs:
        body = folded_body
        for pair in plan.pairs:
            if all(t in counts for t in pair):
                body = body or page.body.casefold()
                if _phrase_pattern(pair).search(body):
                    add(("body-pair", " ".join(pair), 1, POINTS["body-pair"], "body", ""))


def body_most(plan: Plan, counts: BodyCounts | TextCounts) -> float:
    """The most ``body_components`` can add to a page with these body ``counts``: section-term
    for every held term but one, body-pair for every pair whose words the body holds."""
    most = 0.0
    if len(plan.terms) >= SECTION_MIN_TERMS:
        held = sum(1 for tp in plan.terms if tp.term in counts)
        if held >= 2:
            most += POINTS["section-term"] * (held - 1)
    for pair in plan.pairs:
        if all(t in counts for t in pair):
            most += POINTS["body-pair"]
    return most


def best_section(page: Page, terms: list[str], folded: str | None = None) -> tuple[str, tuple[str, ...]] | None:
    """The section (a heading and its text up to the next heading; ``""`` for the text before
    the first) holding the most of ``terms``, and those terms in query order: None unless one
    holds two or more. The first such section on ties.

    Each term is found as a whole word in the casefolded body (``folded``: ``page.body.casefold()``,
    given when the caller has it) and each match placed in its section by its offset: the
    sections a token of ``tokenize`` holds, without tokenizing the body (a token never spans a
    line break, and casefolding never makes or removes one)."""
    if len(terms) < 2:
        return None
    body = page.body
    if folded is None:
        folded = body.casefold()
    headings = page.headings
    if headings:
        n_lines = folded.count("\n") + 1
        cuts = sorted({h.span.start_line - page.body_line for h in headings} - {0})
        starts = [0, *(c for c in cuts if 0 < c < n_lines)]
    else:
        starts = [0]
    offsets = [0]  # where each section starts in ``folded``: after its line's break
    if len(starts) > 1:
        # line k starts after the k breaks before it: the lengths of the lines before it, plus k
        ends = list(accumulate(map(len, folded.split("\n", starts[-1]))))
        offsets += [ends[k - 1] + k for k in starts[1:]]
    offsets.append(len(folded))
    # each term's first match in each section (its text ends with a line break, which no token
    # spans: a match that starts in a section ends there)
    patterns = [(term, _word_pattern(term).search) for term in terms]
    best: tuple[str, tuple[str, ...]] | None = None
    names = {h.span.start_line - page.body_line: h.text for h in headings}
    for i, start in enumerate(starts):
        begin, end = offsets[i], offsets[i + 1]
        words = [term for term, search in patterns if search(folded, begin, end) is not None]
        if len(words) < 2 or best is not None and len(words) <= len(best[1]):
            continue
        best = (names.get(start, ""), tuple(words))
    return best


@lru_cache(maxsize=4096)
def _word_pattern(term: str) -> re.Pattern[str]:
    """``term`` (a token) as a whole word: a maximal run of letters and digits (``text._TOKEN``)."""
    word = re.escape(term)
    return re.compile(word + r"(?<![^\W_]" + word + r")(?![^\W_])")


def bm25_norm(length: int, avg: float) -> float:
    """BM25's ``k1 (1 - b + b length / avg)`` for a body of ``length`` tokens: body-bm25 is
    ``idf * tf (k1 + 1) / (tf + norm)`` (Robertson & Zaragoza 2009, eq. 3.15) times BM25_SCALE,
    capped at POINTS["body-bm25"] (``page_components`` computes it inline, the norm once per page)."""
    return BM25_K1 * (1.0 - BM25_B + BM25_B * length / avg)


_BM25_MOST = POINTS["body-bm25"]


def order_matches(matches: list[Match]) -> tuple[Match, ...]:
    """Components sorted by points desc, then channel order, then term, field and via."""
    return tuple(
        sorted(matches, key=lambda m: (-m.points, CHANNEL_RANK[m.channel], m.term, m.field, m.via))
    )


def _component_order(c: Component) -> tuple:
    return (-c[3], CHANNEL_RANK[c[0]], c[1], c[4], c[5])


def to_matches(components: list[Component]) -> tuple[Match, ...]:
    """Components as Matches, in ``order_matches`` order."""
    return tuple(Match(*c) for c in sorted(components, key=_component_order))


def candidates(vault: Vault, query: Query, plan: Plan | None = None) -> set[str]:
    """Pages that can score for the query, from the inverted indexes (never every page); with
    ``query.names_only``, only those whose names match (``name_matches``)."""
    if plan is None:
        plan = make_plan(vault, query)
    if query.names_only:
        return _named_candidates(vault, query, plan)
    return _candidates(vault, query, plan)


def _candidate_words(tp: TermPlan) -> tuple[str, ...]:
    """The words whose postings make a page a candidate for one term: the term, a synonym's
    first word, its stems, folded forms and typo corrections."""
    return (tp.term, *(synonym[0] for synonym in tp.synonyms), *tp.stems, *tp.folded, *tp.fuzzy)


def name_words(tp: TermPlan) -> set[str]:
    """The words that match one term in a page's names: the term and every word standing in for
    it (stems, folded forms, typo corrections, the words of its synonyms), as ``topk.Bounds``
    counts them."""
    words = {tp.term, *tp.stems, *tp.folded, *tp.fuzzy}
    for synonym in tp.synonyms:
        words.update(synonym)
    return words


def name_matches(vault: Vault, query: Query, plan: Plan) -> set[str]:
    """The pages whose names match the query: a query term or a word standing in for one
    (``name_words``) is a token of the page's title, an alias, a heading, its path (folders and
    file name) or a tag; or, as-you-type, a title or alias token starts with the partial term
    (one of the tokens ``candidates`` expands it to). Weak words (``Query.weak``) match no name:
    "the" is in thousands of titles. Some of these pages may not be candidates (a folder name
    is no posting)."""
    found: set[str] = set()
    indexes = (vault.name_postings, vault.tag_postings, vault.heading_postings, vault.path_postings)
    for tp in plan.terms:
        for word in name_words(tp):
            for index in indexes:
                found.update(index.get(word, ()))
    found |= _prefixed(vault, query)
    return found


def _prefixed(vault: Vault, query: Query) -> frozenset[str]:
    """As-you-type: the pages with a title or alias token the partial term expands to (the
    first ``PREFIX_TOKENS`` name tokens that start with it)."""
    return vault.prefixed(query.partial)[0] if query.partial else frozenset()


def _named_candidates(vault: Vault, query: Query, plan: Plan) -> set[str]:
    """``candidates`` & ``name_matches``, without the body postings when it can: a page holding
    a candidate word in its title, an alias or a tag is in that word's postings (each of those
    tokens is), as is a page with a name token the partial term expands to; only the rest
    (headings, folders, a synonym's later words) is checked against every candidate."""
    sure: set[str] = set()
    names, tags = vault.name_postings, vault.tag_postings
    for tp in plan.terms:
        for word in _candidate_words(tp):
            sure.update(names.get(word, ()))
            sure.update(tags.get(word, ()))
    sure |= _prefixed(vault, query)
    unsure = name_matches(vault, query, plan) - sure
    if unsure:
        # a heading's words are its body's (``postings``): a page with a candidate word in a
        # heading is a candidate ("in" at 100,000 pages: the set of its 95,000 holders, ~5 ms,
        # was made to learn that of the pages with it in a heading)
        headings = vault.heading_postings
        for tp in plan.terms:
            for word in _candidate_words(tp):
                found = headings.get(word)
                if found:
                    held = unsure.intersection(found)
                    sure |= held
                    unsure -= held
    if unsure:
        sure |= unsure & _candidates(vault, query, plan)
    return sure


def _candidates(vault: Vault, query: Query, plan: Plan) -> set[str]:
    found = set(_prefixed(vault, query))
    postings = vault.postings
    for tp in plan.terms:
        for word in _candidate_words(tp):
            found.update(postings.get(word, ()))
    return found
