#!/usr/bin/env bash
# bench/connections.sh — many keep-alive connections from one client: yace
# holds CONNS connections to a private nginx (one worker on CPU 0), spread
# over several local source addresses, and we read what each side saw.
#
#   bench/connections.sh                          # 100,000 connections, 20 s
#   CONNS=30000 SOURCE_ADDRS= bench/connections.sh   # one source address
#   YACE=/path/to/yace bench/connections.sh       # skip `cargo build`
#
# Environment (defaults in brackets):
#   CONNS         connections yace keeps open (-c)         [100000]
#   SOURCE_ADDRS  yace --source-addrs; empty: not passed   [127.0.0.2-127.0.0.9]
#   DURATION      seconds the run lasts (-d)               [20]
#   THREADS       yace worker threads (-t)                 [1]
#   YACE          path to a yace binary                    [build target/release/yace]
#   RESULTS_DIR   where the dated report is appended       [bench/out]
#
# What it reports: the connections `ss` sees established on nginx's port
# (peak, sampled every 2 s), how they spread over the client's source
# addresses, yace's peak RSS (VmHWM) and RSS per connection, nginx's
# stub_status requests, yace's responses/s and errors. It stops by itself
# (yace runs for DURATION, everything under `timeout`), and raises the
# open-file limit only for its own nginx and yace (as root, or within the
# hard limit).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
export PATH="$PATH:/usr/sbin:/sbin"

log() { printf '[connections] %s\n' "$*" >&2; }
die() { printf '[connections] ERROR: %s\n' "$*" >&2; exit 1; }

CONNS=${CONNS:-100000}
SOURCE_ADDRS=${SOURCE_ADDRS-127.0.0.2-127.0.0.9}
DURATION=${DURATION:-20}
THREADS=${THREADS:-1}
RESULTS_DIR=${RESULTS_DIR:-$BENCH_DIR/out}
[[ $CONNS =~ ^[0-9]+$ ]] && (( CONNS >= 1 && CONNS <= 1000000 )) || die "CONNS must be 1..1000000"
[[ $DURATION =~ ^[0-9]+$ ]] && (( DURATION >= 5 && DURATION <= 600 )) || die "DURATION must be 5..600 (seconds)"
[[ $THREADS =~ ^[0-9]+$ ]] && (( THREADS >= 1 )) || die "THREADS must be a positive integer"
for t in nginx ss taskset timeout jq python3; do
    command -v "$t" >/dev/null 2>&1 || die "$t is missing (Debian: apt-get install nginx-light iproute2 util-linux coreutils jq python3)"
done
nginx -V 2>&1 | grep -q stub_status || die "this nginx lacks the stub_status module"
(( $(nproc) >= 2 )) || die "needs two CPUs (nginx on 0, yace on 1)"

# Descriptors: one per connection on each side, plus slack. Raised for the
# two processes started here only (a subshell's ulimit), never system-wide.
# nginx starts closing idle keep-alive connections ("worker_connections are
# not enough, reusing connections") once fewer than 1/16 of its
# worker_connections are free, so it gets an eighth more than CONNS.
NOFILE=$(( CONNS + CONNS / 8 + 4096 ))
HARD=$(ulimit -Hn)
if [[ $HARD != unlimited ]] && (( HARD < NOFILE )) && ! bash -c "ulimit -Hn $NOFILE" 2>/dev/null; then
    # Raising a hard limit takes root with CAP_SYS_RESOURCE (a container may lack it).
    most=$(( (HARD - 64) * 15 / 16 - 200 ))
    (( CONNS <= most )) || die "the hard open-file limit is $HARD and cannot be raised here \
(root with CAP_SYS_RESOURCE, or 'ulimit -Hn $NOFILE' before this script); nginx needs one per \
connection and 1/16 of its worker_connections free: at most CONNS=$most on this machine"
    NOFILE=$HARD
fi
raise_nofile="ulimit -Hn $NOFILE 2>/dev/null || true; ulimit -n $NOFILE"

if [[ -z ${YACE:-} ]]; then
    log "building yace (release)"
    (cd "$REPO" && cargo build --release -q -p yace) || die "cargo build failed"
    YACE=$REPO/target/release/yace
fi
[[ -x $YACE ]] || die "no yace binary at $YACE"

