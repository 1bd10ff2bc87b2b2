"""Memory kept per distinct word ever typed is bounded (issue 19, Tidy): a buffer whose words
keep changing (as-you-type, a hostile client) must not grow the process for ever.

What an edited page kept after its words were gone: the stem and fold memos (``engine/text.py``)
and the link-resolution memo (``engine/links.py``). Each is now a bounded, oldest-out memo; the
indexes themselves already drop a word with its last page.
"""

from __future__ import annotations

from vaultlens.engine import links, text
from vaultlens.engine.page import parse_page
from vaultlens.engine.vault import Vault


def distinct_words(start: int, n: int) -> str:
    def word(i: int) -> str:  # letters only: every i its own token
        out = ""
        while True:
            i, r = divmod(i, 26)
            out += chr(97 + r)
            if not i:
                return "w" + out

    return " ".join(word(i) for i in range(start, start + n))


def test_words_typed_and_gone_leave_bounded_memos():
    vault = Vault.from_pages([parse_page("a.md", "# A\n\nhello\n")], "/nonexistent")
    batch = 20_000
    for i in range(text.WORD_MEMO_MAX // batch + 2):  # more distinct words than the memos keep
        vault.upsert(parse_page("a.md", "# A\n\n" + distinct_words(i * batch, batch) + " café naïve"))
    vault.upsert(parse_page("a.md", "# A\n\nhello\n"))
    assert set(vault.postings) == {"a", "hello"}
    assert 0 < text.stem.cache_info().currsize <= text.WORD_MEMO_MAX
    assert text.stem.cache_info().maxsize == text.fold.cache_info().maxsize == text.WORD_MEMO_MAX < 100_000


def test_the_link_memo_is_bounded():
    vault = Vault.from_pages([parse_page("a.md", "# A\n")], "/nonexistent")
    index = next(p for p in vault.parts if isinstance(p, links.LinkIndex))
    for i in range(links.RESOLVE_MEMO_MAX + 500):
        index.resolve_memoised(f"target {i}", "a.md")
    assert len(index._memo) <= links.RESOLVE_MEMO_MAX
