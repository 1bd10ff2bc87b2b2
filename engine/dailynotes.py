"""Daily notes: the page a relative day names (``today``, ``next monday``), written in the vault's
moment.js format (Obsidian's ``.obsidian/daily-notes.json`` ``format``), and the reverse: the day
a page name stands for.

Dates are passed in (``today``): the engine reads no clock, so the same vault and the same day
give the same bytes. The language server passes the local date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

DEFAULT_FORMAT = "YYYY-MM-DD"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
# Longest token first so "YYYY" is not read as two "YY" (moment.js's own order of precedence).
_TOKEN = re.compile(
    r"\[[^\]]*\]|YYYY|YY|Q|MMMM|MMM|MM|Mo|M|DDDD|DDD|Do|DD|D|dddd|ddd|dd|d|E|e|GGGG|WW|W|gggg|ww|w|."
)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _parts(fmt: str) -> list[str]:
    return _TOKEN.findall(fmt)


def format_date(day: date, fmt: str = DEFAULT_FORMAT) -> str:
    """``day`` written in the moment.js format ``fmt`` (English names; ``[text]`` is literal)."""
    iso_year, iso_week, iso_day = day.isocalendar()
    # moment.js "en" weeks start on Sunday and week 1 holds 1 January.
    sunday_week = int(day.strftime("%U")) + (0 if date(day.year, 1, 1).weekday() == 6 else 1)
    values = {
        "YYYY": f"{day.year:04d}", "YY": f"{day.year % 100:02d}", "Q": str((day.month - 1) // 3 + 1),
        "MMMM": _MONTHS[day.month - 1], "MMM": _MONTHS[day.month - 1][:3], "MM": f"{day.month:02d}",
        "Mo": _ordinal(day.month), "M": str(day.month),
        "DDDD": f"{day.timetuple().tm_yday:03d}", "DDD": str(day.timetuple().tm_yday),
        "Do": _ordinal(day.day), "DD": f"{day.day:02d}", "D": str(day.day),
        "dddd": WEEKDAYS[day.weekday()].capitalize(), "ddd": WEEKDAYS[day.weekday()][:3].capitalize(),
        "dd": WEEKDAYS[day.weekday()][:2].capitalize(), "d": str(iso_day % 7), "E": str(iso_day),
        "e": str(iso_day % 7), "GGGG": f"{iso_year:04d}", "WW": f"{iso_week:02d}", "W": str(iso_week),
        "gggg": f"{day.year:04d}", "ww": f"{sunday_week:02d}", "w": str(sunday_week),
    }
    out = []
    for part in _parts(fmt):
        if part.startswith("[") and part.endswith("]") and len(part) >= 2:
            out.append(part[1:-1])
        else:
            out.append(values.get(part, part))
    return "".join(out)


_PARSE = {
    "YYYY": r"(?P<Y>\d{4})", "YY": r"(?P<y>\d{2})", "MMMM": r"(?P<B>[A-Za-z]+)", "MMM": r"(?P<b>[A-Za-z]{3})",
    "MM": r"(?P<m>\d{2})", "M": r"(?P<m>\d{1,2})", "Mo": r"(?P<m>\d{1,2})(?:st|nd|rd|th)",
    "DD": r"(?P<d>\d{2})", "D": r"(?P<d>\d{1,2})", "Do": r"(?P<d>\d{1,2})(?:st|nd|rd|th)",
    "dddd": r"[A-Za-z]+", "ddd": r"[A-Za-z]{3}", "dd": r"[A-Za-z]{2}",
}


def parse_date(name: str, fmt: str = DEFAULT_FORMAT) -> date | None:
    """The day whose daily note is named ``name`` in format ``fmt``, or None. A name counts only
    when writing that day back in ``fmt`` gives ``name`` again (so ``2024-1-5`` is not a
    ``YYYY-MM-DD`` note). Only the last ``/`` segment of a format that makes folders is used."""
    fmt = fmt.rsplit("/", 1)[-1] if "/" in fmt and "/" not in name else fmt
    pattern, seen = [], set()
    for part in _parts(fmt):
        if part.startswith("[") and part.endswith("]") and len(part) >= 2:
            pattern.append(re.escape(part[1:-1]))
        elif part in _PARSE:
            rx = _PARSE[part]
            group = rx[4] if rx.startswith("(?P<") else None
            if group is not None and group in seen:
                rx = rx.replace(f"(?P<{group}>", "(?:", 1)
            if group is not None:
                seen.add(group)
            pattern.append(rx)
        elif len(part) == 1 and not part.isalpha():
            pattern.append(re.escape(part))
        else:
            return None  # a week or weekday-number format: not parsed back
    m = re.fullmatch("".join(pattern), name, flags=re.IGNORECASE)
    if m is None:
        return None
    g = m.groupdict()
    try:
        year = int(g["Y"]) if g.get("Y") else (2000 + int(g["y"]) if g.get("y") else None)
        if g.get("m"):
            month = int(g["m"])
        elif g.get("B") or g.get("b"):
            word = (g.get("B") or g.get("b") or "").casefold()
            month = next(i + 1 for i, n in enumerate(_MONTHS) if n.casefold() == word or n[:3].casefold() == word)
        else:
            month = None
        day = int(g["d"]) if g.get("d") else None
        if year is None or month is None or day is None:
            return None
        found = date(year, month, day)
    except (ValueError, StopIteration):
        return None
    return found if format_date(found, fmt).casefold() == name.casefold() else None


@dataclass(frozen=True, slots=True)
class DailyNote:
    """A relative day and its daily note: ``name`` as typed (``next monday``), the ``day``, the
    note's ``path`` (vault-relative, with ``.md``) and its link ``target`` as written in a link."""

    name: str
    day: date
    path: str
    target: str


