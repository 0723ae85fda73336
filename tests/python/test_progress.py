"""The progress line: written to stderr while simulate() runs when stderr
is a terminal (a pseudo-terminal here), cleared at the end; nothing when
stderr is a pipe or ettools.progress is False."""
import os
import pty
import subprocess
import sys

import ettools  # noqa: F401  (the module under test must import)
from conftest import REPO

SCRIPT = ("import ettools, sys\n"
          "ettools.progress = sys.argv[2] == 'on'\n"
          "ettools.simulate(sys.argv[1], ranks=4)\n"
          "print('done')\n")


def run(demo, stderr_tty, switch="on"):
    env = dict(os.environ, ETTOOLS_PROGRESS_DELAY_S="0")
    if stderr_tty:
        master, slave = pty.openpty()
        p = subprocess.Popen([sys.executable, "-c", SCRIPT, demo, switch],
                             stdout=subprocess.PIPE, stderr=slave, env=env,
                             cwd=REPO)
        os.close(slave)
        out = p.stdout.read()
        p.wait()
        err = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        os.close(master)
    else:
        p = subprocess.run([sys.executable, "-c", SCRIPT, demo, switch],
                           capture_output=True, env=env, cwd=REPO)
        out, err = p.stdout, p.stderr
    assert p.returncode == 0, err
    assert out == b"done\n"
    return err.decode()


def test_progress_on_a_terminal(demo):
    err = run(demo, stderr_tty=True)
    assert "ettools: simulating ddp_mlp.%d.et ... " in err
    # The line is cleared: the last thing written returns to its start.
    assert err.rstrip(" ").endswith("\r")


def test_no_progress_on_a_pipe_or_when_off(demo):
    assert "ettools:" not in run(demo, stderr_tty=False)
    assert "ettools:" not in run(demo, stderr_tty=True, switch="off")
