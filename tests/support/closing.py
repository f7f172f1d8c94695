"""A test resource used as `with Resource(...) as r:` that is whole or gone: _open() builds it,
and one that fails half-way is closed (close() removes whatever was made) before the error
goes on (tests/support/netns.py's emulated hosts, tests/support/pgserver.py's PostgreSQL server)."""

from __future__ import annotations

from typing import Self


class Closing:
    def _open(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()
