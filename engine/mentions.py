"""Unlinked mentions and link suggestions: page text that names another page without linking it.

``MentionIndex`` holds every page's title and aliases as phrases (casefolded word sequences,
found by their first word), kept current one page at a time by ``Vault.upsert``/``remove``
once it exists (``mention_index`` builds it on first use, from the titles and aliases alone).

``page_mentions`` scans one page's body for phrases naming other pages; ``suggestions`` keeps
the first occurrence per target (what an editor underlines while you write);
``unlinked_mentions`` finds every page mentioning one page (its "unlinked mentions"). The rules:

- a phrase matches whole words, case-insensitively, the words separated as in the name (any
  run of spaces for a space, the same punctuation otherwise); at overlapping matches the
  longest wins, then the earliest;
- never inside code (fenced, indented, inline), links (wiki, embed, Markdown, reference),
  URLs, HTML tags, ``#tags``, block ids, ``%%comments%%``, math, headings or frontmatter;
- never the page's own name, and never a name the page already links to anywhere (per page:
  one link to a page is enough, as Obsidian's unlinked mentions leave out linking pages; when
  one name fits several pages and the page links one of them, the name counts as linked);
- never a capitalised match that is part of a longer capitalised name (``Google Analytics``
  is not the page ``Analytics``; ``Markdown Preview Enhanced`` not ``Markdown Preview``);
- never a table's header row (column names, not prose);
- precision (``plausible``): a single-word name must be a real name, not a common word that
  happens to be a title. It is taken when it has a distinctive shape (an acronym, an inner
  capital, letters and digits: ``RAG``, ``QuickAdd``, ``GPT4``), is written exactly so and
  is not everywhere in the vault (on at most ``SHAPED_SHARE`` of the pages, or ``RARE_MIN``,
  not counting the pages linking to it: ``GitHub`` in a vault about a GitHub tool is no
  reference); or when it is a capitalised plain word written capitalised, rare in this vault
  (on at most ``RARE_SHARE`` of the pages, or ``RARE_MIN``, at most ``RARE_CAP``, the linking
  pages not counted). A
  lower-case single-word name (most often a file name: ``migration``) never matches alone. Function words, generic page names
  (``index``, ``readme``, ``todo``) and names shorter than ``MIN_CHARS`` never match alone. A
  name of several words must hold at least one word that is not a function word.

When a phrase names several pages, ``targets`` lists them all: first the page a ``[[phrase]]``
link would resolve to, then by how many pages link to each (the link graph), title, path.

Positions are 0-based lines and UTF-16 columns of the whole document.
Must not: edit text (``engine.edits.link_mentions`` plans the edit); know any protocol.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .diagnose import Finding
from .model import Page, Span
from .text import utf16_col

MIN_CHARS = 3  # a single-word name shorter than this never matches (2-letter acronyms excepted)
RARE_SHARE = 0.01  # a plain single word matches when on at most this share of pages ...
RARE_MIN = 3  # ... or at most this many (whichever is larger), linking pages not counted
SHAPED_SHARE = 0.05  # the same for a name of distinctive shape (RAG, QuickAdd): a little more often
RARE_CAP = 50  # and never more pages than this, however large the vault (x 4 for a distinctive shape)
SUGGESTION_CODE = "link-suggestion"
FOUND_MEMO = 256  # unlinked_mentions answers remembered per vault generation, at most

FUNCTION_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing done down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or
other our out over own same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you your
yes new old see use used using via get got make made one two three first last next page pages note notes
""".split())
GENERIC_NAMES = frozenset(
    "index readme todo todos inbox home untitled draft drafts misc template templates test tests example examples "
    "archive attachments assets daily journal changelog summary overview introduction intro start help faq "
    "settings config".split()
)

