#!/usr/bin/env bash
# bench/soak.sh — does yace's memory stay flat over a long, busy, messy run?
#
#   bench/soak.sh                          # 10 minutes (the real soak)
#   SOAK_DURATION=30s bench/soak.sh        # smoke: proves the script works
#   YACE=/path/to/yace bench/soak.sh       # skip `cargo build`
#
# It starts the embedded target (`yace serve -t 1`, pinned to CPU 0) and, on
# CPU 1, two clients for SOAK_DURATION:
#   main    open model at SOAK_RATE req/s on /vary (random body lengths,
#           1-2048 bytes), up to SOAK_INFLIGHT in flight;
#   errors  open model at SOAK_ERR_RATE req/s on /sleep?ms=100 with
#           --timeout 50ms: every request times out, so its connection is
#           dropped and a new one opened (timeouts, reconnects, cancels).
# Every SOAK_SAMPLE seconds it records VmRSS of both clients and the server
# from /proc/PID/status into a TSV. The verdict compares each client's RSS at
# the end of the warm-up (the first minute; a quarter of the run if that is
# shorter than 4 minutes) with the largest RSS after it: growth must stay
# below SOAK_MAX_GROWTH_MIB, else FAIL and exit 1.
#
# Environment (defaults in brackets):
#   SOAK_DURATION        run length: 600, 30s, 10m, 1h         [10m]
#   SOAK_RATE            main client's rate, req/s             [20000]
#   SOAK_INFLIGHT        main client's --max-inflight          [2000]
#   SOAK_ERR_RATE        error client's rate, req/s            [500]
#   SOAK_SAMPLE          seconds between RSS samples           [5]
#   SOAK_MAX_GROWTH_MIB  allowed growth after the warm-up      [16]
#   SOAK_HTTP2=1         both clients speak HTTP/2 (h2c): the main one on
#                        SOAK_INFLIGHT/64 connections x 64 streams, and the
#                        server sends GOAWAY every SOAK_H2_GOAWAY requests per
#                        connection (connection churn, re-sent streams); the
#                        error client's timeouts reset streams, not connections
#   SOAK_H2_GOAWAY       HTTP/2: requests per connection before GOAWAY [1000]
#   YACE                 path to a yace binary                 [build target/dist/yace]
#   YACE_COMMIT          commit the binary was built from, for the report [the repo's HEAD]
#   RESULTS_DIR          where a full-length run's report goes [bench/results]
#
# Output: bench/out/soak-<timestamp>/ (rss.tsv, each process's output, the
# JSON results, report.md). A run of 10 minutes or more also writes
# bench/results/YYYY-MM-DD-soak-<cpu>.md; shorter ones write the report to
# bench/out/ only.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { printf '[soak] %s\n' "$*" >&2; }
die() { printf '[soak] ERROR: %s\n' "$*" >&2; exit 2; }

# ---------------------------------------------------------------- settings --
SOAK_DURATION=${SOAK_DURATION:-10m}
SOAK_RATE=${SOAK_RATE:-20000}
SOAK_INFLIGHT=${SOAK_INFLIGHT:-2000}
SOAK_ERR_RATE=${SOAK_ERR_RATE:-500}
SOAK_SAMPLE=${SOAK_SAMPLE:-5}
SOAK_MAX_GROWTH_MIB=${SOAK_MAX_GROWTH_MIB:-16}
FULL_LENGTH_S=600    # runs at least this long are "real" and go to bench/results

[[ $SOAK_DURATION =~ ^([0-9]+)(s|m|h)?$ ]] || die "SOAK_DURATION must look like 600, 30s, 10m or 1h (got '$SOAK_DURATION')"
case ${BASH_REMATCH[2]} in
    m) DUR=$(( BASH_REMATCH[1] * 60 )) ;;
    h) DUR=$(( BASH_REMATCH[1] * 3600 )) ;;
    *) DUR=${BASH_REMATCH[1]} ;;
