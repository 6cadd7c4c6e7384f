#!/usr/bin/env python3
"""The HTML report, looked at as a person would: real runs of yace against
its embedded target write reports; headless Chromium opens each one and
this script checks what a reader gets.

For each page (a closed-model run, an open-model run, an interrupted run,
an HTTP/2 run, a scenario run, several runs overlaid, a run reported
in Chinese with --lang zh, and the committed results of monitored runs,
--monitor, in English and Chinese): no console
error, no network request but the page itself, every chart drawn (pixels
that are not background in its canvas), the hover tooltip shows values,
the "show data" tables hold rows, the log-scale toggle redraws, the page
reads with scripts off, it prints on A4, and `yace report PAGE.html -F
json` gives back the very result the run wrote. A monitored run's page
also has its Server section: the figures and diagnoses at the top, the
sources (a dropped one marked), its charts drawn on the load charts' time
axis and following their cursor. Screenshots land in the output folder,
to be looked at.

The live page of `yace run --dashboard`, during a run: tests/browser/dashboard.py.

The lab's experiment page (`yace lab report DIR -F html`), for the two
committed experiments (crates/lab/tests/fixtures: a concurrency sweep and a
before/after), in English and Chinese: every chart drawn, no console error
and no request, error bars drawn (the before/after's charts lose ink
without them), the knees marked, the verdict table with its coloured
words, the hover tooltip, the log toggle, each run's link leading to its
own report (which opens), and the figures with scripts off.

usage: tests/browser/report.py --yace target/debug/yace --out target/browser
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ left in the tree
import cdp  # noqa: E402
import dashboard  # noqa: E402

FAILURES = []


def check(cond, what):
    if cond:
        print("  ok   " + what)
    else:
        print("  FAIL " + what)
        FAILURES.append(what)


def run(yace, args, out, name, interrupt_after=None, env=None):
    """One yace run writing NAME.json and NAME.html in OUT."""
    j = os.path.join(out, name + ".json")
    h = os.path.join(out, name + ".html")
    cmd = [yace] + args + ["--json", j, "--html", h, "-q"]
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e)
    if interrupt_after is not None:
        time.sleep(interrupt_after)
        p.send_signal(signal.SIGINT)  # our own child, by its handle
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    if not os.path.exists(h):
        sys.exit("%s: no HTML written (exit %s): %s" % (name, p.returncode, err.decode()))
    return j, h


SCENARIO = """
[load]
users = 4
think = "none"

[[journey]]
name = "visit"

  [[journey.step]]
  name = "home"
  url = "/"
  check = [{ status = 200 }]

  [[journey.step]]
  name = "session"
  url = "/session?ms=1"
  check = [{ status = 200 }, { body_contains = "session " }]