def relative_days(today: date) -> list[tuple[str, date]]:
    """The relative names and their days: today, yesterday, tomorrow, then ``next <weekday>``
    (the first one after today, 1-7 days on) and ``last <weekday>`` (1-7 days back), Monday first."""
    out = [("today", today), ("yesterday", today - timedelta(days=1)), ("tomorrow", today + timedelta(days=1))]
    for i, name in enumerate(WEEKDAYS):
        ahead = (i - today.weekday()) % 7 or 7
        out.append((f"next {name}", today + timedelta(days=ahead)))
    for i, name in enumerate(WEEKDAYS):
        back = (today.weekday() - i) % 7 or 7
        out.append((f"last {name}", today - timedelta(days=back)))
    return out


def note_path(day: date, fmt: str = DEFAULT_FORMAT, folder: str = "") -> str:
    """Where the daily note of ``day`` lives: ``folder``/formatted name ``.md``."""
    name = format_date(day, fmt or DEFAULT_FORMAT).strip("/")
    folder = folder.strip("/")
    return f"{folder}/{name}.md" if folder else f"{name}.md"


def matches(name: str, typed: str) -> bool:
    """Whether the typed text asks for the relative name: a prefix of it or of one of its words
    (``tom``, ``next mo``, ``fri``), case-insensitive; nothing typed asks for none."""
    want = " ".join(typed.casefold().split())
    if not want:
        return False
    return name.startswith(want) or f" {want}" in f" {name}"


def asks_first(typed: str) -> bool:
    """Whether the typed text asks for a daily note before any page: a whole first word of a
    relative name (``today``, ``tomorrow``, ``next``, ``last fri``). A part word (``tom``) is
    more often a page (Tomatoes): then the daily notes come after the pages."""
    want = " ".join(typed.casefold().split()) + (" " if typed[-1:].isspace() else "")
    return want.rstrip() in ("today", "yesterday", "tomorrow") or want.startswith(("next ", "last "))
