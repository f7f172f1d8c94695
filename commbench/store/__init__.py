"""The results store: runs kept whole in a database and indexed by what makes them
comparable (no MPI).

SQLite by default (one file, nothing to start), PostgreSQL for a team's central store
given a URL, through the same code: SQLAlchemy Core (commbench.store.db), the tables and
their versioned migrations in commbench.store.tables. What a run is indexed by (system,
family, rows, library, the options that change the numbers): commbench.store.index; which
runs a command means: commbench.store.selector; the gate against many runs:
commbench.store.gate with the test of commbench.models.betweenruns; the commands:
commbench.commands.store; trends: commbench.store.trend; exports: commbench.store.export.
docs/results.md ("The results store") and docs/statistics.md describe them.
"""
