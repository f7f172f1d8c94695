"""Which stored runs a command means: `key=value[,key=value…]` (no database access here).

last=N          the N most recent (after the other conditions)
since=WHEN      started at or after WHEN: 2026-11-01, 2026-11-01T06:00, or 7d, 12h, 2w ago
until=WHEN      started before WHEN
tag=T           tagged T (tag=a,tag=b: both)
system=S        of the system S (case-insensitive, as family and benchmark)
family=F        of the family F (mpi1, osu, net …)
mpi=TEXT        whose MPI library's name contains TEXT (case-insensitive; % and _ are
                plain characters)
benchmark=B     that hold rows of benchmark B
id=N            run N (id=3-7: runs 3 to 7; id=1,id=5: either)
A value may hold ":", "/" or "@" (system=local:default, tag=v1.2/rc); each key but tag and
id is given once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from commbench.option_types import store_tag

KEYS = ("last", "since", "until", "tag", "system", "family", "mpi", "benchmark", "id")
ACCEPTED = (
    "accepted: key=value pairs separated by commas, keys last, since, until, tag, system, "
    "family, mpi, benchmark, id; e.g. last=5,tag=nightly or since=7d"
)


@dataclass(frozen=True)
class Selector:
    last: int | None = None
    since: str | None = None  # ISO UTC, as the store keeps dates
    until: str | None = None
    tags: tuple[str, ...] = ()
    system: str | None = None
    family: str | None = None
    mpi: str | None = None
    benchmark: str | None = None
    ids: tuple[tuple[int, int], ...] = field(default=())
    text: str = ""


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def when(text: str, now: datetime | None = None) -> str:
    """A date, a date and time (UTC unless it says), or an age (7d, 12h, 2w, 30m) as ISO UTC."""
    m = re.fullmatch(r"(\d+)([mhdw])", text)
    if m:
        unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        try:
            return iso((now or datetime.now(UTC)) - timedelta(**{unit: int(m.group(1))}))
        except (OverflowError, ValueError):
            raise ValueError(
                f"{text!r} reaches back before the year 1 (accepted: an age such as 7d, 12h, 2w)"
            ) from None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date (accepted: 2026-11-01, 2026-11-01T06:00, or an age such as "
            "7d, 12h, 2w)"
        ) from None
    return iso(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


ID_MAX = 2**31 - 1  # the store's run ids are 32-bit integers


def _ids(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        a, b = int(lo), int(hi or lo)
        if not (0 <= a <= ID_MAX and 0 <= b <= ID_MAX):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"id={text!r} is not a run number or a range (accepted: id=3, id=3-7, numbers up "
            f"to {ID_MAX})"
        ) from None
    return (a, b) if a <= b else (b, a)


def parse(text: str | None) -> Selector:
    """The selector of `text` (None or "": every run); ValueError naming the part that is
    wrong and the accepted form."""
    if not text:
        return Selector()
    got: dict = {"tags": (), "ids": (), "text": text}
    seen: set[str] = set()
    for part in text.split(","):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not value:
            raise ValueError(f"selector part {part!r} is not key=value ({ACCEPTED})")
        if key not in ("tag", "id") and key in seen:
            raise ValueError(f"selector key {key!r} is given twice in {text!r} ({ACCEPTED})")
        seen.add(key)
        if key == "last":
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"last={value!r} is not a positive count ({ACCEPTED})")
            got["last"] = int(value)
        elif key in ("since", "until"):
            got[key] = when(value)
        elif key == "tag":
            got["tags"] += (store_tag(value),)
        elif key == "id":
            got["ids"] += (_ids(value),)
        elif key in ("system", "family", "mpi", "benchmark"):
            got[key] = value
        else:
            raise ValueError(f"selector key {key!r} is unknown ({ACCEPTED})")
    return Selector(**got)
