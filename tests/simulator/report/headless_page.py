"""Loads an HTML page in headless Chromium and reports what a person would meet.

Drives Chromium through its DevTools protocol over a pipe
(--remote-debugging-pipe: NUL-separated JSON on fds 3 and 4), standard library
only. For one page: the console errors and uncaught exceptions, every request
the page makes that is not the file itself, the load time, and per tab (a
button `nav button[data-tab=ID]` showing `section#tab-ID`) whether it shows
and a PNG screenshot. PNG pixels are decoded with zlib (8-bit RGB/RGBA) to
count how many differ from the background, so a blank tab fails.
"""

import base64
import json
import os
import struct
import subprocess
import time
import zlib


class Chromium:
    """One headless browser and one page in it, driven over the pipe."""

    def __init__(self, binary, width=1280, height=900):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # fds 3 and 4 in the child, as --remote-debugging-pipe expects.
        # (Copied above 4 first: the pipe's own fds may be 3 or 4.)
        def child_fds():
            read, write = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self._proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=child_fds,
            close_fds=False)  # fds 3 and 4 must reach the browser
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self.call("Target.attachToTarget",
                                  {"targetId": page["targetId"],
                                   "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": False}, session=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.time() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=60):
        self._next_id += 1
        message = {"id": self._next_id, "method": method,
                   "params": params or {}}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True},
                           session=True)
        if "exceptionDetails" in result:
            raise RuntimeError("%s: %s" % (expression,
                                           result["exceptionDetails"]))
        return result["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def png_pixels(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB(A) PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[0], header[1], header[2], header[3]
    if depth != 8 or color not in (2, 6):
        raise ValueError("PNG: only 8-bit RGB or RGBA is decoded")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (
                    up if pb <= pc else corner)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def ink_fraction(png):
    """The share of pixels that differ from the most common colour."""
    width, height, channels, rows = png_pixels(png)
    counts = {}
    for row in rows:
        for x in range(0, width * channels, channels * 4):  # every 4th pixel
            pixel = row[x:x + 3]
            counts[pixel] = counts.get(pixel, 0) + 1
    total = sum(counts.values())
    return (total - max(counts.values())) / total if total else 0.0


def inspect_page(chromium_binary, path, tabs, shots_dir=None):
    """What loading `path` and showing each of `tabs` gives, as a dict."""
    browser = Chromium(chromium_binary)
    try:
        url = "file://" + os.path.abspath(path)
        browser.call("Page.navigate", {"url": url}, session=True)
        browser.wait_for("Page.loadEventFired")
        load_ms = browser.evaluate(
            "performance.getEntriesByType('navigation')[0].loadEventEnd")
        result = {"load_ms": load_ms, "tabs": {}, "errors": [],
                  "requests": []}
        for tab in tabs:
            shown = browser.evaluate(
                "(function(){var b=document.querySelector("
                "'nav button[data-tab=\"%s\"]');if(!b)return false;b.click();"
                "var s=document.getElementById('tab-%s');"
                "return !!s && !s.hidden && s.getBoundingClientRect().height>0;"
                "})()" % (tab, tab))
            # A quarter-scale shot to check (pure-Python PNG decoding is
            # slow: 16x fewer pixels); full size only for the docs.
            png = base64.b64decode(browser.call(
                "Page.captureScreenshot",
                {"format": "png", "clip": {"x": 0, "y": 0, "width": 1280,
                                           "height": 900, "scale": 0.25}},
                session=True)["data"])
            if shots_dir:
                full = base64.b64decode(browser.call(
                    "Page.captureScreenshot", {"format": "png"},
                    session=True)["data"])
                with open(os.path.join(shots_dir, tab + ".png"), "wb") as f:
                    f.write(full)
            result["tabs"][tab] = {"shown": shown, "png": png}
        tab_count = browser.evaluate(
            "document.querySelectorAll('nav button').length")
        result["tab_count"] = tab_count
        for event in browser.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                result["errors"].append(
                    params["exceptionDetails"].get("text", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get(
                    "type") in ("error", "assert"):
                result["errors"].append(json.dumps(params.get("args")))
            elif method == "Log.entryAdded" and params["entry"].get(
                    "level") in ("error", "warning"):
                result["errors"].append(params["entry"].get("text"))
            elif method == "Network.requestWillBeSent":
                request_url = params["request"]["url"]
                if request_url != url and not request_url.startswith("data:"):
                    result["requests"].append(request_url)
        return result
    finally:
        browser.close()
