"""Per-user scopes (issue 22): which user a page belongs to, and where a user's pages go.

A vault may keep personal pages under ``users/<id>/`` (the folder is a setting), and Dendron-style
file names ``user.<id>.*`` count as that user's too. ``search --user ID`` leaves out the pages of
every OTHER user; without ``--user`` users' pages are included, unless the vault's
``.vaultlens.toml`` says ``[users] include = false``. Both settings are read from that file:

    [users]
    folder = "users"   # where each user's folder is (vault-relative)
    include = true     # without --user: search users' pages too

They choose what a search reads, never where anything is written, so a vault may set them.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SETTINGS_FILE = ".vaultlens.toml"
DEFAULT_FOLDER = "users"
_USER_ID = re.compile(r"[^/\\\s.][^/\\\s]*")  # one path segment, not hidden, no spaces


@dataclass(frozen=True)
class UserScopes:
    """The vault's user settings: the users' folder, and whether a search without a user reads it."""

    folder: str = DEFAULT_FOLDER
    include: bool = True


def check_user(user: str) -> str:
    """A user id as given, checked: one path segment (ValueError for the person who typed it)."""
    if not isinstance(user, str) or not _USER_ID.fullmatch(user) or user == "..":
        raise ValueError(f'"user" must be a user id: one name without "/", spaces or a leading dot (got {user!r})')
    return user


def page_owner(path: str, folder: str = DEFAULT_FOLDER) -> str | None:
    """The user page ``path`` belongs to (casefolded): ``<folder>/<id>/...`` or a file named
    ``user.<id>.*``; None for a shared page."""
    if folder and path.startswith(folder + "/"):
        rest = path[len(folder) + 1:]
        if "/" in rest:
            return rest.split("/", 1)[0].casefold()
    name = path.rsplit("/", 1)[-1]
    parts = name.split(".")
    if len(parts) >= 3 and parts[0].casefold() == "user" and parts[1]:
        return parts[1].casefold()
    return None


def user_scopes(root: str) -> UserScopes:
    """The ``[users]`` settings of the vault at ``root`` (defaults when unset or unreadable)."""
    from .scan import read_bytes

    try:
        data = tomllib.loads(read_bytes(root, SETTINGS_FILE).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return UserScopes()
    found = data.get("users") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return UserScopes()
    folder = found.get("folder")
    include = found.get("include")
    return UserScopes(
        folder=folder.strip("/") if isinstance(folder, str) and folder.strip("/") else DEFAULT_FOLDER,
        include=include if isinstance(include, bool) else True,
    )


def user_folder(root: str, user: str) -> str:
    """The vault-relative folder user ``user``'s own pages go in (``users/<id>``, by the vault's
    setting); ValueError for an id that is not one path segment. For ``add --user``."""
    return f"{user_scopes(root).folder}/{check_user(user)}"
