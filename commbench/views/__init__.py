"""Views: every output is a view of the Measurement records."""

from __future__ import annotations

import importlib
import sys
from typing import Any, TextIO

# The text view of each family, by the key the family declares (Family.view).
TEXT_VIEWS = {
    "imb": "commbench.views.imb_text:ImbText",
    "overhead": "commbench.views.overhead_text:OverheadText",
    "msgrate": "commbench.views.msgrate_text:MsgrateText",
    "mt": "commbench.views.mt_text:MtText",
    "p2p": "commbench.views.p2p_text:P2PText",
    "osu": "commbench.views.osu_text:OsuText",
    "net": "commbench.views.net_text:NetText",
    "gpcnet": "commbench.views.gpcnet_text:GpcnetText",
    "imported": "commbench.views.imported_text:ImportedText",  # files of `commbench import`
}


def text_view(key: str, out: TextIO) -> Any:
    """The text view a family declares, writing to out."""
    module, cls = TEXT_VIEWS[key].split(":")
    return getattr(importlib.import_module(module), cls)(out)


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


class TextView:
    """A family's text view: the lines it prints go to out."""

    def __init__(self, out: TextIO = sys.stdout):
        self.out = out

    def p(self, *lines: str) -> None:
        """Print each of lines (none: nothing)."""
        for line in lines:
            self.out.write(line + "\n")

    def header_notes(self, header: dict) -> None:
        """The run's notes, each a '#' line."""
        self.p(*(n if n.startswith("#") else f"# {n}" for n in header.get("notes", [])))
