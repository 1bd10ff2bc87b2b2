"""Quick fixes for the findings on a range of a page: create the missing page, pick one of the
pages an ambiguous link matches, link by the real name instead of an alias, or point a
broken anchor at the closest existing heading or block.

Each fix carries the finding code it answers and the link's span (so an editor can attach it
to the diagnostic it shows) and a ``Change``; nothing is applied here.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import dailynotes
from .edits import Change, alias_fix, anchor_fixes, create_page, relink_to
from .model import Link, Span
from .navigate import find_block, find_heading
from .scan import OutsideVault, confined_path
from .vault import Vault


@dataclass(frozen=True, slots=True)
class Fix:
    """One code action: a title for the menu, the finding ``code`` and ``span`` it fixes, the
    change, and whether it is the obvious choice (``preferred``)."""

    title: str
    code: str
    span: Span
    change: Change
    preferred: bool = False


def _overlaps(a: Span, b: Span) -> bool:
    return (a.start_line, a.start_char) <= (b.end_line, b.end_char) and (b.start_line, b.start_char) <= (
        a.end_line,
        a.end_char,
    )


def quick_fixes(
    vault: Vault,
    path: str,
    span: Span,
    *,
    new_page_folder: str = "",
    text: str | None = None,
    create: bool = True,
    daily: tuple[str, str] | None = None,
) -> tuple[Fix, ...]:
    """The fixes for the links of page ``path`` that touch ``span``, in link order.

    ``new_page_folder`` is where "Create page" puts a page named by a bare link; ``create``
    False leaves those fixes out (for editors that cannot create files). ``daily`` is the
    daily-note (format, folder): a bare link named like a daily note (``[[2024-07-14]]``) is
    created in the daily-note folder instead.
    """
    page = vault.get(path)
    if page is None:
        return ()
    out: list[Fix] = []
    for link in (*page.edges, *page.links):
        if not _overlaps(link.span, span):
            continue
        res = vault.resolve_link(link, path)
        if res.attachment:
            continue
        if res.path is None:
            made = create_page(vault, path, link, _folder_for(link, new_page_folder, daily)) if create else None
            if made is not None and vault.root and not _resolves_inside(vault.root, made[0]):
                made = None  # its folder is a symbolic link out of the vault: never offered
            if made is not None:
                new_path, change = made
                out.append(Fix(f"Create page “{link.target}” ({new_path})", "unresolved-link", link.span, change, True))
            continue
        if res.ambiguous:
            for candidate in res.candidates:
                edit = relink_to(vault, path, link, candidate)
                out.append(Fix(f"Link to {candidate}", "ambiguous-link", link.span, Change(edits=(edit,))))
        if res.via == "alias":
            edit = alias_fix(vault, path, link, res.path)
            out.append(
                Fix(f"Link to “{vault.pages[res.path].title}” by its name", "alias-link", link.span, Change(edits=(edit,)), True)
            )
        target = vault.pages[res.path]
        broken_heading = link.heading is not None and find_heading(target, link.heading) is None
        broken_block = link.block is not None and find_block(target, link.block) is None
        if broken_heading or broken_block:
            code = "missing-heading" if broken_heading else "missing-block"
            for name, edit in anchor_fixes(vault, path, link, res.path, text):
                out.append(Fix(f"Link to {'heading ' if broken_heading else 'block '}“{name}”", code, link.span, Change(edits=(edit,))))
    return tuple(out)


def _folder_for(link: Link, folder: str, daily: tuple[str, str] | None) -> str:
    """The folder "Create page" uses for a bare link: the daily-note folder for a daily note."""
    if daily is None or "/" in link.target.strip("/"):
        return folder
    fmt, daily_folder = daily
    if dailynotes.parse_date(link.target.strip(), fmt or dailynotes.DEFAULT_FORMAT) is None:
        return folder
    return daily_folder


def _resolves_inside(root: str, rel: str) -> bool:
    """Whether ``rel`` lands inside the vault once every symbolic link on the way is followed
    (where it resolves, not what its text says)."""
    try:
        confined_path(root, rel)
    except OutsideVault:
        return False
    return True