"""

PIXELS = """
(() => {
  const out = [];
  for (const plot of document.querySelectorAll('.plot')) {
    let ink = 0;
    for (const c of plot.querySelectorAll('canvas')) {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) {
        const bg = d[i + 3] === 0 || (d[i] > 235 && d[i + 1] > 235 && d[i + 2] > 235);
        if (!bg) ink++;
      }
    }
    out.push([plot.dataset.chart, ink, plot.dataset.drawn === '1']);
  }
  return out;
})()
"""


def look(browser, path, shots, name, expect_charts, full=False):
    print("%s (%s)" % (name, os.path.basename(path)))
    url = "file://" + os.path.abspath(path)
    page = cdp.Page(browser)
    page.goto(url)
    browser.pump(0.3)
    size = os.path.getsize(path)
    check(size < 1_000_000, "page is %d KB (a short run: well under 1 MB)" % (size // 1024))

    # No network: the only request is the page itself.
    urls = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
    others = [u for u in urls if u != url]
    check(urls and not others, "no request but the page itself %s" % (others[:3] or ""))

    charts = page.eval("document.querySelectorAll('.plot').length")
    drawn = page.eval("Number(document.documentElement.dataset.charts || 0)")
    check(charts >= expect_charts, "%d charts on the page (expected at least %d)" % (charts, expect_charts))
    check(drawn == charts, "script drew %d of %d charts" % (drawn, charts))
    for chart, ink, ok in page.eval(PIXELS):
        check(ok and ink > 400, "chart %s drawn: %d non-background pixels" % (chart, ink))

    tables = page.eval(
        "[...document.querySelectorAll('figure.chart')].map(f => f.querySelectorAll('details table tbody tr').length)"
    )
    check(tables and all(n > 0 for n in tables), "every chart has its data table (%s rows)" % tables)

    # Hover: the tooltip shows exact values, and the other time charts follow.
    box = page.eval(
        "(() => { const o = document.querySelector('.plot .u-over');"
        " o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect();"
        " return [r.left + r.width * 0.55, r.top + r.height / 2]; })()"
    )
    page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})
    browser.pump(0.3)
    tip = page.eval(
        "(() => { const t = document.querySelector('.yace-tip');"
        " return [getComputedStyle(t).display, t.innerText]; })()"
    )
    check(tip[0] == "block" and any(ch.isdigit() for ch in tip[1]),
          "hover shows a tooltip: %r" % tip[1].replace("\n", " | ")[:90])
    page.screenshot(os.path.join(shots, name + "-hover.png"), full=False)

    # The log-scale toggle redraws without error.
    toggled = page.eval(
        "(() => { const b = document.querySelector('input[data-log]'); if (!b) return null;"
        " b.click(); return document.querySelector('.plot[data-chart=\"' + b.dataset.log + '\"] canvas') !== null; })()"
    )
    if toggled is not None:
        check(toggled, "log scale toggle redraws its chart")

    page.screenshot(os.path.join(shots, name + ".png"), full=full)

    errors = [e for e in page.events("Runtime.exceptionThrown")]
    errors += [e for e in page.events("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")]
    errors += [e for e in page.events("Log.entryAdded") if e["entry"]["level"] == "error"]
    check(not errors, "no console error %s" % (json.dumps(errors)[:300] if errors else ""))
    page.close()


def print_and_noscript(browser, path, shots):
    print("print and scripts off (%s)" % os.path.basename(path))
    url = "file://" + os.path.abspath(path)
    page = cdp.Page(browser)
    page.goto(url)
    page.call("Emulation.setEmulatedMedia", {"media": "print"})
    browser.pump(0.2)
    page.eval("window.dispatchEvent(new Event('beforeprint'))")
    # (Measured before the screenshot, which resizes the viewport.)
    widths = page.eval("[...document.querySelectorAll('.plot .u-wrap')].map(c => c.getBoundingClientRect().width)")
    check(widths and max(widths) <= 720, "charts fit the A4 width when printing (%dpx)" % max(widths or [0]))
    page.screenshot(os.path.join(shots, "print.png"))
    pdf = page.call(
        "Page.printToPDF",
        {"paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": True, "printBackground": True},
        timeout=60,
    )["data"]
    import base64

    raw = base64.b64decode(pdf)
    with open(os.path.join(shots, "report.pdf"), "wb") as f:
        f.write(raw)
    pages = raw.count(b"/Type /Page") - raw.count(b"/Type /Pages")
    check(raw.startswith(b"%PDF") and pages >= 2, "prints as a %d-page A4 PDF" % pages)
    page.close()

    page = cdp.Page(browser)
    page.call("Emulation.setScriptExecutionDisabled", {"value": True})
    page.goto(url)
    facts = page.eval(
        "[document.querySelectorAll('.headline .card').length,"
        " document.querySelectorAll('figure.chart details table').length,"
        " document.querySelector('.verdict .head').innerText,"
        " document.documentElement.dataset.charts || null]"
    )
    check(facts[0] >= 10 and facts[1] >= 5 and facts[2] and facts[3] is None,
          "with scripts off: %d headline figures, %d data tables, verdict %r" % tuple(facts[:3]))
    page.screenshot(os.path.join(shots, "noscript.png"), full=False)
    page.close()


def chinese(browser, path):
    """A --lang zh page reads in Chinese, in the page and in the tooltip."""
    page = cdp.Page(browser)
    page.goto("file://" + os.path.abspath(path))
    facts = page.eval(
        "[document.documentElement.lang, document.querySelector('.verdict .head').innerText,"
        " document.querySelector('figure.chart h3').innerText,"
        " [...document.querySelectorAll('.u-legend .u-label')].map(e => e.innerText).join(' ')]"
    )
    check(facts[0] == "zh-CN" and facts[1].startswith("已完成") and facts[2] == "每秒响应数",
          "the Chinese page says %r, %r" % (facts[1], facts[2]))
    check("响应/秒" in facts[3], "its legends are Chinese: %r" % facts[3][:60])
    page.close()


# What a monitored run's page shows of the server, and how its charts sit.
SERVER = """
(() => {
  const plots = [...document.querySelectorAll('.plot')];
  const time = plots.filter(p => p.yacePlot && p.dataset.kind === 'time');
  const server = plots.filter(p => p.closest('section.server'));
  return {
    head: !!document.querySelector('section.server-head'),
    section: !!document.querySelector('section.server'),
    cards: document.querySelectorAll('.headline.server .card').length,
    diagnoses: [...document.querySelectorAll('.diagnoses li')].map(e => e.innerText),
    verdict: document.querySelector('.verdict').innerText,
    sources: document.querySelectorAll('table.sources tr.source').length,
    dropped: [...document.querySelectorAll('table.sources tr.source.dropped')].map(e => e.innerText),
    charts: server.map(p => p.dataset.chart),
    spans: time.map(p => [p.dataset.chart, p.yacePlot.scales.x.min, p.yacePlot.scales.x.max]),
    tables: server.map(p => p.closest('figure').querySelectorAll('details tbody tr').length),
  };
})()
"""

# After hovering the first load chart: the time under every time chart's cursor.
CURSORS = """
(() => [...document.querySelectorAll('.plot')].filter(p => p.yacePlot && p.yacePlot.cursor.sync)
  .map(p => { const u = p.yacePlot; return [p.dataset.chart, u.cursor.left >= 0 ? u.posToVal(u.cursor.left, 'x') : null]; }))()
