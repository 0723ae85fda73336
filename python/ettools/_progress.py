"""A progress line for long work: while C++ loads, converts or simulates
(with the GIL released), a thread writes 'ettools: simulating X ... 3.5 s'
to stderr, rewriting one line, and clears it when the work ends. Only where
someone watches: stderr a terminal, or a Jupyter kernel. The C++ side has
no progress counter, so the line says what runs and for how long.

ettools.progress = False turns it off; the environment's
ETTOOLS_PROGRESS=0 too, and ETTOOLS_PROGRESS_DELAY_S (default 1.0) is how
long work runs before the line appears.
"""
import contextlib
import os
import sys
import threading
import time

def _watched():
    if os.environ.get("ETTOOLS_PROGRESS", "1") == "0":
        return False
    try:
        if sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):
        return False
    return "ipykernel" in sys.modules


@contextlib.contextmanager
def progress(what, enabled=True):
    """Shows `what` and the seconds it has run, while the block runs."""
    if not enabled or not _watched():
        yield
        return
    delay_s = float(os.environ.get("ETTOOLS_PROGRESS_DELAY_S", "1.0"))
    done = threading.Event()
    shown = []

    def show():
        began = time.monotonic()
        if done.wait(delay_s):
            return
        while True:  # once at least: the work outlasted the delay
            line = "ettools: %s ... %.1f s" % (what, time.monotonic() - began)
            sys.stderr.write("\r" + line)
            sys.stderr.flush()
            shown.append(len(line))
            if done.wait(0.5):
                return

    thread = threading.Thread(target=show, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown:
            sys.stderr.write("\r" + " " * max(shown) + "\r")
            sys.stderr.flush()
