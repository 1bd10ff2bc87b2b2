"""The bad-input vault: every kind of page a vault can hold that a parser could choke on, made by code.

``write_bad_vault(root, outside)`` writes it (a 50 MB page included, in one fast write) next to
two well-formed pages, plus files that are not pages and symbolic links that loop or lead to
``outside``. ``CATALOGUE`` says, for each bad page, the problem code the engine must report
(``None``: nothing is wrong, the page must simply be indexed). Tests import this module; the
helpers of ``tests/e2e/e2e_support.py`` are imported from there, never copied.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:  # e2e_support sits in tests/e2e (the test folders are not packages)
    sys.path.insert(0, str(E2E))

PWNED = "vaultlens-pwned"  # what a !!python tag would create if YAML were loaded unsafely
HUGE_BYTES = 50_000_000
ONE_LINE_BYTES = 4_900_000  # one line just under the large-page cut-off: parsed in full
N_LINKS = 10_000

GOOD = "# Good\n\nSee [[Other]], [[yaml/tab-indent]] and [[Many Links]].\n"
OTHER = "---\ntitle: Other\naliases: [Second]\n---\n# Other\n\nBack to [[Good]]. #ok\n"


def _laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nLaughing at [[Good]].\n"


@dataclass(frozen=True)
class Bad:
    """One bad page: its path, its bytes, and the problem code expected on it (None: no problem)."""

    rel: str
    data: bytes
    code: str | None
    why: str


def catalogue(outside: Path) -> tuple[Bad, ...]:
    """The bad pages (``outside`` is where a !!python tag would try to write)."""
    pwned = outside / PWNED
    one_line = b"start [[Good]] " + b"y" * (ONE_LINE_BYTES - 40) + b" [[Other]] end"
    return (
        Bad("yaml/unclosed-double.md", b'---\ntitle: "oops\ntags: [a]\n---\nBody [[Good]].\n', "frontmatter-yaml",
            "an unclosed double quote"),
        Bad("yaml/unclosed-single.md", b"---\ntitle: 'oops\n---\nBody [[Good]].\n", "frontmatter-yaml",
            "an unclosed single quote"),
        Bad("yaml/unclosed-flow.md", b"---\ntags: [a, b\nx: 1\n---\nBody [[Good]].\n", "frontmatter-yaml",
            "an unclosed flow sequence"),
        Bad("yaml/tab-indent.md", b"---\ntitle: T\n\ttags: a\n---\nBody [[Good]].\n", "frontmatter-yaml",
            "a tab where YAML wants spaces"),
        Bad("yaml/list.md", b"---\n- a\n- b\n---\nBody [[Good]].\n", "frontmatter-not-mapping",
            "a list where a mapping belongs"),
        Bad("yaml/scalar.md", b"---\njust words\n---\nBody [[Good]].\n", "frontmatter-not-mapping",
            "a plain scalar where a mapping belongs"),
        Bad("yaml/ten-thousand-keys.md",
            ("---\n" + "".join(f"key{i}: {i}\n" for i in range(10_000)) + "---\nBody [[Good]].\n").encode(),
            "frontmatter-too-large", "a 10,000-key mapping"),
        Bad("yaml/billion-laughs.md", _laughs().encode(), "frontmatter-too-large", "anchors and aliases, 9^9 strong"),
        Bad("yaml/undefined-alias.md", b"---\na: *nowhere\n---\nBody [[Good]].\n", "frontmatter-yaml",
            "an alias to no anchor"),
        Bad("yaml/python-tag.md",
            f"---\nx: !!python/object/apply:os.system ['touch {pwned}']\n"
            f"y: !!python/object/new:pathlib.Path ['{pwned}']\n---\nBody [[Good]].\n".encode(),
            "frontmatter-yaml", "a !!python tag (YAML must be loaded safely)"),
        Bad("yaml/deep.md", b"---\na: " + b"[" * 3000 + b"1" + b"]" * 3000 + b"\n---\nBody [[Good]].\n",
            "frontmatter-yaml", "3,000 nested flow sequences (more than the YAML loader's recursion)"),
        Bad("unclosed-frontmatter.md", b"---\ntitle: Never closed\nBody [[Good]].\n", "frontmatter-unclosed",
            "frontmatter without the closing ---"),
        Bad("invalid-utf8.md", b"# Caf\xe9 \xff\xfe\n\nBody [[Good]].\n", "invalid-utf8", "bytes that are not UTF-8"),
        Bad("surrogates.md", "# Lone \ud800 and \udfff\n\nBody [[Good]].\n".encode("utf-8", "surrogatepass"),
            "invalid-utf8", "UTF-16 surrogates encoded as if they were characters (CESU-8)"),
        Bad("escaped-surrogates.md", b'---\ntitle: "Esc \\ud800 aped"\n---\nBody \\ud800 \\uDFFF [[Good]].\n',
            "frontmatter-yaml", "surrogates escaped in YAML (libyaml rejects them) and in text"),
        Bad("nul.md", b"# N\x00UL\n\nBody\x00 [[Good]] #tag\x00\n", "nul-bytes", "NUL bytes"),
        Bad("huge.md", b"word [[Good]] " * (HUGE_BYTES // 14 + 1), "too-large", "a 50 MB page"),
        Bad("one-line.md", one_line, None, "one 4.9 MB line (a single 4.9 MB token in it)"),
        Bad("Many Links.md", "".join(f"[[Target {i}]] " for i in range(N_LINKS)).encode() + b"[[Good]]\n", None,
            "10,000 links on one line"),
        Bad("brackets.md",
            b"[[[[Good]]]] and [[ [[ ]] ]] and [x](Good.md [[unbalanced ]] ]] [[\n[[[[[[[[\n]]]]]]\n"
            b"[[Other|label|more]] [[#]] [[|]] [[^]] ![[ ]] [](.md) [[Good#]]\n",
            None, "unbalanced brackets and nested [[[["),
        Bad("UPPER.MD", b"# Upper\n[[Good]]\n", None, "an upper-case extension is still a page"),
    )


NOT_PAGES = {
    "notes.txt": b"[[Good]] plain text",
    "image.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "page.md.bak": b"# backup",
    ".hidden.md": b"# hidden",
    ".obsidian/workspace.md": b"# config",
}

BAD_VOCABULARY = b"---\n- automobile\n- car\n---\n"  # a list, not {groups: [...]}


def write_bad_vault(root: Path, outside: Path) -> tuple[Bad, ...]:
    """Write the bad vault at ``root`` (and a secret page in ``outside``); returns the catalogue."""
    root.mkdir(parents=True)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "Secret.md").write_text("# Secret\n\nTOPSECRET outside the vault\n", encoding="utf-8")
    bad = catalogue(outside)
    files = {"Good.md": GOOD.encode(), "Other.md": OTHER.encode(), "_vocabulary.md": BAD_VOCABULARY, **NOT_PAGES}
    files.update({b.rel: b.data for b in bad})
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if hasattr(os, "symlink"):
        os.symlink(root, root / "loop")  # a folder that contains itself
        os.symlink(root / "yaml", root / "yaml" / "again")  # a folder that contains itself, deeper
        os.symlink("self-loop.md", root / "self-loop.md")  # a link to itself (ELOOP)
        os.symlink(outside, root / "escape")  # a folder outside the vault
        os.symlink(outside / "Secret.md", root / "secret.md")  # a page outside the vault
        os.symlink(root / "Good.md", root / "Good Twin.md")  # inside the vault: a page like any other
    return bad


def root_user() -> bool:
    """Whether the tests run as root (who reads files whatever their permissions say)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0
