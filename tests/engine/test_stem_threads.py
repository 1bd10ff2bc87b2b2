"""Stemming from several threads at once: the language server indexes two workspace folders side
by side, and a snowball stemmer shared between threads corrupted the word it was working on
(IndexError inside the stemmer: the vault's index failed, and a search of it found nothing)."""

from __future__ import annotations

import sys
import threading

from vaultlens.engine.text import stem

WORDS = [f"{root}{suffix}" for root in ("relat", "condition", "generat", "organiz", "hope", "digit", "nation")
         for suffix in ("ional", "ization", "fulness", "iveness", "ement", "ating", "ness", "ly", "s", "")]


def test_threads_stem_as_one_thread_does():
    stem_word = stem.__wrapped__  # past the memo, so every call runs the stemmer
    expected = {word: stem_word(word) for word in WORDS}
    wrong: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(300):
                for word in WORDS:
                    got = stem_word(word)
                    if got != expected[word]:
                        wrong.append((word, got))
        except BaseException as exc:  # noqa: BLE001 - what the old shared stemmer raised
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(old)
    assert not errors and not wrong[:5], (errors[:3], wrong[:5])