esac
(( DUR >= 10 )) || die "SOAK_DURATION must be at least 10 s"
for v in SOAK_RATE SOAK_INFLIGHT SOAK_ERR_RATE SOAK_SAMPLE SOAK_MAX_GROWTH_MIB; do
    [[ ${!v} =~ ^[0-9]+$ ]] && (( ${!v} >= 1 )) || die "$v must be a positive integer (got '${!v}')"
done
# The warm-up: allocator pools, connection tables and histograms fill up.
WARMUP=60
(( DUR < 4 * WARMUP )) && WARMUP=$(( DUR / 4 ))

command -v taskset >/dev/null 2>&1 || die "taskset is missing (apt-get install util-linux)"
(( $(nproc) >= 2 )) || die "needs 2 CPUs (server on CPU 0, clients on CPU 1)"

# ------------------------------------------------------------------- yace --
if [[ -z ${YACE:-} ]]; then
    # The shipped build (fat LTO, one codegen unit), not the everyday one.
    log "building yace: cargo build --profile dist -p yace"
    (cd "$REPO" && cargo build --profile dist -p yace) >&2
    YACE="${CARGO_TARGET_DIR:-$REPO/target}/dist/yace"
fi
[[ -x $YACE ]] || die "yace binary not found or not executable: $YACE"

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(( $(ulimit -n) >= SOAK_INFLIGHT + 500 )) || die "ulimit -n is $(ulimit -n); need $(( SOAK_INFLIGHT + 500 ))"

# -------------------------------------------------------------- processes --
STAMP=$(date -u +%Y%m%dT%H%M%SZ)-$$
OUT="$BENCH_DIR/out/soak-$STAMP"        # bench/out/ is git-ignored
mkdir -p "$OUT"
SERVER_PID= MAIN_PID= ERR_PID=