_WORD = re.compile(r"[^\W_]+")
_FENCE = re.compile(r"^\s*(?:>\s?)*(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(?:>\s?)*#{1,6}(?:\s|$)")
_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1)[^\n])*?\1")
_MASK = re.compile(
    r"!?\[\[[^\]\n]*\]\]"  # wikilinks and embeds
    r"|!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\](?:\([^)\n]*\)|\[[^\]\n]*\])"  # Markdown and reference links
    r"|\[![^\]\n]*\]"  # a callout's [!type]
    r"|<[^>\n]*>"  # HTML tags, autolinks
    r"|\b[A-Za-z][A-Za-z0-9+.\-]*://\S+|\bwww\.\S+"  # bare URLs
    r"|(?<![\w&])#[^\s#\[\]()]+"  # tags
    r"|(?:^|\s)\^[A-Za-z0-9\-]+\s*$"  # a block id
    r"|%%.*?(?:%%|$)"  # Obsidian comments (one line)
    r"|\$\$?[^$\n]+\$\$?"  # math
)
_BEFORE_BAD = frozenset("_/\\.@$")  # a word after these is part of a path, an address, a name
_AFTER_BAD = frozenset("_/\\")


@dataclass(frozen=True, slots=True)
class Phrase:
    """A page name as the scanner matches it: casefolded ``words``, the ``seps`` between them
    (normalised: a run of whitespace is one space), the ``name`` as written, the page, and
    whether it is the ``title`` or an ``alias``."""

    words: tuple[str, ...]
    seps: tuple[str, ...]
    name: str
    path: str
    via: str


@dataclass(frozen=True, slots=True)
class Mention:
    """A phrase in page ``path`` at ``span`` (UTF-16), ``text`` as written there, naming the
    pages ``targets`` (ranked: see the module) by their ``name`` (title or alias)."""

    path: str
    span: Span
    text: str
    targets: tuple[str, ...]
    name: str
    via: str

    def to_json(self, line_text: str | None = None) -> dict:
        """The wire form (1-based line and column, as ``links`` gives them)."""
        out = {"file": self.path, "line": self.span.start_line + 1, "column": self.span.start_char + 1,
               "text": self.text, "name": self.name, "via": self.via}
        if line_text is not None:
            out["context"] = line_text
        return out


