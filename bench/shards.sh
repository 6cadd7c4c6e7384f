#!/usr/bin/env bash
# bench/shards.sh — the measured scaling table of docs/scale.md: one plan run
# as 1, 2 and 4 shards, each shard in its own network namespace with its own
# address (veth on a bridge), against one `yace serve` in another namespace;
# the shards start together (`--start-at`) and `yace merge` joins them.
#
#   bench/shards.sh                                # 1 2 4 shards, 3 reps x 5 s
#   SHARDS="1 2 4" REPS=3 DURATION=5 CONNS=64 bench/shards.sh
#   PIN=0 bench/shards.sh                          # no pinning: all share both CPUs
#   YACE=/path/to/yace bench/shards.sh             # skip `cargo build --profile dist`
#
# Environment (defaults in brackets):
#   SHARDS    shard counts to run                       ["1 2 4"]
#   REPS      repetitions per shard count (the median is reported) [3]
#   DURATION  seconds of load per run                   [5]
#   CONNS     connections of the one plan (closed model, keep-alive),
#             split over the shards                     [64]
#   PIN       1: the server on CPU 1, every shard on CPU 0 (fixed hardware:
#             what splitting costs); 0: no pinning      [1]
#   YACE      the yace binary                           [target/dist/yace, built]
#   OUT       where the table and the raw results go    [bench/out/shards-<UTC time>]
#
# Needs root (or CAP_NET_ADMIN) for `ip netns`. Bounded: every process runs
# under `timeout`; the namespaces are deleted on exit.
# Each shard runs one worker thread (-t 1). The table: the merged rate
# (responses/s over the merged span), what the server counted, the client's
# CPU seconds per 1,000 responses (the shards' processes, user + system, from
# GNU time, and the workers' own from the results), the busiest worker, the
# server's CPU seconds per 1,000 responses (its process, from /proc), the
# merged p99 (from the merged HDR histograms, never averaged), the start
# spread, and whether any shard was saturated (a worker ≥ 90% busy).
# The server runs under `timeout` (60 s more than the load), the shards
# under `timeout` (30 s more).
set -euo pipefail

SHARDS=${SHARDS:-"1 2 4"}
REPS=${REPS:-3}
DURATION=${DURATION:-5}
CONNS=${CONNS:-64}
PIN=${PIN:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/bench/out/shards-$STAMP}
mkdir -p "$OUT"

if [ -z "${YACE:-}" ]; then
    (cd "$ROOT" && cargo build --profile dist -p yace >&2)
    YACE=$ROOT/target/dist/yace
fi
[ -x "$YACE" ] || { echo "shards.sh: $YACE is not an executable" >&2; exit 2; }
for t in ip jq curl taskset pgrep getconf /usr/bin/time timeout; do
    command -v "$t" >/dev/null || { echo "shards.sh: needs $t" >&2; exit 2; }
done

SERVER=10.200.0.1
PORT=8080
BASE=yace-bench-$$
MADE=()
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
    for ns in "${MADE[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    MADE=()
}
trap cleanup EXIT

pin() { if [ "$PIN" = 1 ]; then echo "taskset -c $1"; fi; }

# The server's namespace with a bridge, and n shard namespaces on it.
topology() {
    local n=$1 s=$BASE-s
    ip netns add "$s"; MADE+=("$s")
    ip -n "$s" link set lo up
    ip -n "$s" link add br0 type bridge
    ip -n "$s" addr add $SERVER/24 dev br0
    ip -n "$s" link set br0 up
    for i in $(seq 0 $((n - 1))); do
        local c=$BASE-$i
        ip netns add "$c"; MADE+=("$c")
        ip -n "$c" link set lo up
        ip -n "$s" link add "vs$i" type veth peer name eth0 netns "$c"
        ip -n "$s" link set "vs$i" master br0
        ip -n "$s" link set "vs$i" up
        ip -n "$c" addr add "10.200.0.$((10 + i))/24" dev eth0
        ip -n "$c" link set eth0 up
    done
}

stats() { ip netns exec "$BASE-s" curl -s --max-time 5 "http://$SERVER:$PORT/_stats?reset=1"; }

