"""A JSON text read from a file a piece at a time: one value in memory, not the file.

nccl-tests' -J file is one JSON object whose "results" list grows with the
run (and -I puts every iteration's time in it). `JsonStream` reads the
object's members one by one and a list's items one by one, each decoded by
the json module from a window of the file that grows only as far as that one
value needs (at most MAX_VALUE). Where the text ends early (a cut file) or is
not JSON, json.JSONDecodeError says where, with the line and column in the
whole file.
"""

from __future__ import annotations

import codecs
import json
import re

CHUNK = 1 << 20
MAX_VALUE = 256 << 20  # characters of one value (one result, the config)
_WS = re.compile(r"[ \t\r\n]*")


class ValueTooLarge(Exception):
    pass


class JsonStream:
    def __init__(self, f, digest):
        self.f, self.digest = f, digest
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        # NaN, Infinity: floats the reader refuses or names
        self.dec = json.JSONDecoder(parse_constant=float)
        self.buf, self.pos = "", 0
        self.line0, self.col0 = 1, 0  # line and column (0-based) of buf[0] in the file
        self.eof = False

    def _more(self, size: int = CHUNK) -> bool:
        """Read on: the consumed part of the window is dropped; False at the end of the file."""
        if self.eof:
            return False
        data = self.f.read(size)
        done = self.buf[: self.pos]
        nl = done.rfind("\n")
        self.line0 += done.count("\n")
        self.col0 = len(done) - nl - 1 if nl >= 0 else self.col0 + len(done)
        self.buf, self.pos = self.buf[self.pos :], 0
        if not data:
            self.eof = True
            self.buf += self._decode(b"", final=True)
            return False
        self.digest.update(data)
        self.buf += self._decode(data)
        return True

    def where(self, pos: int | None = None) -> tuple[int, int]:
        """(line, column) in the file, from 1, of a position in the window."""
        pos = self.pos if pos is None else pos
        nl = self.buf.rfind("\n", 0, pos)
        line = self.line0 + self.buf.count("\n", 0, pos)
        return line, (pos - nl if nl >= 0 else self.col0 + pos + 1)

    def error(self, msg: str, pos: int | None = None) -> json.JSONDecodeError:
        e = json.JSONDecodeError(msg, "", 0)
        e.lineno, e.colno = self.where(pos)
        return e

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, chars: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            raise self.error(
                "the JSON text ends early (cut)"
                if not c
                else f"Expecting {' or '.join(repr(x) for x in chars)}, found {c!r}"
            )
        self.pos += 1
        return c

    def value(self):
        """The next value, decoded whole."""
        if not self.peek():
            raise self.error("the JSON text ends early (cut)")
        size = CHUNK
        while True:
            try:
                v, end = self.dec.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.eof:  # a number at the window's end may go on
                    self.pos = end
                    return v
            except json.JSONDecodeError as e:
                # where more text may mend it: near the end ("tr" of true, "1e" of 1e5), or in a
                # string
                unterminated = e.msg.startswith("Unterminated string")
                end = len(self.buf.rstrip())
                if self.eof or not (unterminated or e.pos >= end - 32):
                    cut = self.eof and (unterminated or e.pos >= end)
                    raise self.error(
                        "the JSON text ends early (cut)" if cut else e.msg, e.pos
                    ) from None
            if len(self.buf) - self.pos > MAX_VALUE:
                raise ValueTooLarge(f"a value longer than {MAX_VALUE >> 20} MiB")
            self._more(size)
            size = min(2 * size, MAX_VALUE)

    def members(self):
        """The members of the object that comes next: (key, its line); the caller reads each
        member's value (value() or items()) before the next."""
        self.expect("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            line = self.where()[0]
            key = self.value()
            if not isinstance(key, str):
                raise self.error("Expecting property name enclosed in double quotes")
            self.expect(":")
            yield key, line
            if self.expect(",}") == "}":
                return

    def items(self):
        """The items of the list that comes next, one at a time: (item, its line)."""
        self.expect("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            self.peek()
            line = self.where()[0]
            yield self.value(), line
            if self.expect(",]") == "]":
                return

    def end(self) -> None:
        """Nothing but white space may follow the value."""
        if self.peek():
            raise self.error("Extra data after the JSON object")
