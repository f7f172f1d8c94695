"""One function hides credentials wherever commbench prints, records or stores text.

A store URL carries its password in any of the forms libpq and SQLAlchemy accept: the
userinfo (postgresql://user:SECRET@host/db), a query parameter (?password=SECRET,
&sslpassword=SECRET) or a keyword of a connection string (password=SECRET). redact()
replaces each secret by *** in any text: a command-line argument, a URL, an error
message, a traceback line. The results file's command line and configuration, the stored
document and every line commbench writes on stdout and stderr pass through it (commands.main
wraps both streams with Masking). A service or password file's name is not a secret and
stays (service=, passfile=).
"""

from __future__ import annotations

import functools
import re

HIDDEN = "***"
# scheme://user:SECRET@ : the user may be empty, the secret ends at @ (a / or blank first
# means the colon was a port's, not a password's)
_USERINFO = r"(\b[A-Za-z][\w+.-]*://[^/\s:@'\"]*):[^/@\s'\"]*@"
# password=SECRET in a query (?, &) or a connection string: libpq's password and
# sslpassword, PGPASSWORD as an option, and the usual spellings of a token
_KEY = r"(?:pg|ssl)?pass(?:word|wd)?|pwd|secret|token|api[_-]?key"
_END = r"&\s'\",;)\]"  # what ends a value; a colon too where a blank or the end follows
_PARAM = rf"(?i)(\b(?:{_KEY})\s*=\s*)([^{_END}]+?)(?=$|[{_END}]|:(?:\s|$))"


@functools.cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    """Compiled at the first text that may hold a credential (~2 ms that most runs' launchers
    never pay: issue 50, start-up)."""
    return re.compile(_USERINFO), re.compile(_PARAM)


def redact(text: object) -> object:
    """text with every credential hidden; anything not a str is returned as it is."""
    if not isinstance(text, str) or ("://" not in text and "=" not in text):
        return text
    userinfo, param = _patterns()
    text = userinfo.sub(rf"\1:{HIDDEN}@", text)
    return param.sub(rf"\g<1>{HIDDEN}", text)


def redact_all(value: object) -> object:
    """redact() over a document: every string in nested lists and dicts (keys kept)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple):
        return type(value)(redact_all(v) for v in value)
    if isinstance(value, dict):
        return {k: redact_all(v) for k, v in value.items()}
    return value


class Masking:
    """A text stream whose every write passes through redact(); the rest is the stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, s: str) -> int:
        self._stream.write(redact(s))
        return len(s)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def mask_streams() -> None:
    """sys.stdout and sys.stderr through redact() (once per process)."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, Masking):
            setattr(sys, name, Masking(stream))
