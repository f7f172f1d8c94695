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

ENV = "COMMBENCH_STORE"
ACCEPTED = (
    "accepted: a file path (SQLite, e.g. results.db), sqlite:///PATH, or "
    "postgresql://USER:PASSWORD@HOST[:PORT]/DATABASE"
)
_PG_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
# A selector after the store: key=value pairs, comma-separated, none of them with / or @
# (a URL's password may hold "=", its host part always has "@" or "/").
_SELECTOR = re.compile(r"^[a-z_]+=[^,/@]*(,[a-z_]+=[^,/@]*)*$")


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
    if _SELECTOR.match(text):
        return None, text
    if text in ("", ":"):
        return None, None
    head, sep, tail = text.rpartition(":")
    if sep and _SELECTOR.match(tail):
        return head or None, tail
    if sep and not tail and head:
        return head, None
    return text, None