"""


def monitored(browser, path, fixture, shots, name):
    """A --monitor run's page: the Server section, on the run's time axis."""
    print("%s: the server's side" % name)
    want = json.load(open(fixture))["monitor"]
    page = cdp.Page(browser)
    page.goto("file://" + os.path.abspath(path))
    browser.pump(0.3)
    got = page.eval(SERVER)
    check(got["head"] and got["section"], "the page has the Server figures and the Server section")
    check(got["cards"] >= 3, "%d server figures at the top" % got["cards"])
    problems = [d for d in want["diagnoses"] if d["severity"] == "problem"]
    check(len(got["diagnoses"]) == len(want["diagnoses"]), "%d diagnoses shown" % len(got["diagnoses"]))
    if name.endswith("zh"):
        check(all("解决" in d for d in got["diagnoses"]), "each diagnosis with its fix, in Chinese")
    else:
        for d in want["diagnoses"]:
            shown = any(d["message"] in g and d["fix"] in g for g in got["diagnoses"])
            check(shown, "diagnosis %s: message and fix shown" % d["code"])
        for d in problems:
            check(d["message"] in got["verdict"], "problem %s said in the verdict" % d["code"])
    check(got["sources"] == len(want["sources"]), "%d sources in the table" % got["sources"])
    dropped = [s for s in want["sources"] if s["state"] == "dropped"]
    check(len(got["dropped"]) == len(dropped), "%d dropped source(s) marked" % len(got["dropped"]))
    check(len(got["charts"]) >= 2 * len([s for s in want["sources"] if s["kind"] in ("system", "process")]),
          "server charts: %s" % " ".join(got["charts"]))
    check(all(n > 0 for n in got["tables"]), "each server chart has its data table %s" % got["tables"])
    spans = {(round(a, 3), round(b, 3)) for _, a, b in got["spans"]}
    check(len(spans) == 1, "every time chart spans the same seconds: %s" % sorted(spans))

    # Hover a load chart: every server chart's cursor is at the same time.
    box = page.eval(
        "(() => { const o = document.querySelector('.plot[data-chart=\"throughput\"] .u-over');"
        " o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect();"
        " return [r.left + r.width * 0.6, r.top + r.height / 2]; })()"
    )
    page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})
    browser.pump(0.3)
    at = page.eval(CURSORS)
    times = [t for c, t in at if c.startswith("server-") or c.startswith("run")]
    lead = dict(at).get("throughput")
    check(lead is not None and times and all(t is not None and abs(t - lead) < 0.05 for t in times),
          "the server charts follow the load charts' cursor (at %.2f s: %s)"
          % (lead or -1, sorted({round(t, 2) for t in times if t is not None})))

    # The section as a reader sees it.
    top = page.eval("document.querySelector('section.server-head').getBoundingClientRect().top + scrollY")
    section = page.eval("document.querySelector('section.server').getBoundingClientRect().top + scrollY")
    page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 5, "y": 5})
    for shot, y, h in ((name + "-top.png", 0, top + 700), (name + "-server.png", section, 2600)):
        import base64

        data = page.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": y, "width": 1200, "height": h, "scale": 1}}, timeout=60)["data"]
        with open(os.path.join(shots, shot), "wb") as f:
            f.write(base64.b64decode(data))
    page.close()

    # With scripts off, the figures and every chart's table still read.
    page = cdp.Page(browser)
    page.call("Emulation.setScriptExecutionDisabled", {"value": True})
    page.goto("file://" + os.path.abspath(path))
    off = page.eval(
        "[document.querySelectorAll('.headline.server .card').length,"
        " document.querySelectorAll('section.server figure.chart details table').length,"
        " document.querySelectorAll('table.sources tr.source').length]"
    )
    check(off[0] >= 3 and off[1] == len(got["charts"]) and off[2] == len(want["sources"]),
          "with scripts off: %d server figures, %d server tables, %d sources" % tuple(off))
    page.close()


# The lab page's facts: charts, error bars, marks, verdicts, links.
LAB = """
(() => {
  const plots = [...document.querySelectorAll('.plot')].filter(p => p.yacePlot);
  const meta = p => p.yacePlot.series.map(s => s._yace).filter(Boolean);
  return {
    charts: plots.map(p => p.dataset.chart),
    kinds: [...new Set(plots.map(p => p.dataset.kind))],
    errs: plots.map(p => meta(p).some(m => m.lo && m.lo.some(v => v != null))),
    dots: plots.map(p => meta(p).reduce((n, m) => n + (m.dots || []).reduce((k, d) => k + d.length, 0), 0)),
    verdicts: [...document.querySelectorAll('table.verdicts tbody tr')].map(r => r.innerText),
    words: [...document.querySelectorAll('.verdict-word')].map(e => [e.className, getComputedStyle(e).color]),
    links: [...document.querySelectorAll('td.runlinks a')].map(a => a.href),
    lang: document.documentElement.lang,
    h3: document.querySelector('figure.chart h3').innerText,
    legend: [...document.querySelectorAll('.u-legend .u-label')].map(e => e.innerText).join(' | '),
  };
})()
"""

# Ink of each chart's canvas with and without its error bars (uPlot
# redraws on a microtask: wait for it).
ERRBAR_INK = """
(async () => {
  const settle = () => new Promise(r => setTimeout(r, 50));
  const ink = p => { let n = 0; for (const c of p.querySelectorAll('canvas')) {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] !== 0 && !(d[i] > 235 && d[i + 1] > 235 && d[i + 2] > 235)) n++; }
    return n; };
  const out = [];
  for (const p of [...document.querySelectorAll('.plot')].filter(p => p.yacePlot)) {
    const u = p.yacePlot, with_ = ink(p);
    const saved = u.series.map(s => s._yace && s._yace.lo);
    u.series.forEach(s => { if (s._yace) s._yace.lo = null; });
    u.redraw(false, false);
    await settle();
    const without = ink(p);
    u.series.forEach((s, i) => { if (s._yace) s._yace.lo = saved[i]; });
    u.redraw(false, false);
    await settle();
    out.push([p.dataset.chart, with_, without]);
  }
  return out;
})()
"""


def lab_page(browser, path, shots, name, zh):
    """The lab's experiment page, as a reader gets it."""
    print("%s (%s)" % (name, os.path.relpath(path)))
    url = "file://" + os.path.abspath(path)
    page = cdp.Page(browser)
    page.goto(url)
    browser.pump(0.4)
    urls = [e["request"]["url"] for e in page.events("Network.requestWillBeSent")]
    check(urls and all(u == url for u in urls), "no request but the page itself")
    drawn = page.eval("Number(document.documentElement.dataset.charts || 0)")
    got = page.eval(LAB)
    check(len(got["charts"]) >= 2 and drawn == len(got["charts"]),
          "script drew %d of %d charts: %s" % (drawn, len(got["charts"]), " ".join(got["charts"])))
    for chart, ink, ok in page.eval(PIXELS):
        check(ok and ink > 400, "chart %s drawn: %d non-background pixels" % (chart, ink))
    sweep = "before-after" not in name
    check(got["kinds"] == (["sweep"] if sweep else ["groups"]),
          "charts against the swept parameter, or a dot plot of targets: %s" % got["kinds"])
    check(all(n > 0 for n in got["dots"]), "each run a dot: %s" % got["dots"])
    if sweep:
        # Three repetitions: no exact interval; the knees marked instead —
        # where throughput stops growing on its chart, where latency
        # departs on the latency charts, none on the others.
        marks = page.eval("Object.fromEntries(JSON.parse(document.getElementById('yace-charts').textContent).charts.map(c => [c.id, (c.marks || []).map(m => m.x)]))")
        check(marks.get("lab-throughput") == [8, 16] and marks.get("lab-p50") == [8, 16],
              "the knees marked at 8 and 16 on throughput and latency: %s" % marks)
        check(all(m == [] for k, m in marks.items() if k not in ("lab-throughput", "lab-p50", "lab-p99")),
              "no knee on the other charts: %s" % marks)
    else:
        check(all(got["errs"]), "every chart has error bars: %s" % got["errs"])
        inks = page.eval(ERRBAR_INK)
        check(all(w > wo for _, w, wo in inks),
              "the error bars are drawn (ink with and without: %s)" % [(c, w, wo) for c, w, wo in inks])
    check(len(got["verdicts"]) >= 1, "the verdict table: %d rows, e.g. %r" % (len(got["verdicts"]), (got["verdicts"] or [""])[0][:90]))
    colours = {c: col for c, col in got["words"]}
    check(len(set(colours.values())) == len(colours) or len(colours) == 1,
          "verdict words coloured by kind: %s" % colours)
    if not sweep:
        check(any("better" in c for c in colours), "the before/after is judged better: %s" % list(colours))
    # Every run linked to its own report, beside its result.
    from urllib.parse import unquote, urlparse
    files = [unquote(urlparse(h).path) for h in got["links"]]
    state = json.load(open(os.path.join(os.path.dirname(path), "experiment.json")))
    check(len(files) == len(state["runs"]) and all(os.path.exists(f) for f in files),
          "%d runs linked, every link resolves to a file" % len(files))
    check(all(f.endswith(".zh.html") == zh for f in files), "the runs' pages are in the page's language")
    if zh:
        check(got["lang"] == "zh-CN" and got["h3"] == "吞吐量", "the Chinese page says %r" % got["h3"])
        check("USL 拟合" in got["legend"] or not sweep, "its legends are Chinese: %r" % got["legend"][:80])

    # Hover the first chart: the figures of the nearest measured point.
    box = page.eval(
        "(() => { const o = document.querySelector('.plot .u-over');"
        " o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect();"
        " return [r.left + r.width * 0.8, r.top + r.height / 2]; })()"
    )
    page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})
    browser.pump(0.3)
    tip = page.eval("(() => { const t = document.querySelector('.yace-tip'); return [getComputedStyle(t).display, t.innerText]; })()")
    check(tip[0] == "block" and ("运行" if zh else "runs") in tip[1] and any(ch.isdigit() for ch in tip[1]),
          "hover shows the point's median and runs: %r" % tip[1].replace("\n", " | ")[:120])
    page.screenshot(os.path.join(shots, name + "-hover.png"), full=False)
    page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 5, "y": 5})
    toggled = page.eval(
        "(() => { const b = document.querySelector('input[data-log]'); if (!b) return null;"
        " b.click(); return document.querySelector('.plot[data-chart=\"' + b.dataset.log + '\"] canvas') !== null; })()"
    )
    if toggled is not None:
        check(toggled, "log scale toggle redraws its chart")
        page.eval("document.querySelector('input[data-log]').click()")
    page.screenshot(os.path.join(shots, name + ".png"), full=True)
    errors = [e for e in page.events("Runtime.exceptionThrown")]
    errors += [e for e in page.events("Runtime.consoleAPICalled") if e["type"] in ("error", "assert")]
    errors += [e for e in page.events("Log.entryAdded") if e["entry"]["level"] == "error"]
    check(not errors, "no console error %s" % (json.dumps(errors)[:300] if errors else ""))
    page.close()

    # A run's own report, as its link opens it.
    page = cdp.Page(browser)
    page.goto(got["links"][0])
    browser.pump(0.2)
    run = page.eval("[document.querySelectorAll('.plot canvas').length > 0, document.querySelector('.verdict .head').innerText]")
    check(run[0] and run[1], "a run's link opens its report: %r" % run[1])
    page.close()

    # With scripts off: the figures behind each chart, and the tables.
    page = cdp.Page(browser)
    page.call("Emulation.setScriptExecutionDisabled", {"value": True})
    page.goto(url)
    off = page.eval(
        "[document.querySelectorAll('figure.chart details table').length,"
        " document.querySelectorAll('table.points tbody tr').length,"
        " document.querySelectorAll('table.verdicts tbody tr').length]"
    )
    check(off[0] == len(got["charts"]) and off[1] > 0 and off[2] == len(got["verdicts"]),
          "with scripts off: %d chart tables, %d points, %d verdicts" % tuple(off))
    page.close()


