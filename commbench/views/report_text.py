"""`commbench report FILE`: a run's text rebuilt from its results file.

The records are replayed through the views the run printed them with, in
the run's order (job.build_sinks): a --fit run's stored fits, then the
binding overhead of --engine both, then the family's text view. The HTML
report shows the same text for each run.
"""

from __future__ import annotations

from typing import TextIO

from commbench import records, suites


def view_key(doc: dict) -> str:
    """The key of the run's text view (views.TEXT_VIEWS): its family's, or the one the file
    names (family.view; files of `commbench import`: "imported")."""
    fam = suites.canonical_family(doc.get("family", {}).get("name", "mpi1"))
    return doc.get("family", {}).get("view") or (suites.family(fam).view if fam else "imb")


def replay(doc: dict, recs: list[records.Measurement], out: TextIO) -> None:
    """The text `commbench run` printed for doc (its records recs), written to out."""
    from commbench import views
    from commbench.views import limits_text
    from commbench.views.binding import table_lines
    from commbench.views.fit_text import report_sink

    key = view_key(doc)
    view = views.text_view(key, out)
    fits = report_sink(doc, out)  # None: no "fits" in the file
    sinks = [fits, view] if fits is not None else [view]
    summary = doc.get("summary", {"interrupted": "results file incomplete"})
    header = {
        k: doc[k]
        for k in ("metadata", "config", "family", "notes", "comments", "preamble_extra")
        if k in doc
    }
    for s in sinks:
        s.start(header)
    for r in recs:
        for s in sinks:
            s.record(r)
    if fits is not None:
        fits.finish(summary)
    if doc.get("summary", {}).get("binding_overhead"):
        out.write("\n".join(table_lines(doc["summary"]["binding_overhead"])) + "\n")
    view.finish(summary)
    if key not in limits_text.SAID_BY_THE_VIEW:
        for line in limits_text.trailer(recs):
            out.write(line + "\n")
