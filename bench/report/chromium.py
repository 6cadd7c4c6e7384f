#!/usr/bin/env python3
"""Milliseconds from navigation start until the report's script has drawn
every chart, in headless Chromium. usage: chromium.py PAGE.html"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/browser"))
import cdp  # noqa: E402

b = cdp.Browser()
try:
    page = cdp.Page(b)
    page.goto("file://" + os.path.abspath(sys.argv[1]))
    ms = page.eval("window.yaceDrawnMs")
    if ms is None:
        sys.exit("the page's charts were not drawn")
    print("%.0f" % ms)
finally:
    b.close()
