"""A small Chrome DevTools Protocol client over Chromium's
--remote-debugging-pipe (fd 3 in, fd 4 out; NUL-separated JSON): no
websocket, no package beyond Python's standard library."""

import json
import os
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, width=1200, height=900):
        exe = find_chromium()
        if exe is None:
            raise RuntimeError("no chromium: apt-get install chromium")
        self.profile = tempfile.mkdtemp(prefix="yace-chromium-")
        # Pipes: Chromium reads commands on fd 3 and writes on fd 4.
        cmd_r, self.cmd_w = os.pipe()
        self.out_r, out_w = os.pipe()
        args = [
            exe,
            "--headless=new",
            "--remote-debugging-pipe",
            "--user-data-dir=" + self.profile,
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--metrics-recording-only",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--window-size=%d,%d" % (width, height),
            "about:blank",
        ]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")

        def fds():
            # Through spare copies: a pipe end may itself be fd 3 or 4,
            # and dup2 onto itself would keep its close-on-exec flag.
            a, b = os.dup(cmd_r), os.dup(out_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds,
            # Our own pipe ends are not inheritable; only fds 3 and 4 (made
            # by dup2 in the child) cross the exec.
            close_fds=False,
        )
        os.close(cmd_r)
        os.close(out_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait()
        for fd in (self.cmd_w, self.out_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            import select

            ready, _, _ = select.select([self.out_r], [], [], 0.5)
            if ready:
                chunk = os.read(self.out_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe (crashed?)")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == mid:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def pump(self, seconds):
        """Collects events for a while."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.events.append(self._read_message(deadline))
            except TimeoutError:
                return

    def wait_event(self, method, session, timeout=20):
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for m in self.events[seen:]:
                if m.get("method") == method and m.get("sessionId") == session:
                    return m
            seen = len(self.events)
            self.events.append(self._read_message(deadline))


class Page:
    """One tab, attached with a flat session."""

    def __init__(self, browser, width=1200, height=900):
        self.b = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.target = target
        self.s = browser.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(domain + ".enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def call(self, method, params=None, timeout=30):
        return self.b.call(method, params, session=self.s, timeout=timeout)

    def events(self, method):
        return [
            m["params"]
            for m in self.b.events
            if m.get("sessionId") == self.s and m.get("method") == method
        ]

    def goto(self, url):
        self.call("Page.navigate", {"url": url})
        self.b.wait_event("Page.loadEventFired", self.s)

    def eval(self, expr):
        r = self.call(
            "Runtime.evaluate",
            {"expression": expr, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in r:
            raise RuntimeError("page script failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def screenshot(self, path, full=True):
        import base64

        params = {"format": "png", "captureBeyondViewport": full}
        if full:
            w, h = self.eval(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}
        data = self.call("Page.captureScreenshot", params, timeout=60)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.b.call("Target.closeTarget", {"targetId": self.target})
