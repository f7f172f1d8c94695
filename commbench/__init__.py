"""commbench: message-passing benchmarks on mpi4py, with models and machine-readable results."""

__version__ = "0.1.0"
