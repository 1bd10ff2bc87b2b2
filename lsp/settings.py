"""Settings: frozen, every field defaulted, read from ``.vaultlens.toml`` and the client.

Precedence, lowest first: defaults, the vault's ``.vaultlens.toml``, ``initializationOptions``,
then ``workspace/configuration`` (section ``vaultlens``). Keys may be camelCase or snake_case,
flat (``linkStyle``) or in sections (``completion.linkStyle``). A bad value is reported as a
warning and the previous value kept. ``.obsidian/app.json`` supplies the new-note and
attachment folders.

Where vaultlens writes (``cache.location``) comes from the user only: ``initializationOptions``,
``workspace/configuration`` or ``VAULTLENS_CACHE_DIR``; a vault's ``.vaultlens.toml`` is someone
else's file (a cloned vault), so the key is ignored there, with a warning.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, replace
from typing import Any

from vaultlens.engine.hints import check_threshold
from vaultlens.engine.scan import read_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SETTINGS_FILE = ".vaultlens.toml"
OBSIDIAN_APP_FILE = ".obsidian/app.json"  # Obsidian's new-note and attachment folders (vault-relative)
OBSIDIAN_DAILY_FILE = ".obsidian/daily-notes.json"  # Obsidian's daily-note format and folder
LINK_STYLES = ("auto", "title", "filename", "path")
LINK_ORDERS = ("auto", "target-first", "label-first")
SEVERITIES = ("error", "warning", "information", "hint", "off")
DIAGNOSTIC_SCOPES = ("vault", "open")
SUGGESTION_SEVERITIES = ("hint", "information", "off")  # link suggestions: never louder than information
LINK_TITLE_HINTS = ("off", "slugs", "all")  # engine.annotate.LINK_TITLE_MODES
EXTRACT_LEAVES = ("link", "embed")


@dataclass(frozen=True)
class Settings:
    """Every setting the server reads; see README.md "Settings" for each key."""

    exclude: tuple[str, ...] = ()
    limit: int = 50
    link_style: str = "auto"
    link_order: str = "auto"
    hover_related: bool = True
    new_note_folder: str = ""
    attachment_folder: str = ""
    diagnostics_enabled: bool = True
    diagnostics_scope: str = "vault"  # "vault": every page after the scan; "open": open pages only
    unresolved_severity: str = "warning"  # or "error", "information", "hint", "off"
    code_lens_enabled: bool = True
    link_suggestions: str = "hint"  # severity of link-suggestion diagnostics in open pages, or "off"
    new_page_folder: str | None = None  # None: the .obsidian/app.json new-note folder
    cache_enabled: bool = True  # the persistent index of parsed pages (engine/cache.py)
    cache_location: str = "user"  # "user" (user cache folder) or a folder; never from the vault's file
    daily_note_format: str = ""  # moment.js format; "": .obsidian/daily-notes.json's, else YYYY-MM-DD
    daily_note_folder: str = ""  # "": .obsidian/daily-notes.json's folder, else the vault's top
    obsidian_daily_format: str = ""  # read from .obsidian/daily-notes.json, not a user key
    obsidian_daily_folder: str = ""

    @property
    def daily_note(self) -> tuple[str, str]:
        """The daily notes' (moment.js format, folder): the settings, else Obsidian's, else ``YYYY-MM-DD`` at the top."""
        fmt = self.daily_note_format or self.obsidian_daily_format or "YYYY-MM-DD"
        return fmt, self.daily_note_folder or self.obsidian_daily_folder
    # editing features (issue 21): inlay hints, semantic tokens, extract to a new page
    inlay_heading_backlinks: bool = True  # "N backlinks" after headings other pages link to
    inlay_link_titles: str = "slugs"  # the title after a slug link: "slugs", "all" or "off"
    semantic_tokens_enabled: bool = True
    extract_leaves: str = "link"  # what "Extract to a new page" leaves behind: "link" or "embed"
    # wiki/search's hints: sufficient from this max_score on (None: the vault file's, else 0.5)
    hints_threshold: float | None = None

    @property
    def create_folder(self) -> str:
        """Where "Create page" puts new pages: ``newPageFolder``, else Obsidian's new-note folder."""
        return self.new_note_folder if self.new_page_folder is None else self.new_page_folder


