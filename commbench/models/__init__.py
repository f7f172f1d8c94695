"""Models: pure functions over records (Hockney, lines, LogGP, overhead). No MPI import."""
