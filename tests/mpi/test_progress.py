"""The progress line of a run (issue 18 item 4), under a real pseudo-terminal.

`commbench run -n 2` starts mpiexec, whose ranks get pipes, not the terminal:
the launcher passes its terminal on (process_origin.TERMINAL) and rank 0 draws the
line with rich (commbench.views.progress). Checked here in real MPI runs:
the line reaches the terminal on stderr while stdout's tables stay as they
are when piped; nothing is drawn when stderr is piped or with --no-progress;
the launcher never imports rich; and where stdout shares the terminal, no
table row lands on the line. The schedule behind the line, without MPI:
tests/unit/test_progress.py.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import termios
import threading

from tests.support.mpirun import ENV, FAST

RUN = ["run", "-n", "2", "PingPong", "Allreduce", "-msglog", "0:6", *FAST, "-o", "-"]
ROWS = 8 + 6  # PingPong 0, 1 … 64; Allreduce 0, 4 … 64 (float elements)
ROW = re.compile(r"^ +\d+ +\d+ +\d+\.\d\d")


def _launch(
    args: list[str],
    stdout_on_terminal: bool = False,
    pty_stderr: bool = True,
    python: tuple[str, ...] = (),
    timeout: float = 180,
) -> tuple[int, str, bytes]:
    """(exit status, stdout, what the terminal received) of `python -m commbench args`
    with stderr on a pseudo-terminal of 100 columns (or piped), stdout piped or on it too."""
    cmd = [sys.executable, *python, "-m", "commbench", *args]
    env = dict(os.environ, **ENV)
    env.pop("COMMBENCH_STDERR_TERMINAL", None)
    if not pty_stderr:
        p = subprocess.run(
            cmd, capture_output=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL
        )
        return p.returncode, p.stdout.decode(), p.stderr
    master, slave = pty.openpty()
    termios.tcsetwinsize(slave, (40, 100))
    got: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                return
            if not data:
                return
            got.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=slave if stdout_on_terminal else subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    out, _ = proc.communicate(timeout=timeout)
    reader.join(timeout=30)
    os.close(master)
    return proc.returncode, (out or b"").decode(), b"".join(got)


def _masked(stdout: str) -> list[str]:
    """stdout without what changes from run to run (numbers, the date, the closing lines
    against the limits: whether a floor was measured depends on the machine's load)."""
    return [
        " ".join(re.sub(r"\d+(\.\d+)?", "N", ln).split())
        for ln in stdout.splitlines()
        if not ln.startswith(("# Date", "# commbench: "))
    ]


def test_the_line_reaches_the_terminal_and_stdout_keeps_its_tables():
    rc, out, term = _launch(RUN, python=("-X", "importtime"))
    assert rc == 0, term[-3000:]
    text = term.decode(errors="replace")
    assert "IMB-MPI1 PingPong NP 2" in text and "IMB-MPI1 Allreduce NP 2 64 B" in text, text[-2000:]
    assert re.search(r"\d+/14", text) and "left" in text  # sizes done of the plan's, the bound
    assert "\x1b[2K" in text  # drawn and erased (by rich) on the terminal
    # The launcher (python -X importtime: its own imports only) never loads rich or the view.
    launcher = [ln for ln in text.splitlines() if ln.startswith("import time:")]
    assert launcher and not [
        ln for ln in launcher if re.search(r"\|\s+(rich|commbench\.views\.progress)\b", ln)
    ]
    # stdout: the tables alone, line for line those of a run with stderr piped.
    assert "\x1b" not in out and "left" not in out
    rc2, piped, err = _launch(RUN, pty_stderr=False)
    assert rc2 == 0
    assert b"\x1b" not in err and b"PingPong NP" not in err  # piped: no progress line
    assert _masked(out) == _masked(piped)
    assert sum(1 for ln in out.splitlines() if ROW.match(ln)) == ROWS


def test_no_progress_option_and_a_shared_terminal():
    rc, _, term = _launch([*RUN, "--no-progress"])
    assert rc == 0 and b"PingPong NP" not in term and b"\x1b" not in term
    # stdout and stderr on one terminal (an interactive run): every table row stands on
    # a line of its own, never after the progress line's text.
    rc, _, term = _launch(RUN, stdout_on_terminal=True)
    assert rc == 0
    text = term.decode(errors="replace")
    assert "PingPong NP 2" in text
    shown = [
        re.split(r"\x1b\[2K|\r", ln)[-1] for ln in re.split(r"\r?\n", text)
    ]  # what stays on each line
    rows = [ln for ln in shown if ROW.match(ln)]
    assert len(rows) == ROWS, shown
    assert not [ln for ln in shown if "NP 2" in ln and ROW.search(ln.split("left")[-1])]
