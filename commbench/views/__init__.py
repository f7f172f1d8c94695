"""Views: every output is a view of the Measurement records."""

from __future__ import annotations


class Collector:
    """A sink that keeps every record; views that need the whole run subclass it."""

    def __init__(self) -> None:
        self.records: list = []

    def start(self, header: dict) -> None:
        pass

    def record(self, rec) -> None:
        self.records.append(rec)

    def finish(self, summary: dict) -> None:
        pass