stop() {  # stop PID by PID: TERM, then KILL after 5 s
    local pid=$1
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop "$MAIN_PID"; stop "$ERR_PID"; stop "$SERVER_PID"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

SOAK_HTTP2=${SOAK_HTTP2:-0}
SOAK_H2_GOAWAY=${SOAK_H2_GOAWAY:-1000}
SERVE_ARGS=()
MAIN_H2=()
ERR_H2=()
ERR_INFLIGHT=500
if [[ $SOAK_HTTP2 == 1 ]]; then
    ERR_INFLIGHT=50                                   # connections, each with 10 streams
    SERVE_ARGS=(--h2-max-requests "$SOAK_H2_GOAWAY")
    MAIN_H2=(--http2 --streams 64)
    ERR_H2=(--http2 --streams 10)
    SOAK_INFLIGHT=$(( (SOAK_INFLIGHT + 63) / 64 ))   # connections, each with 64 streams
fi
taskset -c 0 "$YACE" serve --port 0 -t 1 "${SERVE_ARGS[@]}" >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
BASE=
for _ in $(seq 100); do
    BASE=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$OUT/server.log" | head -n1 || true)
    [[ -n $BASE ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "yace serve exited: $(cat "$OUT/server.log")"
    sleep 0.1
done
[[ -n $BASE ]] || die "yace serve printed no URL: $(cat "$OUT/server.log")"

MAIN_CMD=("$YACE" run "$BASE/vary" --rate "$SOAK_RATE" --max-inflight "$SOAK_INFLIGHT"
          -d "${DUR}s" -t 1 -q --json "$OUT/main.json" "${MAIN_H2[@]}")
ERR_CMD=("$YACE" run "$BASE/sleep?ms=100" --timeout 50ms --rate "$SOAK_ERR_RATE"
         --max-inflight "$ERR_INFLIGHT" -d "${DUR}s" -t 1 -q --json "$OUT/errors.json" "${ERR_H2[@]}")
log "server $BASE (pid $SERVER_PID, CPU 0); clients on CPU 1 for ${DUR}s; output in $OUT"
taskset -c 1 "${MAIN_CMD[@]}" >"$OUT/main.txt" 2>"$OUT/main.err" &
MAIN_PID=$!
taskset -c 1 "${ERR_CMD[@]}" >"$OUT/errors.txt" 2>"$OUT/errors.err" &
ERR_PID=$!

rss_kib() { awk '/^VmRSS:/ { print $2; f=1 } END { if (!f) print "" }' "/proc/$1/status" 2>/dev/null || true; }

# ---------------------------------------------------------------- sample --
TSV="$OUT/rss.tsv"
printf 't_s\tmain_kib\terrors_kib\tserver_kib\n' >"$TSV"
T0=$(date +%s)
next=0
while kill -0 "$MAIN_PID" 2>/dev/null || kill -0 "$ERR_PID" 2>/dev/null; do
    now=$(( $(date +%s) - T0 ))
    if (( now >= next )); then
        m=$(rss_kib "$MAIN_PID"); e=$(rss_kib "$ERR_PID"); s=$(rss_kib "$SERVER_PID")
        # A client that has exited (or is a zombie) has no VmRSS: stop sampling it.
        if [[ -n $m || -n $e ]]; then printf '%s\t%s\t%s\t%s\n' "$now" "$m" "$e" "$s" >>"$TSV"; fi
        next=$(( next + SOAK_SAMPLE ))
        (( now % 60 < SOAK_SAMPLE )) && log "t=${now}s  RSS main ${m:-–} KiB, errors ${e:-–} KiB, server ${s:-–} KiB"
    fi
    if (( now > DUR + 60 )); then
        log "clients still running 60 s after the end: stopping them"
        stop "$MAIN_PID"; stop "$ERR_PID"
    fi
    sleep 0.5
done
MAIN_RC=0; wait "$MAIN_PID" || MAIN_RC=$?
ERR_RC=0; wait "$ERR_PID" || ERR_RC=$?
MAIN_PID= ERR_PID=
stop "$SERVER_PID"; SERVER_PID=

# --------------------------------------------------------------- verdict --
# growth COLUMN: "baseline_kib max_kib max_at_s final_kib samples_after"
growth() {
    awk -F'\t' -v col="$1" -v warm="$WARMUP" '
        NR == 1 || $col == "" { next }
        base == "" && $1 >= warm { base = $col; next }
        base != "" { n++; if ($col > max) { max = $col; at = $1 }; last = $col }
        END {
            if (base == "" || n == 0) { print "- - - - 0"; exit }
            print base, max, at, last, n
        }' "$TSV"
}
mib() { awk -v k="$1" 'BEGIN { if (k == "-") print "–"; else printf "%.1f", k / 1024 }'; }
read -r MB MM MAT MF MN < <(growth 2)
read -r EB EM EAT EF EN < <(growth 3)
verdict=PASS
reasons=()
check() {  # check NAME BASE MAX N
    local name=$1 base=$2 max=$3 n=$4
    if (( n == 0 )); then
        verdict=FAIL; reasons+=("$name: no RSS samples after the ${WARMUP}s warm-up (did it exit early?)")
        return
    fi
    local grow=$(( max > base ? max - base : 0 ))
    if (( grow >= SOAK_MAX_GROWTH_MIB * 1024 )); then
        verdict=FAIL; reasons+=("$name: RSS grew $(mib "$grow") MiB after the warm-up (limit $SOAK_MAX_GROWTH_MIB MiB)")
    fi
}
check main "$MB" "$MM" "$MN"
check errors "$EB" "$EM" "$EN"
(( MAIN_RC == 0 )) || { verdict=FAIL; reasons+=("main client exited $MAIN_RC"); }
(( ERR_RC == 0 )) || { verdict=FAIL; reasons+=("error client exited $ERR_RC"); }
grow_of() { [[ $1 == - ]] && echo – || mib $(( $2 > $1 ? $2 - $1 : 0 )); }

# ---------------------------------------------------------------- report --
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
host=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)
slug=$(printf '%s-%scpu' "${cpu_model:-$host}" "$(nproc)" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
commit=${YACE_COMMIT:-}
if [[ -z $commit ]]; then
    commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "no-commit")
    [[ -z $(git -C "$REPO" status --porcelain -- crates Cargo.lock 2>/dev/null) ]] || commit+="-dirty"
fi
quote() { local a out=(); for a in "$@"; do [[ $a =~ ^[A-Za-z0-9_./:=%-]+$ ]] && out+=("$a") || out+=("'$a'"); done; echo "${out[*]}"; }

REPORT="$OUT/report.md"
{
    echo "## yace soak$([[ $SOAK_HTTP2 == 1 ]] && echo " (HTTP/2)") — $(date -u +%Y-%m-%dT%H:%M:%SZ) — $verdict"
    echo
    echo "- machine: \`$host\`, $(nproc) CPUs, ${cpu_model:-unknown CPU}, kernel $(uname -r), ${mem_gib} GiB RAM"
    echo "- yace: commit \`$commit\` ($("$YACE" --version 2>/dev/null | head -n1)), binary \`$YACE\`"
    echo "- length ${DUR}s; RSS sampled every ${SOAK_SAMPLE}s from /proc/PID/status (VmRSS); warm-up ${WARMUP}s; limit: growth < ${SOAK_MAX_GROWTH_MIB} MiB"
    echo "- server (CPU 0): \`taskset -c 0 $(quote "$YACE" serve --port 0 -t 1 "${SERVE_ARGS[@]}")\`"
    echo "- main client (CPU 1): \`taskset -c 1 $(quote "${MAIN_CMD[@]}")\`"
    echo "- error client (CPU 1): \`taskset -c 1 $(quote "${ERR_CMD[@]}")\`"
    echo
    echo "| process | RSS at ${WARMUP}s MiB | max after MiB (at s) | final MiB | growth MiB | samples after |"
    echo "| --- | --: | --: | --: | --: | --: |"
    echo "| main (/vary, ${SOAK_RATE}/s) | $(mib "$MB") | $(mib "$MM") (${MAT}) | $(mib "$MF") | $(grow_of "$MB" "$MM") | $MN |"
    echo "| errors (/sleep, timeouts, ${SOAK_ERR_RATE}/s) | $(mib "$EB") | $(mib "$EM") (${EAT}) | $(mib "$EF") | $(grow_of "$EB" "$EM") | $EN |"
    echo
    if (( ${#reasons[@]} > 0 )); then
        for r in "${reasons[@]}"; do echo "- **FAIL**: $r"; done
        echo
    fi
    step=$SOAK_SAMPLE
    (( DUR >= 300 )) && step=60
    echo "RSS over time (MiB, one row every ${step}s; every sample is in \`rss.tsv\`):"
    echo
    echo "| t (s) | main | errors | server |"
    echo "| --: | --: | --: | --: |"
    awk -F'\t' -v step="$step" -v sample="$SOAK_SAMPLE" 'NR > 1 && $1 % step < sample {
        printf "| %s | %s | %s | %s |\n", $1,
            ($2 == "" ? "–" : sprintf("%.1f", $2 / 1024)),
            ($3 == "" ? "–" : sprintf("%.1f", $3 / 1024)),
            ($4 == "" ? "–" : sprintf("%.1f", $4 / 1024)) }' "$TSV"
    echo
    echo "main client's summary (exit $MAIN_RC):"
    echo
    echo '```'
    cat "$OUT/main.txt"
    echo '```'
    echo
    echo "error client's summary (exit $ERR_RC):"
    echo
    echo '```'
    cat "$OUT/errors.txt"
    echo '```'
} >"$REPORT"
cat "$REPORT"

if (( DUR >= FULL_LENGTH_S )); then
    RESULTS_DIR=${RESULTS_DIR:-$BENCH_DIR/results}
    mkdir -p "$RESULTS_DIR"
    RESULTS_FILE="$RESULTS_DIR/$(date -u +%Y-%m-%d)-soak-$slug.md"
    { [[ -s $RESULTS_FILE ]] && echo; cat "$REPORT"; } >>"$RESULTS_FILE"
    log "report appended to ${RESULTS_FILE#"$REPO"/}"
else
    log "short run (< ${FULL_LENGTH_S}s): report in ${REPORT#"$REPO"/} only"
fi
log "$verdict: main grew $(grow_of "$MB" "$MM") MiB, errors grew $(grow_of "$EB" "$EM") MiB after the ${WARMUP}s warm-up (limit $SOAK_MAX_GROWTH_MIB MiB)"
[[ $verdict == PASS ]] || exit 1