def lab_pages(yace, out):
    """The committed experiments, copied (their runs' pages are written
    beside their results), each page in English and Chinese."""
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../crates/lab/tests/fixtures")
    pages = []
    for name in ("concurrency", "before-after"):
        d = os.path.join(out, "lab-" + name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(os.path.join(fixtures, name), d)
        for lang in ("en", "zh"):
            page = os.path.join(d, "report.html" if lang == "en" else "report.zh.html")
            subprocess.run([yace, "lab", "report", d, "-F", "html", "--lang", lang, "-o", page], check=True)
            pages.append((page, "lab-%s%s" % (name, "" if lang == "en" else "-zh"), lang == "zh"))
    return pages


def read_back(yace, html, json_path):
    got = subprocess.run([yace, "report", html, "-F", "json"], capture_output=True, check=True).stdout
    want = subprocess.run([yace, "report", json_path, "-F", "json"], capture_output=True, check=True).stdout
    check(got == want, "yace report %s -F json gives back the run's result" % os.path.basename(html))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yace", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scenario-dir", default=None)
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    yace = os.path.abspath(a.yace)

    print("runs (against the embedded target)")
    single = run(yace, ["run", "-c", "8", "-d", "3s"], out, "closed")
    opened = run(yace, ["run", "--rate", "400", "-d", "3s"], out, "open")
    stopped = run(yace, ["run", "-c", "4", "-d", "30s"], out, "interrupted", interrupt_after=2.5)
    h2 = run(yace, ["run", "--http2", "-c", "2", "--streams", "8", "-d", "2s"], out, "http2")
    plan = os.path.join(out, "visit.toml")
    with open(plan, "w") as f:
        f.write(SCENARIO)
    scen = run(yace, ["run", "-f", plan, "-d", "2s"], out, "scenario")
    zh = run(yace, ["run", "--rate", "300", "-d", "3s", "--lang", "zh"], out, "zh")
    # A find-max answer (two short trials on the embedded target) as a page.
    fm_json = os.path.join(out, "find-max.json")
    subprocess.run(
        [yace, "find-max", "--slo", "p99<1s", "--start-rate", "200", "--max-rate", "400",
         "--trial", "1s", "--json", fm_json],
        check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    fm_page = os.path.join(out, "find-max.html")
    subprocess.run([yace, "report", fm_json, "-F", "html", "-o", fm_page], check=True)
    several = os.path.join(out, "several.html")
    subprocess.run(
        [yace, "report", single[0], opened[0], h2[0], "-F", "html", "-o", several], check=True
    )
    # Monitored runs (--monitor): the committed results of real runs, on
    # loopback, that the render tests use (crates/report/tests/render/main.rs).
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../crates/report/tests/render/fixtures")
    mon = []
    for fx, lang in (("monitor", "en"), ("monitor-php", "en"), ("monitor-php", "zh")):
        src = os.path.join(fixtures, fx + ".json")
        page = os.path.join(out, "%s%s.html" % (fx, "" if lang == "en" else "-zh"))
        subprocess.run([yace, "report", src, "-F", "html", "--lang", lang, "-o", page], check=True)
        mon.append((src, page))
    labs = lab_pages(yace, out)
    interrupted = json.load(open(stopped[0]))
    check(interrupted["end"]["partial"], "the interrupted run's result is marked partial")
    check("Partial result" in open(stopped[1]).read(), "its page says so at the top")

    browser = cdp.Browser()
    try:
        look(browser, single[1], out, "closed", 7, full=True)
        look(browser, opened[1], out, "open", 7, full=True)
        look(browser, stopped[1], out, "interrupted", 7)
        look(browser, h2[1], out, "http2", 7)
        look(browser, scen[1], out, "scenario", 7)
        look(browser, several, out, "several", 6, full=True)
        look(browser, zh[1], out, "zh", 7, full=True)
        look(browser, fm_page, out, "find-max", 1, full=True)
        for src, page in mon:
            name = os.path.basename(page)[:-5]
            look(browser, page, out, name, 12, full=True)
            monitored(browser, page, src, out, name)
        chinese(browser, zh[1])
        print_and_noscript(browser, single[1], out)
        for page, name, is_zh in labs:
            lab_page(browser, page, out, name, is_zh)
        # The live page (yace run --dashboard), during a run of its own.
        dashboard.live_page(browser, yace, out, check)
    finally:
        browser.close()

    print("read back")
    for j, h in [single, opened, stopped, h2, scen, zh] + mon:
        read_back(yace, h, j)
    back = subprocess.run([yace, "report", several], capture_output=True, check=True).stdout.decode()
    check("Comparing 3 runs" in back, "a page of several runs reads back as several")

    if FAILURES:
        print("\n%d check(s) failed:\n  %s" % (len(FAILURES), "\n  ".join(FAILURES)))
        sys.exit(1)
    print("\nall browser checks passed; screenshots in %s" % out)


if __name__ == "__main__":
    main()
