"""vaultlens.engine.diagnose and engine.fixes: findings with stable codes, who to re-check, quick fixes."""

from __future__ import annotations

from vaultkit import build_vault

from vaultlens.engine.diagnose import Rules, diagnose, pages_affected
from vaultlens.engine.fixes import quick_fixes
from vaultlens.engine.model import Span
from vaultlens.engine.page import parse_page

FILES = {
    "a/Index.md": "# Index\n",
    "b/Index.md": "# Index\n",
    "Target.md": "---\naliases: [Alias, Other]\n---\n# Target\n\n## Real Heading\n\nText ^blk\n",
    "Other.md": "# Other\n",
    "Broken.md": "---\ntitle: [unclosed\n---\nbody\n",
    "Source.md": (
        "[[Nowhere]] [[Index]] [[Alias]] [[Target#Real Headin]] [[Target#^nope]] [[Target#Real Heading]]\n"
        "![[pic.png]]\n"
    ),
}


def texts(path: str) -> str | None:
    return FILES.get(path)


def table(vault, path, rules=Rules()):
    return [(f.code, f.severity, f.span.start_line, f.span.start_char) for f in diagnose(vault, path, rules, texts)]


def test_findings_and_their_codes():
    vault = build_vault(FILES)
    assert table(vault, "Source.md") == [
        ("unresolved-link", "warning", 0, 0),
        ("ambiguous-link", "warning", 0, 12),
        ("alias-link", "information", 0, 22),
        ("missing-heading", "warning", 0, 32),
        ("missing-block", "warning", 0, 55),
    ]
    assert table(vault, "Broken.md") == [("frontmatter-yaml", "error", 1, 0)]
    assert [f[0] for f in table(vault, "a/Index.md")] == ["duplicate-title"]
    # the alias "Other" is another page's title: a hint on the alias in the frontmatter
    dup = [f for f in diagnose(vault, "Target.md", Rules(), texts) if f.code == "duplicate-alias"]
    assert len(dup) == 1 and dup[0].span == Span(1, 17, 1, 22) and dup[0].related[0].path == "Other.md"
    # severity is configurable, and unresolved links can be switched off
    assert table(vault, "Source.md", Rules(unresolved="error"))[0][:2] == ("unresolved-link", "error")
    assert "unresolved-link" not in [f[0] for f in table(vault, "Source.md", Rules(unresolved=None))]


def test_pages_affected_by_a_change():
    vault = build_vault(FILES)
    before = vault.pages["Target.md"]
    after = parse_page("Target.md", "# Target\n")
    vault.upsert(after)
    assert pages_affected(vault, before, after) == ("Other.md", "Source.md", "Target.md")
    assert pages_affected(vault, None, vault.pages["Other.md"]) == ("Other.md",)
    # typing that keeps the page's names, headings and blocks concerns that page alone
    edited = parse_page("Other.md", "# Other\n\nNew text with [[Nowhere]].\n")
    assert pages_affected(vault, vault.pages["Other.md"], edited) == ("Other.md",)
    new_heading = parse_page("Target.md", "# Target\n\n## Real Heading\n")
    assert "Source.md" in pages_affected(vault, vault.pages["Target.md"], new_heading)


def test_quick_fixes():
    vault = build_vault(FILES)
    line = FILES["Source.md"].split("\n")[0]

    def fixes_at(col):
        return [(f.title, f.code, [(e.path, e.new_text) for e in f.change.edits], f.change.creates)
                for f in quick_fixes(vault, "Source.md", Span(0, col, 0, col), new_page_folder="inbox", text=FILES["Source.md"])]

    assert fixes_at(3) == [
        ("Create page “Nowhere” (inbox/Nowhere.md)", "unresolved-link",
         [("inbox/Nowhere.md", "---\ntitle: Nowhere\n---\n")], ("inbox/Nowhere.md",))
    ]
    assert [f[0] for f in fixes_at(line.index("[[Index")) ] == ["Link to a/Index.md", "Link to b/Index.md"]
    assert fixes_at(line.index("[[Index") + 3)[1][2] == [("Source.md", "b/Index")]
    assert fixes_at(line.index("[[Alias") + 3)[0][2] == [("Source.md", "[[Target|Alias]]")]
    assert fixes_at(line.index("Real Headin]") + 1)[0][:3] == ("Link to heading “Real Heading”", "missing-heading", [("Source.md", "Real Heading")])
    assert fixes_at(line.index("^nope"))[0][2] == [("Source.md", "^blk")]
    assert fixes_at(line.index("[[Target#Real Heading]]") + 3) == []
    assert quick_fixes(vault, "Source.md", Span(0, 3, 0, 3), create=False) == ()
