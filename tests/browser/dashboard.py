#!/usr/bin/env python3
"""The live page (`yace run --dashboard`), looked at during a real run of
yace against its embedded target, in headless Chromium.

While the run goes: the page loads from the address yace printed on
stderr, its charts are drawn and gain points (the chart data read twice, a
second apart), the figures above them move. At the end: the page offers
the report, which is byte for byte the one `--html` wrote, and turns into
it (its charts drawn, its verdict read). Throughout: no console error, and
no request but to the page's own address. Screenshots land in the output
folder (live-running.png, live-ended.png, live-report.png), to be looked at.

With --dashboard-control (a second, short run): the + button clicked with
the mouse raises the rate; the page says what yace did and the factor now
(live-control.png), and the result records the change.

report.py runs this after the report's own checks (scripts/test.sh);
alone: tests/browser/dashboard.py --yace target/debug/yace --out target/browser
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ left in the tree
import cdp  # noqa: E402

# Per chart: points with a figure on its first line, whether it is drawn.
POINTS = """
(() => [...document.querySelectorAll('.plot')].map(p => {
  const u = p.yacePlot;
  return [p.dataset.chart, u ? u.data[1].filter(v => v != null).length : -1, p.dataset.drawn === '1'];
}))()
"""

CARDS = "[...document.querySelectorAll('#yace-live-cards .card')].map(c => c.innerText.replace('\\n', ' '))"


def wait_for(page, expr, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = page.eval(expr)
        if v:
            return v
        page.b.pump(0.1)
    raise TimeoutError("waited %ss for %s" % (seconds, what))


def address(proc, seconds=20):
    """The page's address, from yace's stderr line `yace: live page at URL …`."""
    deadline = time.monotonic() + seconds
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        if not line:
            break
        seen.append(line)
        if "live page at " in line:
            return line.split("live page at ", 1)[1].split()[0]
    raise RuntimeError("yace printed no live page address: %r" % "".join(seen))


def shot(page, path, y=0, height=None):
    h = height or page.eval("document.documentElement.scrollHeight")
    data = page.call("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": y, "width": 1200, "height": h, "scale": 1}}, timeout=60)["data"]
    with open(path, "wb") as f:
        f.write(base64.b64decode(data))


def live_page(browser, yace, out, check):
    """Both runs: the read-only page, then the page that steers."""
    watch_page(browser, yace, out, check)
    control_page(browser, yace, out, check)


def watch_page(browser, yace, out, check):
    print("live page (yace run --rate 300 -d 6s --dashboard, during the run)")
    j = os.path.join(out, "live.json")
    h = os.path.join(out, "live.html")
    saved = os.path.join(out, "live-saved")
    os.makedirs(saved, exist_ok=True)
    for f in os.listdir(saved):
        os.remove(os.path.join(saved, f))
    env = dict(os.environ, YACE_LANG="en")
    proc = subprocess.Popen(
        [yace, "run", "--rate", "300", "-d", "6s", "--dashboard", "--json", j, "--html", h, "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    page = None
    try:
        url = address(proc)
        origin = url.split("/", 3)[:3]
        origin = "/".join(origin) + "/"
        check(url.startswith("http://127.0.0.1:") and "token" not in url,
              "the page listens on 127.0.0.1, no token needed there: %s" % url)
        browser.call("Browser.setDownloadBehavior",
                     {"behavior": "allow", "downloadPath": saved, "eventsEnabled": True})
        page = cdp.Page(browser)
        page.goto(url)
        wait_for(page, "window.yaceLive && window.yaceLive.events > 0 && document.querySelectorAll('.plot canvas').length >= 5",
                 10, "the stream's first charts")
        first = page.eval(POINTS)
        status1 = page.eval("document.getElementById('yace-live-status').innerText")
        browser.pump(1.2)
        second = page.eval(POINTS)
        status2 = page.eval("document.getElementById('yace-live-status').innerText")
        ids = [c for c, _, _ in second]
        check(len(second) >= 5 and all(ok for _, _, ok in second),
              "%d time charts drawn while the run goes: %s" % (len(second), " ".join(ids)))
        grew = [c for (c, a, _), (_, b, _) in zip(first, second) if b > a]
        check(len(grew) >= 4, "a second later the charts have more points: %s → %s"
              % ([n for _, n, _ in first], [n for _, n, _ in second]))
        check(status1 != status2 and status2.startswith("Running"),
              "the status moves: %r → %r" % (status1, status2))
        cards = page.eval(CARDS)
        check(len(cards) >= 6 and any(c.endswith("responses/s") and c[0].isdigit() for c in cards),
              "figures above the charts: %s" % " | ".join(cards))
        page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 5, "y": 5})
        shot(page, os.path.join(out, "live-running.png"))

        wait_for(page, "window.yaceLive.report !== null", 20, "the report at the end")
        ended = page.eval(
            "[document.getElementById('yace-live-end').hidden, document.getElementById('yace-live-status').innerText,"
            " document.getElementById('yace-live-save').getAttribute('href') || '', document.getElementById('yace-live-save').download]")
        check(not ended[0] and ended[1].startswith("Ended after"), "the end is said: %r" % ended[1])
        check(ended[2].startswith("blob:" + origin) and ended[3].endswith(".html"),
              "the report is offered to save as %s" % ended[3])
        shot(page, os.path.join(out, "live-ended.png"), height=900)
        proc.wait(timeout=20)
        check(proc.returncode == 0, "yace ended with 0 (%s)" % proc.returncode)
        written = open(h, encoding="utf-8").read()
        got = page.eval("window.yaceLive.report")
        check(got == written, "the report the page holds is the one --html wrote (%d KB)" % (len(written) // 1024))

        # Save it: the browser's download is that file too.
        page.eval("document.getElementById('yace-live-save').click()")
        deadline = time.monotonic() + 10
        files = []
        while time.monotonic() < deadline:
            files = [f for f in os.listdir(saved) if f.endswith(".html")]
            if files and os.path.getsize(os.path.join(saved, files[0])) == len(written.encode()):
                break
            browser.pump(0.2)
        check(files and open(os.path.join(saved, files[0]), encoding="utf-8").read() == written,
              "\"Save the report\" saves it: %s" % (files or "nothing"))

        urls = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
        others = [u for u in urls if not (u.startswith(origin) or u.startswith("blob:" + origin))]
        check(urls and not others, "no request but to the page's own address (%d: %s) %s"
              % (len(urls), sorted({u.split("?")[0].replace(origin, "/") for u in urls}), others[:3]))
        errors = [e for e in page.events("Runtime.exceptionThrown")]
        errors += [e for e in page.events("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")]
        errors += [e for e in page.events("Log.entryAdded") if e["entry"]["level"] == "error"]
        check(not errors, "no console error %s" % (json.dumps(errors)[:300] if errors else ""))

        # Turned into the report: its charts drawn, its verdict read.
        page.eval("document.getElementById('yace-live-show').click()")
        browser.pump(0.5)
        report = page.eval(
            "[document.querySelector('.verdict .head') && document.querySelector('.verdict .head').innerText,"
            " Number(document.documentElement.dataset.charts || 0), !!document.querySelector('script#yace-result, script[type=\"application/x-yace-result\"]')]")
        check(report[0] and report[1] >= 7 and report[2],
              "\"Show the report here\" turns the page into it: %r, %d charts drawn" % (report[0], report[1]))
        shot(page, os.path.join(out, "live-report.png"), height=1400)
        result = json.load(open(j))
        check(result["summary"]["requests"] == 1800, "the run sent its 1,800 requests with the page open (%d)"
              % result["summary"]["requests"])
    finally:
        if page is not None:
            page.close()
        if proc.poll() is None:
            proc.kill()  # our own child, by its handle
            proc.wait()


def control_page(browser, yace, out, check):
    print("steering from the page (yace run --rate 100 -d 4s --dashboard --dashboard-control)")
    j = os.path.join(out, "live-control.json")
    env = dict(os.environ, YACE_LANG="en")
    proc = subprocess.Popen(
        [yace, "run", "--rate", "100", "-d", "4s", "--dashboard", "--dashboard-control",
         "--json", j, "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    page = None
    try:
        url = address(proc)
        origin = "/".join(url.split("/", 3)[:3]) + "/"
        token = url.split("?token=", 1)[1] if "?token=" in url else ""
        check(url.startswith("http://127.0.0.1:") and len(token) == 32,
              "control needs a token even on 127.0.0.1: one was made, in the address")
        page = cdp.Page(browser)
        page.goto(url)
        wait_for(page, "window.yaceLive && window.yaceLive.events > 0", 10, "the stream")
        # A real click on the + button, where it is drawn.
        box = page.eval("(() => { const r = document.querySelector('[data-control=faster]')"
                        ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            page.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})
        said = wait_for(page, "window.yaceLive.steered > 0 && "
                        "document.getElementById('yace-live-steered').innerText", 10, "yace's answer")
        now = page.eval("document.getElementById('yace-live-now').innerText")
        check(said.startswith("rate ×1.10: 110/s from ") and now.startswith("×1.10"),
              "the click raised the rate; the page says %r, now %r" % (said, now))
        shot(page, os.path.join(out, "live-control.png"), height=520)
        wait_for(page, "window.yaceLive.report !== null", 20, "the report at the end")
        check(page.eval("document.getElementById('yace-live-control').hidden"),
              "the controls go away at the end")
        proc.wait(timeout=20)
        check(proc.returncode == 0, "yace ended with 0 (%s)" % proc.returncode)
        result = json.load(open(j))
        segs = (result.get("steering") or {}).get("segments") or []
        check(len(segs) == 2 and segs[1]["factor"] == 1.1
              and result["summary"]["planned"] == result["steering"]["planned"] > 400,
              "the result records the change: %s, %s planned" % (
                  [(s["at_s"], s["factor"]) for s in segs], result["summary"]["planned"]))
        check(token not in open(j).read(), "the result holds no token")
        urls = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
        others = [u for u in urls if not (u.startswith(origin) or u.startswith("blob:" + origin))]
        check(urls and not others and any(u == origin + "control" for u in urls),
              "no request but to the page's own address, the control post among them (%s) %s"
              % (sorted({u.split("?")[0].replace(origin, "/") for u in urls}), others[:3]))
        posted = [e["request"] for e in page.events("Network.requestWillBeSent")
                  if e["request"]["url"] == origin + "control"]
        check(posted and posted[0]["method"] == "POST"
              and posted[0]["headers"].get("X-Yace-Token") == token,
              "the click posted with the token in its header, not its address")
        errors = [e for e in page.events("Runtime.exceptionThrown")]
        errors += [e for e in page.events("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")]
        errors += [e for e in page.events("Log.entryAdded") if e["entry"]["level"] == "error"]
        check(not errors, "no console error %s" % (json.dumps(errors)[:300] if errors else ""))
    finally:
        if page is not None:
            page.close()
        if proc.poll() is None:
            proc.kill()  # our own child, by its handle
            proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yace", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    failures = []

    def check(cond, what):
        print(("  ok   " if cond else "  FAIL ") + what)
        if not cond:
            failures.append(what)

    browser = cdp.Browser()
    try:
        live_page(browser, os.path.abspath(a.yace), out, check)
    finally:
        browser.close()
    if failures:
        print("\n%d check(s) failed:\n  %s" % (len(failures), "\n  ".join(failures)))
        sys.exit(1)
    print("\nall live page checks passed; screenshots in %s" % out)


if __name__ == "__main__":
    main()