NGX_DIR=$(mktemp -d /tmp/yace-connections.XXXXXX)
chmod 755 "$NGX_DIR"
NGINX_PID=
NGINX_WORKER_PID=
CLIENT_PID=
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n $CLIENT_PID ]] && kill -0 "$CLIENT_PID" 2>/dev/null; then
        kill -TERM "$CLIENT_PID" 2>/dev/null || true
        wait "$CLIENT_PID" 2>/dev/null || true
    fi
    if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$NGINX_PID" 2>/dev/null && kill -KILL "$NGINX_PID" 2>/dev/null || true
    fi
    if [[ -n $NGINX_WORKER_PID ]] && kill -0 "$NGINX_WORKER_PID" 2>/dev/null; then
        sleep 1
        kill -0 "$NGINX_WORKER_PID" 2>/dev/null && kill -KILL "$NGINX_WORKER_PID" 2>/dev/null || true
    fi
    rm -rf "$NGX_DIR"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# ------------------------------------------------------------------ nginx --
PORT=$(free_port)
sed -e "s|@PREFIX@|$NGX_DIR|g" \
    -e "s|@PORT@|$PORT|g" \
    -e "s|@NOFILE@|$NOFILE|g" \
    -e "s|@WORKER_CONNECTIONS@|$(( NOFILE - 64 ))|g" \
    -e "s|@BACKLOG@|65535|g" \
    "$BENCH_DIR/nginx/connections.conf.in" >"$NGX_DIR/nginx.conf"
bash -c "$raise_nofile && exec taskset -c 0 nginx -p '$NGX_DIR/' -c '$NGX_DIR/nginx.conf' -e '$NGX_DIR/error.log'" \
    2>"$NGX_DIR/start.log" || die "nginx did not start: $(tail -n2 "$NGX_DIR/start.log")"
for _ in $(seq 50); do [[ -s $NGX_DIR/nginx.pid ]] && break; sleep 0.1; done
[[ -s $NGX_DIR/nginx.pid ]] || die "nginx started but wrote no pid file"
NGINX_PID=$(<"$NGX_DIR/nginx.pid")
for _ in $(seq 50); do
    NGINX_WORKER_PID=$(ps -o pid= --ppid "$NGINX_PID" | head -n1 | tr -d ' ')
    [[ -n $NGINX_WORKER_PID ]] && break
    sleep 0.1
done
[[ -n $NGINX_WORKER_PID ]] || die "nginx has no worker"
log "nginx on 127.0.0.1:$PORT (worker $NGINX_WORKER_PID, worker_connections $(( NOFILE - 64 )), open files $NOFILE)"

stub_requests() {
    taskset -c 0 timeout 5 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf "GET /nginx_status HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3
        cat <&3' _ "$PORT" 2>/dev/null | awk '{ sub(/\r$/, "") } /^ *[0-9]+ +[0-9]+ +[0-9]+ *$/ { print $3 }'
}
established() {
    ss -Htn state established "( sport = :$PORT )" 2>/dev/null | wc -l
}

# ------------------------------------------------------------------- yace --
args=(run "http://127.0.0.1:$PORT/" -c "$CONNS" -t "$THREADS" -d "${DURATION}s"
      --connect-timeout 30s -q --json "$NGX_DIR/result.json")
[[ -n $SOURCE_ADDRS ]] && args+=(--source-addrs "$SOURCE_ADDRS")
REQ0=$(stub_requests || echo 0)
log "yace ${args[*]}"
bash -c "$raise_nofile && exec timeout -s INT $(( DURATION + 60 )) taskset -c 1 \"\$0\" \"\$@\"" \
    "$YACE" "${args[@]}" >"$NGX_DIR/yace.out" 2>"$NGX_DIR/yace.err" &
CLIENT_PID=$!
# $CLIENT_PID is `timeout`; yace is its child (taskset execs into it).
YACE_PID=
for _ in $(seq 100); do
    YACE_PID=$(pgrep -P "$CLIENT_PID" 2>/dev/null | head -n1 || true)
    [[ -n $YACE_PID ]] && break
    sleep 0.05
done
[[ -n $YACE_PID ]] || die "yace did not start: $(tail -n3 "$NGX_DIR/yace.err")"