def _split_name(name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A name's casefolded words and the separators between them; None for a name that does
    not start and end with a word (``C++``, ``(draft)``), which whole-word matching cannot find."""
    name = name.strip()
    words = list(_WORD.finditer(name))
    if not words or words[0].start() != 0 or words[-1].end() != len(name):
        return None
    seps = tuple(_norm_sep(name[a.end():b.start()]) for a, b in zip(words, words[1:]))
    if any(len(sep) > 3 for sep in seps):
        return None
    return tuple(w.group(0).casefold() for w in words), seps


def _norm_sep(sep: str) -> str:
    return " ".join(sep.split()) if sep.strip() else " "


def page_phrases(page: Page) -> tuple[Phrase, ...]:
    """The phrases naming ``page``: its title and each alias (distinct, splittable)."""
    out: list[Phrase] = []
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for name, via in ((page.title, "title"), *((a, "alias") for a in page.aliases)):
        split = _split_name(name)
        if split is None or split in seen:
            continue
        seen.add(split)
        out.append(Phrase(split[0], split[1], name.strip(), page.path, via))
    return tuple(out)


class MentionIndex:
    """Every page's phrases, by their first two words: ``first[word][second]`` lists the
    phrases starting with those words (``second`` is ``""`` for one-word phrases), so a word
    of text looks at the phrases that can start there, not every phrase sharing its first word."""

    def __init__(self, pages: Iterable[Page] = ()) -> None:
        self.first: dict[str, dict[str, list[Phrase]]] = {}
        self.by_path: dict[str, tuple[Phrase, ...]] = {}
        self.generation = -1  # the vault generation ``rare`` holds answers for
        self.rare: dict[tuple[str, str, float], bool] = {}
        self.found: dict[str, tuple[Mention, ...]] = {}  # unlinked_mentions answers of that generation
        for page in pages:
            self.upsert(None, page)

    def upsert(self, old: Page | None, page: Page) -> None:
        """Replace the phrases of ``page`` (``old`` is what it was); O(its names)."""
        if old is not None:
            if (old.title, old.aliases) == (page.title, page.aliases):
                return
            self.remove(old)
        phrases = page_phrases(page)
        if phrases:
            self.by_path[page.path] = phrases
            for phrase in phrases:
                second = phrase.words[1] if len(phrase.words) > 1 else ""
                self.first.setdefault(phrase.words[0], {}).setdefault(second, []).append(phrase)

    def remove(self, page: Page) -> None:
        """Drop the phrases of ``page``."""
        for phrase in self.by_path.pop(page.path, ()):
            second = phrase.words[1] if len(phrase.words) > 1 else ""
            by_second = self.first.get(phrase.words[0], {})
            found = by_second.get(second)
            if found is not None:
                found[:] = [p for p in found if p.path != page.path]
                if not found:
                    del by_second[second]
                if not by_second:
                    del self.first[phrase.words[0]]


def mention_index(vault) -> MentionIndex:
    """The vault's phrase index, built on first use and then kept by ``Vault.upsert``/``remove``."""
    index = vault.mention_index
    if index is None:
        index = vault.mention_index = MentionIndex(vault.pages[p] for p in sorted(vault.pages))
    return index


# --- precision ---------------------------------------------------------------------------


def _distinct_shape(word: str) -> bool:
    """An acronym (``RAG``), an inner capital (``QuickAdd``) or letters with digits (``GPT4``)."""
    if any(c.isupper() for c in word[1:]):
        return True
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def _rare(vault, word: str, target: str, share: float) -> bool:
    """Whether ``word`` is on few of the vault's pages (at most ``share`` of them, at least
    ``RARE_MIN``, at most ``RARE_CAP``), not counting the target and the pages that link to it
    (there the word is a name already). Remembered per vault generation (``MentionIndex.rare``)."""
    index = mention_index(vault)
    if index.generation != vault.generation:
        index.generation, index.rare, index.found = vault.generation, {}, {}
    key = (word, target, share)
    found = index.rare.get(key)
    if found is None:
        holders = vault.postings.get(word, ())
        cap = RARE_CAP if share == RARE_SHARE else 4 * RARE_CAP
        limit = min(cap, max(RARE_MIN, int(share * len(vault.pages))))
        if len(holders) <= limit + 1:
            found = True
        else:
            linking = vault.linking_pages(target)
            found = sum(1 for p in holders if p != target and p not in linking) <= limit
        index.rare[key] = found
    return found


def plausible(vault, phrase: Phrase, written: str) -> bool:
    """Whether ``written`` (the text that matched ``phrase``) is a real reference to its page
    by the rules of the module docstring."""
    if len(phrase.words) > 1:
        return any(w not in FUNCTION_WORDS for w in phrase.words) and sum(map(len, phrase.words)) >= 5
    word = phrase.words[0]
    name = phrase.name
    if word in FUNCTION_WORDS or word in GENERIC_NAMES:
        return False
    if len(word) < MIN_CHARS:
        return len(word) == 2 and name.isupper() and written == name
    if _distinct_shape(name):
        return written == name and _rare(vault, word, phrase.path, SHAPED_SHARE)
    if not name[:1].isupper() or not written[:1].isupper():
        return False  # a lower-case name is a file name, and a lower-case word a common one
    return _rare(vault, word, phrase.path, RARE_SHARE)


# --- scanning ----------------------------------------------------------------------------


def _prose_lines(page: Page, text: str | None = None, wanted=None) -> Iterable[tuple[int, str, str]]:
    """(document line, the line, the line with everything that is not prose blanked) for every
    body line that can hold a mention; columns are kept (blanks replace what is masked).
    ``wanted``: a test a line must pass to be looked at (the rest are only followed for fences)."""
    body = page.body if text is None else text
    fence: str | None = None
    prev_blank = True
    in_list = False
    lineno = page.body_line - 1
    lines = body.split("\n")
    for i, line in enumerate(lines):
        lineno += 1
        line = line.rstrip("\r")
        fm = _FENCE.match(line) if ("`" in line or "~" in line) else None
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence):
                fence = None
            continue
        if fm:
            fence = fm.group(1)
            continue
        if not line.strip():
            prev_blank = True
            continue
        if _LIST_ITEM.match(line):
            in_list = True
        elif prev_blank and not line[0].isspace():
            in_list = False
        if (line.startswith("    ") or line.startswith("\t")) and prev_blank and not in_list:
            continue  # indented code (stays code until a blank line ends it: good enough)
        prev_blank = False
        if _HEADING.match(line) or _REF_DEF.match(line):
            continue
        if wanted is not None and not wanted(line):
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt.strip() and _SETEXT.match(nxt) and not _LIST_ITEM.match(line):
            continue  # a setext heading's text
        if "|" in line and "-" in nxt and _TABLE_RULE.match(nxt):
            continue  # a table's header row: column names, not prose
        masked = line
        if "`" in masked:
            masked = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), masked)
        masked = _MASK.sub(lambda m: " " * len(m.group(0)), masked)
        yield lineno, line, masked