# One run of n shards; prints "rps server_requests cpu_proc cpu_workers responses p99_us spread_ms
# saturated requests server_cpu busiest" (requests: sent, responses included; a closed run that ends
# on its duration cancels those in flight at the end, which the server counted).
one() {
    local n=$1 rep=$2 dir=$OUT/n$1-r$2
    mkdir -p "$dir"
    topology "$n"
    # shellcheck disable=SC2046
    timeout $((DURATION + 60)) ip netns exec "$BASE-s" $(pin 1) "$YACE" serve \
        --bind $SERVER -p $PORT --threads 1 >"$dir/serve.log" 2>&1 &
    SERVE_PID=$!
    for _ in $(seq 100); do
        stats >/dev/null 2>&1 && break
        sleep 0.1
    done
    stats >/dev/null
    local start pids=()
    start=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%3NZ)
    for i in $(seq 0 $((n - 1))); do
        # shellcheck disable=SC2046
        timeout $((DURATION + 30)) ip netns exec "$BASE-$i" $(pin 0) \
            /usr/bin/time -f "%U %S" -o "$dir/time-$i" \
            "$YACE" run "http://$SERVER:$PORT/" -c "$CONNS" -d "${DURATION}s" -t 1 \
            --shard "$i/$n" --run-id "b$n-$rep" --start-at "$start" --frame -q \
            >"$dir/shard-$i.log" 2>"$dir/shard-$i.err" &
        pids+=($!)
    done
    local failed=0
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    [ $failed = 0 ] || { echo "shards.sh: a shard failed, see $dir" >&2; exit 1; }
    local seen server_cpu yace_pid
    seen=$(stats | jq .requests)
    # The server's CPU seconds (timeout's child is yace: ip netns exec and
    # taskset exec it).
    yace_pid=$(pgrep -P "$SERVE_PID" | head -1)
    server_cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$yace_pid/stat")
    kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=
    cleanup
    "$YACE" merge --expect-shards "$n" "$dir"/shard-*.log -o "$dir/merged.json" -q \
        2>"$dir/merge.err" || { echo "shards.sh: merge failed, see $dir" >&2; exit 1; }
    local cpu
    cpu=$(cat "$dir"/time-* | awk '{s += $1 + $2} END {printf "%.2f", s}')
    jq -r --arg seen "$seen" --arg cpu "$cpu" --arg server "$server_cpu" '[
        .summary.rps, ($seen | tonumber), ($cpu | tonumber), .client.cpu_s,
        .summary.responses,
        (.summary.latency.percentiles[] | select(.p == 99) | .us),
        (.merge.start_spread_ms // 0), .client.saturated, .summary.requests,
        ($server | tonumber), .client.busiest_thread
      ] | map(tostring) | join(" ")' "$dir/merged.json"
}

median() { sort -g | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }

{
    echo "# Shards in network namespaces: $(date -u +%Y-%m-%d) on $(hostname)"
    echo
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
    echo "- yace: $("$YACE" --version)"
    echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- plan: \`yace run http://$SERVER:$PORT/ -c $CONNS -d ${DURATION}s -t 1 --shard I/N\`, keep-alive;"
    echo "  server: \`yace serve --threads 1\`; pinning: $([ "$PIN" = 1 ] && echo 'server on CPU 1, every shard on CPU 0' || echo none)"
    echo "- $REPS repetitions per row; each row is the run with the median rate (every run's rate in brackets)"
    echo "- command: \`SHARDS=\"$SHARDS\" REPS=$REPS DURATION=$DURATION CONNS=$CONNS PIN=$PIN bench/shards.sh\`"
    echo
    echo "| shards | merged rate (resp/s) | server counted | = merged sent | client CPU-s / 1k resp (processes) | (workers) | busiest worker | server CPU-s / 1k resp | merged p99 | start spread | saturated |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} | tee "$OUT/table.md"

for n in $SHARDS; do
    : >"$OUT/n$n.rows"
    for rep in $(seq 1 "$REPS"); do
        one "$n" "$rep" >>"$OUT/n$n.rows"
    done
    # The run with the median rate.
    row=$(sort -g -k1,1 "$OUT/n$n.rows" | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}')
    read -r rps seen cpu workers responses p99 spread sat requests server busiest <<<"$row"
    same=$([ "$seen" = "$requests" ] && echo yes || echo "NO ($requests)")
    rates=$(awk '{printf "%s%.0f", (NR > 1 ? ", " : ""), $1}' "$OUT/n$n.rows")
    printf '| %s | %.0f (runs: %s) | %s | %s | %.4f | %.4f | %.0f%% | %.4f | %.2f ms | %.1f ms | %s |\n' \
        "$n" "$rps" "$rates" "$seen" "$same" \
        "$(echo "$cpu $responses" | awk '{print $1 / $2 * 1000}')" \
        "$(echo "$workers $responses" | awk '{print $1 / $2 * 1000}')" \
        "$(echo "$busiest" | awk '{print $1 * 100}')" \
        "$(echo "$server $responses" | awk '{print $1 / $2 * 1000}')" \
        "$(echo "$p99" | awk '{print $1 / 1000}')" "$spread" "$sat" | tee -a "$OUT/table.md"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/table.md"
echo "raw results: $OUT" >&2