PEAK_EST=0
PEAK_AT=0
HWM_KB=0
SPREAD=
T0=$(date +%s)
samples=()
while kill -0 "$CLIENT_PID" 2>/dev/null; do
    now=$(( $(date +%s) - T0 ))
    est=$(established)
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$YACE_PID/status" 2>/dev/null || echo 0)
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$YACE_PID/status" 2>/dev/null || echo 0)
    [[ -n $hwm ]] && (( hwm > HWM_KB )) && HWM_KB=$hwm
    samples+=("$now s: established $est, yace RSS ${rss:-?} KiB")
    if (( est > PEAK_EST )); then PEAK_EST=$est; PEAK_AT=$now; fi
    # Once, late in the run: how the client's ends spread over its addresses.
    if [[ -z $SPREAD ]] && (( now >= DURATION - 5 )); then
        SPREAD=$(ss -Htn state established "( dport = :$PORT )" 2>/dev/null \
            | awk '{ a = $3; sub(/:[0-9]+$/, "", a); n[a]++ } END { for (k in n) print k, n[k] }' | sort -V)
    fi
    sleep 2
done
wait "$CLIENT_PID" && RC=0 || RC=$?
CLIENT_PID=
REQ1=$(stub_requests || echo 0)

R=$NGX_DIR/result.json
[[ -s $R ]] || { cat "$NGX_DIR/yace.err" >&2; die "yace wrote no result (exit $RC)"; }
read -r RESPONSES RPS ERRORS CPU < <(jq -r '[.summary.responses, (.summary.rps | floor), .summary.errors, .client.cpu_s] | @tsv' "$R")
OUTCOMES=$(jq -c '.outcomes | with_entries(select(.value > 0))' "$R")
OPENED=$(jq -r '.summary.connections_opened' "$R")
PER_CONN=$(( HWM_KB * 1024 / CONNS ))

out() {
    echo "## $(date -u +%F) — $CONNS keep-alive connections, yace $("$YACE" --version | awk '{ print $2 }')"
    echo
    echo "machine: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs, kernel $(uname -r); nginx $(nginx -v 2>&1 | sed 's|.*/||') one worker on CPU 0, yace -t $THREADS on CPU 1"
    echo
    echo "command: yace ${args[*]//$NGX_DIR\//}"
    echo
    echo "| figure | value |"
    echo "| --- | --- |"
    echo "| connections asked (-c) | $CONNS |"
    echo "| established on nginx's port, peak (ss, every 2 s) | $PEAK_EST (at ${PEAK_AT} s) |"
    echo "| connections yace opened | $OPENED |"
    echo "| yace peak RSS (VmHWM) | $(awk -v k="$HWM_KB" 'BEGIN { printf "%.1f MiB (%d KiB)", k / 1024, k }') |"
    echo "| yace peak RSS per connection | $PER_CONN bytes |"
    echo "| responses (yace) | $RESPONSES |"
    echo "| responses/s (yace) | $RPS |"
    echo "| requests nginx counted | $(( REQ1 - REQ0 )) |"
    echo "| errors (yace's summary) | $ERRORS |"
    echo "| yace CPU seconds | $CPU |"
    echo "| outcomes | \`$OUTCOMES\` |"
    echo "| yace exit code | $RC |"
    echo
    if [[ -n $SPREAD ]]; then
        echo "client ends by source address (ss, $(( DURATION - 5 ))+ s):"
        echo
        echo '```'
        echo "$SPREAD"
        echo '```'
        echo
    fi
    echo "samples:"
    echo
    echo '```'
    printf '%s\n' "${samples[@]}"
    echo '```'
    if [[ -s $NGX_DIR/yace.err ]]; then
        echo
        echo "yace's stderr (last lines):"
        echo
        echo '```'
        tail -n 8 "$NGX_DIR/yace.err"
        echo '```'
    fi
    if [[ -s $NGX_DIR/error.log ]]; then
        echo
        echo "nginx error.log (last lines):"
        echo
        echo '```'
        tail -n 5 "$NGX_DIR/error.log"
        echo '```'
    fi
}
mkdir -p "$RESULTS_DIR"
REPORT=$RESULTS_DIR/connections-$(date -u +%F).md
out | tee -a "$REPORT"
log "appended to $REPORT"
# A smoke test's verdict: yace ended well and held every connection at once.
(( RC == 0 )) || die "yace exited with $RC (its stderr is in the report)"
(( PEAK_EST >= CONNS )) || die "only $PEAK_EST of the $CONNS connections were established at once"