def _matches(index: MentionIndex, masked: str) -> list[tuple[int, int, Phrase]]:
    """Every phrase occurrence in a masked line: (start, end, phrase), code points."""
    first = index.first
    words = [(m.start(), m.end(), m.group(0).casefold()) for m in _WORD.finditer(masked)]
    found: list[tuple[int, int, Phrase]] = []
    count = len(words)
    for i, (start, end, word) in enumerate(words):
        by_second = first.get(word)
        if not by_second:
            continue
        if start > 0 and (masked[start - 1] in _BEFORE_BAD
                          or masked[start - 1] == "-" and start > 1 and masked[start - 2].isalnum()):
            continue  # part of a path, an address, or a compound (non-recurring)
        phrases = by_second.get("", ())
        if i + 1 < count:
            longer = by_second.get(words[i + 1][2])
            if longer:
                phrases = [*phrases, *longer]
        for phrase in phrases:
            n = len(phrase.words)
            if i + n > len(words):
                continue
            ok = True
            for k in range(1, n):
                ws, we, w = words[i + k]
                if w != phrase.words[k] or _norm_sep(masked[words[i + k - 1][1]:ws]) != phrase.seps[k - 1]:
                    ok = False
                    break
            if not ok:
                continue
            stop = words[i + n - 1][1]
            after = masked[stop:stop + 2]
            if after[:1] in _AFTER_BAD or (after[:1] in ".-" and after[1:2].isalnum()):
                continue
            found.append((start, stop, phrase))
    return found


def _longest(found: list[tuple[int, int, Phrase]]) -> list[tuple[int, int, list[Phrase]]]:
    """Non-overlapping occurrences: the longest first, then the earliest; the phrases of one
    span (several pages of one name) kept together."""
    spans: dict[tuple[int, int], list[Phrase]] = {}
    for start, end, phrase in found:
        spans.setdefault((start, end), []).append(phrase)
    taken: list[tuple[int, int, list[Phrase]]] = []
    for (start, end) in sorted(spans, key=lambda se: (se[0] - se[1], se[0])):
        if all(end <= a or start >= b for a, b, _ in taken):
            taken.append((start, end, spans[(start, end)]))
    taken.sort(key=lambda t: t[0])
    return taken


_PREV_WORD = re.compile(r"([^\W_][\w'’]*) $")
_NEXT_WORD = re.compile(r" ([^\W_]+)")


