"""Where a store is and which of its runs a command means: `--store PATH|URL` and
`STORE[:SELECTOR]` (no database access here).

A store is an SQLite file (a path, or sqlite:///path) or a PostgreSQL database
(postgresql://user:password@host[:port]/database). Without one: $COMMBENCH_STORE, else
$XDG_DATA_HOME/commbench/results.db (~/.local/share/commbench/results.db).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from commbench.redact import redact
from commbench.store import selector

ENV = "COMMBENCH_STORE"
ACCEPTED = (
    "accepted: a file path (SQLite, e.g. results.db), sqlite:///PATH, or "
    "postgresql://USER:PASSWORD@HOST[:PORT]/DATABASE"
)
_PG_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
# A selector after the store begins at the first ":KEY=" of a selector key (a value may hold
# ":", "/" or "@": system=local:default, tag=v1.2/rc); in a URL only after its host part.
_KEYS = "|".join(selector.KEYS)
_BARE = re.compile(rf"^(?:{_KEYS})=")
_SEP = re.compile(rf":(?=(?:{_KEYS})=)")
# ... else a tail of key=value pairs of any key (an unknown one is then named as such)
_LOOSE = re.compile(r"^[a-z_]+=[^,/@]*(,[a-z_]+=[^,/@]*)*$")


def default_path() -> str:
    env = os.environ.get(ENV)
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "commbench", "results.db")


@dataclass(frozen=True)
class Location:
    kind: str  # "sqlite" | "postgresql"
    url: str  # SQLAlchemy's URL
    path: str | None = None  # the SQLite file

    def shown(self) -> str:
        """For messages: the path, or the URL with its password hidden."""
        if self.path is not None:
            return self.path
        return redact(self.url.replace("postgresql+psycopg://", "postgresql://", 1))


def parse(text: str | None) -> Location:
    """A store location; ValueError naming what is wrong and the accepted forms."""
    text = text if text not in (None, "", True) else default_path()
    if "://" not in text:
        return Location("sqlite", "sqlite://", os.path.abspath(os.path.expanduser(text)))
    scheme = text.split("://", 1)[0].lower()
    if scheme == "sqlite":
        path = text[len("sqlite:///") :] if text.startswith("sqlite:///") else ""
        if not path:
            raise ValueError(f"store {text!r}: sqlite:/// needs a file path ({ACCEPTED})")
        return Location("sqlite", "sqlite://", os.path.abspath("/" + path.lstrip("/")))
    if scheme in _PG_SCHEMES:
        rest = text.split("://", 1)[1]
        if not urlsplit("x://" + rest).hostname:
            raise ValueError(f"store {text!r}: the URL names no host ({ACCEPTED})")
        return Location("postgresql", "postgresql+psycopg://" + rest)
    raise ValueError(f"store {text!r}: {scheme}:// is not a store commbench keeps ({ACCEPTED})")


def split(text: str) -> tuple[str | None, str | None]:
    """STORE[:SELECTOR] into its store (None: the default) and its selector (None: none);
    a bare selector (last=5) or :SELECTOR means the default store."""
    if text in ("", ":"):
        return None, None
    if _BARE.match(text):
        return None, text
    begin = 0
    if "://" in text:  # postgresql://user:pw@host/db: a selector can only follow the path
        slash = text.find("/", text.index("://") + 3)
        begin = slash if slash >= 0 else len(text)
    m = _SEP.search(text, begin)
    if m:
        return text[: m.start()] or None, text[m.end() :]
    head, sep, tail = text.rpartition(":")
    if sep and len(head) >= begin and _LOOSE.match(tail):
        return head or None, tail
    if text.endswith(":") and len(text) > 1:
        return text[:-1], None
    return text, None
