"""How to measure, once for every family of per-size kernels.

- plan: pure planning (process counts, sizes, repetitions, buffers), no MPI;
- context: the process groups of one NP and what a kernel sees of one row;
- core: the Harness that sweeps, times, checks and emits the records;
- publish: the records of its rows, built on world rank 0, and the check verdicts.

Import the module you need (commbench.harness.core's Harness, plan's Plan): importing the
package loads none of them, so a test of the plan alone loads no MPI.
"""
