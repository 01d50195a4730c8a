"""Headless Chromium driven through its DevTools protocol, for the browser tests.

The protocol runs over --remote-debugging-pipe (JSON messages ending in a NUL byte on file
descriptors 3 and 4), so no websocket library is needed. One browser serves many pages:
`Browser.open(url, width, media)` sets the viewport width and the emulated CSS media ("print"
applies the page's @media print rules, as printing does) and loads the page;
`Browser.evaluate` runs a script in it and returns its value; `Browser.screenshot` writes a PNG.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

# A4 (210 mm) at 96 CSS px per inch, less Chrome's default print margins of 0.4 in each side:
# the width of the page box that printed content is laid out in.
A4_CONTENT_WIDTH = 717


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "/usr/bin/chromium", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A headless Chromium with one page (tab), closed by close() or a `with` block."""

    def __init__(self, chromium: str, profile: Path, timeout: float = 60.0):
        commands_in, self._commands = os.pipe()
        self._replies, replies_out = os.pipe()

        def as_fds_3_and_4():          # in the child, before exec
            read, write = os.dup(commands_in), os.dup(replies_out)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self._log = open(profile.parent / f"{profile.name}.log", "w")
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4, commands_in, replies_out), preexec_fn=as_fds_3_and_4,
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            env={**os.environ, "HOME": str(profile.parent)})
        os.close(commands_in)
        os.close(replies_out)
        self._timeout = timeout
        self._buffer = b""
        self._id = 0
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            self._session = self.send("Target.attachToTarget", targetId=target,
                                      flatten=True)["sessionId"]
        except Exception:
            self.close()
            raise

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """One protocol command; its result (events that come before it are dropped)."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self._timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise TimeoutError("no reply from Chromium")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _page(self, method: str, **params) -> dict:
        return self.send(method, session=self._session, **params)

    def open(self, url: str, width: int, media: str = "", height: int = 1000) -> None:
        """Load `url` in a viewport `width` CSS px wide, with CSS media `media` ('' the
        page's own, screen; 'print' as when printed), and wait for its load event."""
        self._page("Emulation.setDeviceMetricsOverride", width=width, height=height,
                   deviceScaleFactor=1, mobile=False)
        self._page("Emulation.setEmulatedMedia", media=media)
        self._page("Page.navigate", url=url)
        deadline = time.monotonic() + self._timeout
        while self.evaluate("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.02)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able)."""
        result = self._page("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {str(result['exceptionDetails'])[:600]}")
        return result["result"].get("value")

    def screenshot(self, path: Path, top: float = 0, height: float | None = None) -> None:
        """A PNG of the page from `top` down (all of it without `height`), at the full width
        of the page's content."""
        size = self.evaluate("[document.documentElement.scrollWidth, "
                             "document.documentElement.scrollHeight]")
        clip = {"x": 0, "y": top, "width": size[0],
                "height": height if height is not None else size[1] - top, "scale": 1}
        shot = self._page("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                          clip=clip)
        Path(path).write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("Browser.close")
                self.process.wait(timeout=10)
            except Exception:
                self.process.kill()
                self.process.wait(timeout=10)
        for fd in (self._commands, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
