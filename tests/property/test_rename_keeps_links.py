"""Property: renaming or moving any page of any small vault keeps every link that resolved
resolving to the same page, with its kind, label and block, and changes nothing but links."""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

from test_edits import apply, check_kept  # noqa: E402  (the engine tests' tiny editor)

from vaultlens.engine.edits import EditError, move_pages, rename_page  # noqa: E402
from vaultlens.engine.edits import Change  # noqa: E402
from vaultkit import build_vault  # noqa: E402

NAMES = ["Alpha", "Beta", "gamma", "Delta Two", "é", "Index"]
FOLDERS = ["", "a", "a/b", "c"]


def _link(kind: str, source: str, target: str, label: bool, anchor: bool) -> str:
    stem = target[:-3].rsplit("/", 1)[-1]
    if kind == "md":
        rel = posixpath.relpath(target, posixpath.dirname(source) or ".").replace(" ", "%20")
        return f"[x]({rel}{'#top' if anchor else ''})"
    if kind == "rel":
        rel = posixpath.relpath(target[:-3], posixpath.dirname(source) or ".")
        text = rel if rel.startswith("../") else "./" + rel
    else:
        text = {"stem": stem, "path": target[:-3], "ext": stem + ".md", "embed": stem}[kind]
    bang = "!" if kind == "embed" else ""
    return f"{bang}[[{text}{'#Top' if anchor else ''}{'|label' if label else ''}]]"


@st.composite
def vaults(draw):
    paths = draw(
        st.lists(
            st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES)).map(
                lambda fn: posixpath.join(fn[0], fn[1] + ".md")
            ),
            min_size=2,
            max_size=6,
            unique_by=lambda p: p.casefold(),
        )
    )
    files = {}
    for path in paths:
        links = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["stem", "path", "ext", "md", "rel", "embed"]),
                    st.sampled_from(paths),
                    st.booleans(),
                    st.booleans(),
                ),
                max_size=4,
            )
        )
        body = " ".join(_link(kind, path, target, label, anchor) for kind, target, label, anchor in links)
        related = draw(st.sampled_from([None, *paths]))
        front = f'---\nrelated:\n  - "[[{related[:-3].rsplit("/", 1)[-1]}]]"\n---\n' if related else ""
        files[path] = f"{front}# Top\n\nText {body} end.\n"
    return files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vaults(), st.data())
def test_rename_keeps_links(files, data):
    vault = build_vault(files)
    path = data.draw(st.sampled_from(sorted(files)))
    new_name = data.draw(st.sampled_from(["Renamed", "Alpha", "gamma", "New (1)", "Ünï"]))
    try:
        change = rename_page(vault, path, new_name, files.get, name="stem")
    except EditError as exc:
        assert "already exists" in str(exc)
        return
    new_path = change.renames[0][1] if change.renames else path
    after = check_kept(files, change, {path: new_path})
    for rel, text in files.items():  # nothing but links (and the renamed title heading) changed
        strip = lambda t: re.sub(r"\[\[[^\]]*\]\]|\]\([^)]*\)|^# .*$", "", t, flags=re.M)  # noqa: E731
        assert strip(after[{path: new_path}.get(rel, rel)]) == strip(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vaults(), st.data())
def test_moves_keep_links(files, data):
    vault = build_vault(files)
    path = data.draw(st.sampled_from(sorted(files)))
    folder = data.draw(st.sampled_from(FOLDERS + ["z/y"]))
    new_path = posixpath.join(folder, posixpath.basename(path))
    if new_path.casefold() in {p.casefold() for p in files} and new_path != path:
        return
    change = move_pages(vault, {path: new_path}, files.get)
    check_kept(files, Change(change.creates, change.edits, ((path, new_path),) if new_path != path else ()), {path: new_path})
    assert apply  # the editor used above
