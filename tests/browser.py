"""Headless Chromium driven over the DevTools protocol, from the standard library alone.

The browser tests (``tests/test_browser.py``) type into
``polyparse serve``'s page as a person would (key events), click, wait for the page's
script, read the document and take screenshots. The protocol's JSON messages go over a
WebSocket (RFC 6455): the few lines of :class:`WebSocket` below are all a client needs
(text frames, masked; fragments; ping), so no browser-automation package is installed.
Chromium comes from the system's packages (``apt-get install chromium``); without it,
:func:`chromium` is None and the tests skip.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-port=0")
"""Headless, and nothing that reaches for the network (this machine's is closed)."""
START_TIMEOUT = 30.0
"""Seconds Chromium may take to open its DevTools port."""


def chromium() -> str | None:
    """The Chromium (or Chrome) on the PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


class WebSocket:
    """A WebSocket client for text messages (RFC 6455), over a plain TCP socket."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlparse(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}"
                          f"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                          .encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the browser closed the WebSocket handshake")
            response += chunk
        if not response.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(f"WebSocket handshake refused: {response[:200]!r}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def send(self, text: str) -> None:
        payload = text.encode()
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x81, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def receive(self) -> str:
        """The next text message (fragments joined; pings answered)."""
        message = b""
        while True:
            first, second = self._read(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self._read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else b""
            payload = self._read(size)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the browser closed the WebSocket")
            if opcode == 0x9:                      # ping: answer with a pong, masked
                self.sock.sendall(struct.pack("!BB", 0x8A, 0x80 | len(payload)) + b"\0" * 4
                                  + payload)
                continue
            message += payload
            if first & 0x80:                       # FIN: the last fragment
                return message.decode()

    def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(max(65536, size - len(self.buffer)))
            if not chunk:
                raise ConnectionError("the browser closed the WebSocket")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with a fresh profile and one page, driven over the DevTools
    protocol; :meth:`close` ends it and removes the profile."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 900,
                 timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = Path(tempfile.mkdtemp(prefix="polyparse-chromium-"))
        # TMPDIR inside the profile: Chromium keeps its singleton socket in a folder of
        # TMPDIR that it does not remove when terminated, so the folder goes with the
        # profile
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(self.profile)})
        self.ws = None
        self.next_id = 0
        try:
            port = self._devtools_port()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                        timeout=timeout) as response:
                pages = [t for t in json.load(response) if t["type"] == "page"]
            self.ws = WebSocket(pages[0]["webSocketDebuggerUrl"], timeout)
        except BaseException:
            self.close()
            raise

    def _devtools_port(self) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            lines = marker.read_text().split("\n") if marker.exists() else []
            if lines and lines[0].strip().isdigit():
                return int(lines[0])
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and return its result (events are skipped)."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> None:
        """Wait until a JavaScript expression is true in the page."""
        deadline = time.monotonic() + self.timeout
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise TimeoutError(f"still false after {self.timeout} s: {expression}")
            time.sleep(0.05)

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && "
                      "document.readyState === 'complete'")

    def click(self, selector: str) -> None:
        """A left click at the middle of the element ``selector``."""
        box = self.evaluate(f"(() => {{ const r = document.querySelector("
                            f"{json.dumps(selector)}).getBoundingClientRect(); "
                            f"return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1],
                      button="left", clickCount=1)

    def type(self, text: str) -> None:
        """Type ``text`` into the focused element, one key event per character."""
        for char in text:
            self.call("Input.dispatchKeyEvent", type="keyDown", text=char, key=char,
                      unmodifiedText=char)
            self.call("Input.dispatchKeyEvent", type="keyUp", key=char)

    def screenshot(self, path: Path) -> None:
        """A PNG of the whole page (beyond the window too)."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": size["width"],
                               "height": size["height"], "scale": 1})
        Path(path).write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
