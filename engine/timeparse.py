"""Times for ``--since``/``--until`` and for pages: relative spans, ISO 8601, and what vaults write.

A bound is relative (``30m``, ``2h``, ``7d``, ``4w``: that long before ``now``) or an ISO 8601
date or date-time; values without a zone are UTC. A page's time comes from frontmatter
``updated``/``created`` in any common form (ISO dates and date-times, ``2024/01/05``, epoch
seconds or milliseconds as Dendron writes them), else from the file's modification time.
"""

from __future__ import annotations

import datetime as dt
import re

UTC = dt.timezone.utc
ACCEPTED = (
    "a relative span such as 30m, 2h, 7d or 4w (minutes, hours, days, weeks before now), "
    "or an ISO 8601 date or date-time such as 2026-01-31 or 2026-01-31T09:30:00+01:00 (no zone means UTC)"
)
_RELATIVE = re.compile(r"^\s*(\d{1,6})\s*(m|min|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class TimeError(ValueError):
    """A time the user gave that is not one of the accepted forms."""


_DATE_ONLY = re.compile(r"^\s*\d{4}[-/]\d{1,2}[-/]\d{1,2}\s*$")


def parse_bound(text: str, now: dt.datetime, *, end: bool = False) -> dt.datetime:
    """A ``--since``/``--until`` value as an aware UTC datetime; TimeError names the accepted forms.

    ``end``: the value is an upper bound (``--until``, ``before:``), so a date without a time
    means the whole day, inclusive: its last microsecond (23:59:59.999999 UTC)."""
    m = _RELATIVE.match(text)
    if m:
        try:
            return now - dt.timedelta(seconds=int(m.group(1)) * _UNITS[m.group(2).lower()])
        except OverflowError:  # 999999w: before the year 1
            raise TimeError(f"{text.strip()!r} reaches back before the year 1") from None
    when = parse_time(text)
    if when is None:
        raise TimeError(f"not a time: {text!r}; use {ACCEPTED}")
    if end and _DATE_ONLY.match(text):
        when = when + dt.timedelta(days=1, microseconds=-1)
    return when


def parse_time(value: object) -> dt.datetime | None:
    """A frontmatter time (or an ISO string) as an aware UTC datetime, None when not a time."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _epoch(float(value))
    text = str(value).strip()
    if not text:
        return None
    if re.fullmatch(r"\d{9,13}(\.\d+)?", text):
        return _epoch(float(text))
    text = text.replace("/", "-") if re.fullmatch(r"\d{4}/\d{1,2}/\d{1,2}.*", text) else text
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
        if not m:
            return None
        try:
            when = dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return when.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59-01:00 is after the year 9999 in UTC
        return None


def _epoch(seconds: float) -> dt.datetime | None:
    if seconds > 1e11:  # milliseconds (Dendron)
        seconds /= 1000.0
    try:
        return dt.datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None