# Accepted spellings (after snake-casing and dropping section dots) for each field.
_ALIASES = {
    "exclude": "exclude",
    "excluded": "exclude",
    "limit": "limit",
    "completion_limit": "limit",
    "symbol_limit": "limit",
    "result_limit": "limit",
    "link_style": "link_style",
    "completion_link_style": "link_style",
    "link_order": "link_order",
    "links_order": "link_order",
    "hover_related": "hover_related",
    "hover_relations": "hover_related",
    "new_note_folder": "new_note_folder",
    "attachment_folder": "attachment_folder",
    "diagnostics_enabled": "diagnostics_enabled",
    "diagnostics": "diagnostics_enabled",
    "diagnostics_scope": "diagnostics_scope",
    "diagnostics_unresolved_severity": "unresolved_severity",
    "unresolved_severity": "unresolved_severity",
    "diagnostics_unresolved": "unresolved_severity",
    "code_lens_enabled": "code_lens_enabled",
    "link_suggestions": "link_suggestions",
    "link_suggestions_severity": "link_suggestions",
    "diagnostics_link_suggestions": "link_suggestions",
    "code_lens": "code_lens_enabled",
    "codelens_enabled": "code_lens_enabled",
    "new_page_folder": "new_page_folder",
    "create_page_folder": "new_page_folder",
    "cache_enabled": "cache_enabled",
    "cache": "cache_enabled",
    "cache_location": "cache_location",
    "cache_dir": "cache_location",
    "cache_folder": "cache_location",
    "daily_note_format": "daily_note_format",
    "daily_notes_format": "daily_note_format",
    "daily_note_folder": "daily_note_folder",
    "daily_notes_folder": "daily_note_folder",
    "inlay_hints_heading_backlinks": "inlay_heading_backlinks",
    "inlay_heading_backlinks": "inlay_heading_backlinks",
    "inlay_hints_link_titles": "inlay_link_titles",
    "inlay_link_titles": "inlay_link_titles",
    "semantic_tokens_enabled": "semantic_tokens_enabled",
    "semantic_tokens": "semantic_tokens_enabled",
    "extract_leaves": "extract_leaves",
    "extract_leave": "extract_leaves",
    "hints_threshold": "hints_threshold",
    "search_hints_threshold": "hints_threshold",
}


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_").replace(".", "_")


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{_snake(str(key))}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "_"))
        else:
            out[name] = value
    return out


def _coerce(name: str, value: Any) -> Any:
    if name == "exclude":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("a list of glob strings")
        return tuple(value)
    if name == "limit":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
            raise ValueError("a whole number from 1 to 1000")
        return value
    if name == "link_style":
        if value not in LINK_STYLES:
            raise ValueError("one of " + ", ".join(LINK_STYLES))
        return value
    if name == "link_order":
        if value not in LINK_ORDERS:
            raise ValueError("one of " + ", ".join(LINK_ORDERS))
        return value
    if name == "unresolved_severity":
        if value not in SEVERITIES:
            raise ValueError("one of " + ", ".join(SEVERITIES))
        return value
    if name == "link_suggestions":
        if value not in SUGGESTION_SEVERITIES:
            raise ValueError("one of " + ", ".join(SUGGESTION_SEVERITIES))
        return value
    if name == "diagnostics_scope":
        if value not in DIAGNOSTIC_SCOPES:
            raise ValueError("one of " + ", ".join(DIAGNOSTIC_SCOPES))
        return value
    if name == "inlay_link_titles":
        if value not in LINK_TITLE_HINTS:
            raise ValueError("one of " + ", ".join(LINK_TITLE_HINTS))
        return value
    if name == "extract_leaves":
        if value not in EXTRACT_LEAVES:
            raise ValueError("one of " + ", ".join(EXTRACT_LEAVES))
        return value
    if name == "hints_threshold":
        return check_threshold(value)
    if name in ("hover_related", "diagnostics_enabled", "code_lens_enabled", "cache_enabled",
                "inlay_heading_backlinks", "semantic_tokens_enabled"):
        if not isinstance(value, bool):
            raise ValueError("true or false")
        return value
    if name == "cache_location":
        if not isinstance(value, str) or not value.strip():
            raise ValueError('"user" or a folder path')
        if value.strip() == "vault":
            raise ValueError('"user" or a folder path outside the vault ("vault" is no longer offered: an index kept in a vault travels with it)')
        return value.strip()
    if name == "daily_note_format":
        if not isinstance(value, str):
            raise ValueError("a moment.js date format such as YYYY-MM-DD")
        return value.strip()
    if not isinstance(value, str):
        raise ValueError("a folder path")
    return value.strip("/")


