"""`pip install .` as docs/python.md gives it, offline, into a fresh virtual
environment (with Debian's numpy and pandas), building through this
checkout's CMake build (ETTOOLS_CMAKE_BUILD_DIR, already built: no second
build): the installed module imports from the environment, outside the
checkout, and simulates."""
import os
import subprocess

import pytest

from conftest import BUILD, REPO


def test_pip_install_builds_an_importable_module(workdir, demo):
    venv = (workdir / "venv").resolve()
    made = subprocess.run(["/usr/bin/python3", "-m", "venv",
                           "--system-site-packages", str(venv)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip("no venv module (python3-venv): " + made.stderr[-200:])
    python = str(venv / "bin" / "python")
    env = dict(os.environ, ETTOOLS_CMAKE_BUILD_DIR=str(BUILD),
               ETTOOLS_BUILD_JOBS="2")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation",
                        "--no-deps", "--no-index", "--quiet", str(REPO)],
                       capture_output=True, text=True, env=env, cwd=workdir)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    check = ("import ettools, sys\n"
             "print(ettools.__file__)\n"
             "r = ettools.simulate(sys.argv[1], ranks=4)\n"
             "print(len(r.ranks))\n")
    p = subprocess.run([python, "-c", check, os.path.abspath(demo)], capture_output=True,
                       text=True, env=env, cwd=workdir)
    assert p.returncode == 0, p.stderr
    where, ranks = p.stdout.split()
    assert where.startswith(str(venv))
    assert int(ranks) == 4
