#!/usr/bin/env bash
# bench/report/run.sh — what the HTML report costs for long runs: rendering
# a synthetic 1-hour and 24-hour result with `yace report -F html`, reading
# a page back, the page's size, and how long headless Chromium takes until
# its charts are drawn (the page is interactive). Medians of REPS runs.
#
#   bench/report/run.sh                # appends to bench/results/DATE-report-HOST.md
#   REPS=3 YACE=target/dist/yace bench/report/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
REPS=${REPS:-5}
OUT=$(mktemp -d /tmp/yace-report-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
if [ -z "${YACE:-}" ]; then
    (cd "$REPO" && cargo build --profile dist --locked -q -p yace)
    YACE="$REPO/target/dist/yace"
fi
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Wall seconds and max RSS (KiB) of one command, from GNU time.
timed() { /usr/bin/time -f '%e %M' -o "$OUT/t" "$@" >/dev/null; cat "$OUT/t"; }

host=$(hostname); cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
date=$(date -u +%Y-%m-%d)
report="${RESULTS_DIR:-$REPO/bench/results}/$date-report-$(echo "$cpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-' | cut -c1-24).md"
{
    echo "# HTML report cost, $date"
    echo
    echo "Machine: $host, $cpu, $(nproc) CPUs; yace $("$YACE" --version | cut -d' ' -f2)."
    echo "Synthetic results from \`bench/report/synth.py\` (a real open-model run stretched: noisy rates"
    echo "and latencies, a one-second stall every hour). Medians of $REPS runs."
    echo
    echo "| series | result JSON | page | render (\`yace report -F html\`) | render RSS | read back (\`yace report PAGE -F json\`) | Chromium: charts drawn after |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
} > "$OUT/report.md"
for secs in 3600 86400; do
    python3 "$HERE/synth.py" "$secs" "$OUT/r.json"
    renders=(); rss=(); reads=(); drawn=()
    for _ in $(seq "$REPS"); do
        read -r t m < <(timed "$YACE" report "$OUT/r.json" -F html -o "$OUT/r.html")
        renders+=("$t"); rss+=("$m")
        read -r t _ < <(timed "$YACE" report "$OUT/r.html" -F json)
        reads+=("$t")
        drawn+=("$(python3 "$HERE/chromium.py" "$OUT/r.html")")
    done
    json_mb=$(awk -v b="$(stat -c %s "$OUT/r.json")" 'BEGIN {printf "%.1f MB", b/1e6}')
    page_kb=$(awk -v b="$(stat -c %s "$OUT/r.html")" 'BEGIN {printf "%.0f KB", b/1024}')
    label=$([ "$secs" = 3600 ] && echo "1 hour" || echo "24 hours")
    printf '| %s | %s | %s | %.2f s | %.0f MiB | %.2f s | %.0f ms |\n' "$label" "$json_mb" "$page_kb" \
        "$(printf '%s\n' "${renders[@]}" | median)" "$(printf '%s\n' "${rss[@]}" | median | awk '{print $1/1024}')" \
        "$(printf '%s\n' "${reads[@]}" | median)" "$(printf '%s\n' "${drawn[@]}" | median)" >> "$OUT/report.md"
done
{
    echo
    echo "Render and read back include parsing the result (the JSON file, or the page's embedded"
    echo "copy). Chromium: \`performance.now()\` when the page's script has drawn every chart,"
    echo "from navigation start, headless, one tab, file:// URL."
} >> "$OUT/report.md"
cat "$OUT/report.md"
if [ "${QUICK:-0}" != 1 ]; then
    { echo; cat "$OUT/report.md"; } >> "$report"
    echo "appended to $report" >&2
fi