def merge(base: Settings, data: Any, source: str) -> tuple[Settings, list[str]]:
    """``base`` with the keys of ``data`` applied; warnings name the source and the bad key."""
    if data is None:
        return base, []
    if not isinstance(data, dict):
        return base, [f"{source}: settings must be an object, got {type(data).__name__}"]
    flat = _flatten(data)
    if "vaultlens" in data and isinstance(data["vaultlens"], dict):
        flat.update(_flatten(data["vaultlens"]))
    changes: dict[str, Any] = {}
    warnings = []
    for key, value in flat.items():
        key = key.removeprefix("vaultlens_")
        name = _ALIASES.get(key)
        if name is None:
            continue
        if name == "cache_location" and source == SETTINGS_FILE:
            warnings.append(f"{source}: {key} ignored: where vaultlens writes is set in your editor or VAULTLENS_CACHE_DIR, never by the vault")
            continue
        try:
            changes[name] = _coerce(name, value)
        except ValueError as exc:
            warnings.append(f"{source}: {key} must be {exc}; keeping {getattr(base, name)!r}")
    return replace(base, **changes), warnings


def load_vault_settings(root: str, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Defaults, then ``.obsidian/app.json`` folders, then the vault's ``.vaultlens.toml``."""
    settings = base or Settings()
    warnings: list[str] = []
    app = os.path.join(*OBSIDIAN_APP_FILE.split("/"))
    if os.path.isfile(os.path.join(root, app)):
        try:
            data = json.loads(read_bytes(root, app))  # confined: a symlink out of the vault is not read
            if isinstance(data, dict):
                if isinstance(data.get("newFileFolderPath"), str) and data.get("newFileLocation") == "folder":
                    settings = replace(settings, new_note_folder=data["newFileFolderPath"].strip("/"))
                if isinstance(data.get("attachmentFolderPath"), str):
                    settings = replace(settings, attachment_folder=data["attachmentFolderPath"].strip("/"))
        except (OSError, ValueError) as exc:
            warnings.append(f".obsidian/app.json: not read ({exc})")
    daily = os.path.join(*OBSIDIAN_DAILY_FILE.split("/"))
    if os.path.isfile(os.path.join(root, daily)):
        try:
            data = json.loads(read_bytes(root, daily) or b"{}")  # confined, as app.json
            if isinstance(data, dict):
                if isinstance(data.get("format"), str) and data["format"].strip():
                    settings = replace(settings, obsidian_daily_format=data["format"].strip())
                if isinstance(data.get("folder"), str):
                    settings = replace(settings, obsidian_daily_folder=data["folder"].strip().strip("/"))
        except (OSError, ValueError) as exc:
            warnings.append(f"{OBSIDIAN_DAILY_FILE}: not read ({exc})")
    if os.path.isfile(os.path.join(root, SETTINGS_FILE)):
        try:
            data = tomllib.loads(read_bytes(root, SETTINGS_FILE).decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            warnings.append(f"{SETTINGS_FILE}: not read ({exc}); using defaults")
        else:
            settings, more = merge(settings, data, SETTINGS_FILE)
            warnings += more
    return settings, warnings