def _in_longer_name(masked: str, start: int, end: int) -> bool:
    """Whether a capitalised match is one part of a longer capitalised name (``Google
    Analytics``, ``Markdown Preview Enhanced``): a capitalised word right before it (not at a
    sentence's start) or right after it, one space away."""
    before = _PREV_WORD.search(masked, 0, start)
    if before and before.group(1)[:1].isupper() and before.start() > 0:
        lead = masked[:before.start()].rstrip()
        if lead and lead[-1] not in ".!?:;-*>|(\"“":
            return True
    after = _NEXT_WORD.match(masked, end)
    return bool(after and after.group(1)[:1].isupper())


def rank_targets(vault, name: str, paths: Iterable[str]) -> tuple[str, ...]:
    """The pages one name fits, best first: the one ``[[name]]`` resolves to, then by links in."""
    paths = set(paths)
    first = vault.resolve(name).path
    pages = vault.pages
    return tuple(sorted(paths, key=lambda p: (p != first, -vault.linker_count(pages[p]), pages[p].title.casefold(), p)))


def page_mentions(vault, path: str, *, only: str | None = None, text: str | None = None) -> list[Mention]:
    """Every phrase in page ``path`` naming another page it does not link to, in page order.

    ``only``: keep the mentions that name that page. ``text``: the page's body to scan (default
    the indexed body; it must be what the page was parsed from)."""
    page = vault.pages.get(path)
    if page is None:
        return []
    index = mention_index(vault)
    linked = vault.outlink_paths(path)
    linked.add(path)
    if only in linked:
        return []
    wanted = None
    if only is not None:  # the lines that hold one of its names (a match never spans lines)
        tests = [_phrase_pattern(p).search for p in index.by_path.get(only, ())]

        def wanted(line: str) -> bool:
            low = line.casefold()
            return any(test(low) for test in tests)
    out: list[Mention] = []
    for lineno, line, masked in _prose_lines(page, text, wanted):
        found = _matches(index, masked)
        if not found:
            continue
        wide = not line.isascii()
        for start, end, phrases in _longest(found):
            if any(p.path in linked for p in phrases):
                continue  # the page's own name, or a name the page links already
            written = line[start:end]
            if written[:1].isupper() and _in_longer_name(masked, start, end):
                continue
            fits = [p for p in phrases if plausible(vault, p, written)]
            if only is not None:
                fits = [p for p in fits if p.path == only]
            if not fits:
                continue
            targets = rank_targets(vault, written, {p.path for p in fits})
            best = next(p for p in fits if p.path == targets[0])
            a, b = (utf16_col(line, start), utf16_col(line, end)) if wide else (start, end)
            out.append(Mention(path, Span(lineno, a, lineno, b), written, targets, best.name, best.via))
    return out


def suggestions(vault, path: str) -> list[Mention]:
    """The link suggestions of a page: the first mention of each target page, in page order."""
    seen: set[str] = set()
    out = []
    for mention in page_mentions(vault, path):
        if mention.targets[0] in seen:
            continue
        seen.update(mention.targets)
        out.append(mention)
    return out


def suggestion_findings(vault, path: str, severity: str) -> tuple[Finding, ...]:
    """``suggestions`` as findings (code ``link-suggestion``) at ``severity``."""
    out = []
    for m in suggestions(vault, path):
        title = vault.pages[m.targets[0]].title
        more = f" (or {len(m.targets) - 1} other page{'s' if len(m.targets) > 2 else ''})" if len(m.targets) > 1 else ""
        out.append(Finding(SUGGESTION_CODE, severity, f"“{m.text}” names the page “{title}”{more}: link it?", m.span))
    return tuple(out)


def _may_match(vault, phrase: Phrase) -> bool:
    """Whether any text could be a plausible mention by ``phrase`` (decided on the name alone:
    a single word that is too common in the vault never is, whatever is written)."""
    if len(phrase.words) > 1:
        return plausible(vault, phrase, phrase.name)
    word, name = phrase.words[0], phrase.name
    if word in FUNCTION_WORDS or word in GENERIC_NAMES or (len(word) < MIN_CHARS and not name.isupper()):
        return False
    if len(word) < MIN_CHARS:
        return True
    if _distinct_shape(name):
        return _rare(vault, word, phrase.path, SHAPED_SHARE)
    return name[:1].isupper() and _rare(vault, word, phrase.path, RARE_SHARE)


