#!/usr/bin/env bash
# docs/img/report.sh — regenerates docs/img/report.png, the README's picture
# of the HTML report: an open-model ramp against the embedded target's
# /pool route (8 workers × 20 ms: a known capacity of 400 req/s), so the
# knee shows, drawn by headless Chromium.
#
#   docs/img/report.sh                 # builds target/release/yace first
#   YACE=target/debug/yace docs/img/report.sh
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ -z "${YACE:-}" ]; then
    (cd "$REPO" && cargo build --release --locked -q -p yace)
    YACE="$REPO/target/release/yace"
fi
OUT=$(mktemp -d /tmp/yace-img.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
"$YACE" serve --port 0 > "$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true; rm -rf "$OUT"' EXIT
for _ in $(seq 50); do grep -q "http://" "$OUT/serve.log" && break; sleep 0.1; done
URL=$(grep -o 'http://[0-9.:]*/' "$OUT/serve.log" | head -1)
"$YACE" run "${URL}pool?ms=20&workers=8&queue=200" --stages 20s:100-600 --max-inflight 300 \
    --timeout 5s -q --html "$OUT/report.html" >/dev/null || true
REPO="$REPO" python3 - "$OUT/report.html" "$REPO/docs/img/report.png" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["REPO"], "tests/browser"))
import cdp
b = cdp.Browser()
try:
    p = cdp.Page(b, width=1100, height=1750)
    p.goto("file://" + os.path.abspath(sys.argv[1]))
    p.screenshot(sys.argv[2], full=False)
finally:
    b.close()
PY
echo "wrote docs/img/report.png"
