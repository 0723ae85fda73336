"""Fixtures of the ettools suite: the built tools, the shared traces, and
the inputs converted once per session (ET and Kineto JSON to .et by the
project's own et-convert)."""
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("ET_BUILD", REPO / "build"))
SHARED = pathlib.Path(os.environ.get("ET_SHARED_TRACES",
                                     REPO.parent / "shared" / "traces"))
ET_SIM = BUILD / "simulator" / "et-sim"
ET_CONVERT = BUILD / "converter" / "et-convert"


def run_tool(tool, *args, cwd=None):
    """The tool's exit status, stdout and stderr."""
    p = subprocess.run([str(tool), *map(str, args)], capture_output=True,
                       text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="session")
def workdir():
    base = os.environ.get("ET_TEST_TMPDIR")
    if base:
        os.makedirs(base, exist_ok=True)
    d = tempfile.mkdtemp(prefix="ettools_", dir=base)
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def demo(workdir):
    """The README's demo: the bundled 4-rank DDP trace with its Kineto
    traces, converted by et-convert as `make demo` converts it."""
    out = workdir / "demo"
    out.mkdir()
    rc, _, err = run_tool(
        ET_CONVERT, REPO / "examples/data/ddp_mlp_et_r%d.json.gz",
        out / "ddp_mlp.%d.et", "--ranks", "4", "--kineto",
        REPO / "examples/data/ddp_mlp_trace_r%d.json.gz")
    assert rc == 0, err
    return str(out / "ddp_mlp.%d.et")