def _phrase_pattern(phrase: Phrase) -> re.Pattern[str]:
    """A quick test of casefolded text for the phrase's words in order (what the scan then
    checks properly). The first word leads as a literal and the character before it is checked
    by a look-behind placed after it, so the regular-expression engine scans for that literal (a
    leading look-behind is tried at every position: hovering a daily note's link spent 100 ms
    here at 10,000 pages)."""
    first = re.escape(phrase.words[0])
    parts = [first, r"(?<![^\W_]" + first + ")"]
    for word, sep in zip(phrase.words[1:], phrase.seps):
        parts.append(r"\s+" if sep == " " else r"\s*" + re.escape(sep.strip()) + r"\s*")
        parts.append(re.escape(word))
    return re.compile("".join(parts) + r"(?![^\W_])")


def candidate_pages(vault, target: str) -> list[str]:
    """The pages that may mention ``target``: those holding every word of one of its names
    that can match at all (from the search postings), whose text has the name's words in
    order, less the target and the pages linking to it; sorted."""
    index = mention_index(vault)
    linking = vault.linking_pages(target)
    found: set[str] = set()
    for phrase in index.by_path.get(target, ()):
        if not _may_match(vault, phrase):
            continue
        holders: set[str] | None = None
        for word in sorted(set(phrase.words), key=lambda w: len(vault.postings.get(w, ()))):
            got = vault.postings.get(word, ())
            holders = set(got) if holders is None else holders.intersection(got)
            if not holders:
                break
        holders = (holders or set()) - linking - found
        holders.discard(target)
        if holders:
            test = _phrase_pattern(phrase).search
            found.update(p for p in holders if test(vault.pages[p].body.casefold()))
    return sorted(found)


def unlinked_mentions(vault, target: str) -> list[Mention]:
    """Every mention of page ``target`` in the other pages that do not link to it, by path and
    position. Remembered until the vault changes (the lens, the hover and the code actions of
    one page ask for the same list)."""
    index = mention_index(vault)
    if index.generation != vault.generation:
        index.generation, index.rare, index.found = vault.generation, {}, {}
    found = index.found.get(target)
    if found is None:
        out: list[Mention] = []
        for path in candidate_pages(vault, target):
            out += page_mentions(vault, path, only=target)
        if len(index.found) > FOUND_MEMO:
            index.found.clear()
        found = index.found[target] = tuple(out)
    return list(found)


def mention_at(vault, path: str, line: int, char: int, end_line: int | None = None,
               end_char: int | None = None) -> list[Mention]:
    """The mentions of page ``path`` that a position (or range) touches."""
    end_line = line if end_line is None else end_line
    end_char = char if end_char is None else end_char
    out = []
    for m in page_mentions(vault, path):
        s = m.span
        if (s.start_line, s.start_char) <= (end_line, end_char) and (line, char) <= (s.end_line, s.end_char):
            out.append(m)
    return out


def mentions_payload(vault, name: str, limit: int = 100) -> dict:
    """The ``mentions`` operation's result: the page a name names and its unlinked mentions."""
    from .render import vault_name
    from .retrieve import page_choice, with_choice

    page, candidates = page_choice(vault, name)
    found = unlinked_mentions(vault, page.path)
    out = []
    for m in found[:limit]:
        source = vault.pages[m.path]
        lines = source.body.split("\n")
        k = m.span.start_line - source.body_line
        out.append(m.to_json(lines[k].strip() if 0 <= k < len(lines) else ""))
    return with_choice(vault, {"command": "mentions", "vault": vault_name(vault), "page": page.path,
                               "title": page.title, "mentions": out, "count": len(found)}, candidates)
