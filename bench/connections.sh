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
#   PROCS         client processes sharing CONNS, nginx workers one more
#                 (reuseport); auto: 1 unless one process's open-file
#                 limit cannot hold CONNS                  [auto]
#   YACE          path to a yace binary                    [build target/dist/yace]
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
PROCS=${PROCS:-auto}
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
# processes started here only (a subshell's ulimit), never system-wide.
# nginx starts closing idle keep-alive connections ("worker_connections are
# not enough, reusing connections") once fewer than 1/16 of its
# worker_connections are free, so it gets an eighth more than it holds.
need() { echo $(( $1 + $1 / 8 + 4096 )); }
HARD=$(ulimit -Hn)
# Raising a hard limit takes root with CAP_SYS_RESOURCE (a container may lack it).
raisable() { [[ $HARD == unlimited ]] || (( HARD >= $1 )) || bash -c "ulimit -Hn $1" 2>/dev/null; }
most=1000000
[[ $HARD == unlimited ]] || most=$(( (HARD - 64) * 15 / 16 - 200 ))
if [[ $PROCS == auto ]]; then
    # One process holds them all where the limit allows; else as few as can.
    if raisable "$(need "$CONNS")"; then PROCS=1; else PROCS=$(( (CONNS + most - 1) / most )); fi
fi
[[ $PROCS =~ ^[0-9]+$ ]] && (( PROCS >= 1 && PROCS <= 64 && PROCS <= CONNS )) || die "PROCS must be auto or 1..64 (and at most CONNS)"
PER=$(( (CONNS + PROCS - 1) / PROCS ))
NOFILE=$(need "$PER")
if ! raisable "$NOFILE"; then
    (( PER <= most )) || die "the hard open-file limit is $HARD and cannot be raised here \
(root with CAP_SYS_RESOURCE, or 'ulimit -Hn $NOFILE' before this script); nginx needs one per \
connection and 1/16 of its worker_connections free: at most $most connections a process, \
so PROCS=$(( (CONNS + most - 1) / most )) or more for CONNS=$CONNS"
    NOFILE=$HARD
fi
# nginx: one worker for one client; else one more than the clients, the
# kernel spreading connections over them (reuseport), so none fills up.
WORKERS=1
(( PROCS > 1 )) && WORKERS=$(( PROCS + 1 ))
raise_nofile="ulimit -Hn $NOFILE 2>/dev/null || true; ulimit -n $NOFILE"

if [[ -z ${YACE:-} ]]; then
    log "building yace (the dist profile: the shipped build)"
    (cd "$REPO" && cargo build --profile dist -q -p yace) || die "cargo build failed"
    YACE=$REPO/target/dist/yace
fi
[[ -x $YACE ]] || die "no yace binary at $YACE"

NGX_DIR=$(mktemp -d /tmp/yace-connections.XXXXXX)
chmod 755 "$NGX_DIR"
NGINX_PID=
NGINX_WORKER_PIDS=()
CLIENT_PIDS=()
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    local p
    for p in "${CLIENT_PIDS[@]}"; do
        if kill -0 "$p" 2>/dev/null; then
            kill -TERM "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
    if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$NGINX_PID" 2>/dev/null && kill -KILL "$NGINX_PID" 2>/dev/null || true
    fi
    for p in "${NGINX_WORKER_PIDS[@]}"; do
        if kill -0 "$p" 2>/dev/null; then
            sleep 1
            kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
        fi
    done
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
    -e "s|@WORKERS@|$WORKERS|g" \
    -e "s|@REUSEPORT@|$( (( WORKERS > 1 )) && echo ' reuseport')|g" \
    "$BENCH_DIR/nginx/connections.conf.in" >"$NGX_DIR/nginx.conf"
bash -c "$raise_nofile && exec taskset -c 0 nginx -p '$NGX_DIR/' -c '$NGX_DIR/nginx.conf' -e '$NGX_DIR/error.log'" \
    2>"$NGX_DIR/start.log" || die "nginx did not start: $(tail -n2 "$NGX_DIR/start.log")"
for _ in $(seq 50); do [[ -s $NGX_DIR/nginx.pid ]] && break; sleep 0.1; done
[[ -s $NGX_DIR/nginx.pid ]] || die "nginx started but wrote no pid file"
NGINX_PID=$(<"$NGX_DIR/nginx.pid")
for _ in $(seq 50); do
    mapfile -t NGINX_WORKER_PIDS < <(ps -o pid= --ppid "$NGINX_PID" | tr -d ' ')
    (( ${#NGINX_WORKER_PIDS[@]} >= WORKERS )) && break
    sleep 0.1
done
(( ${#NGINX_WORKER_PIDS[@]} >= 1 )) || die "nginx has no worker"
log "nginx on 127.0.0.1:$PORT (workers ${NGINX_WORKER_PIDS[*]}, worker_connections $(( NOFILE - 64 )) each, open files $NOFILE)"

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
# PROCS clients, each its share of CONNS (the last the rest), all on CPU 1.
args=(run "http://127.0.0.1:$PORT/" -c "$PER" -t "$THREADS" -d "${DURATION}s"
      --connect-timeout 30s -q)
[[ -n $SOURCE_ADDRS ]] && args+=(--source-addrs "$SOURCE_ADDRS")
REQ0=$(stub_requests || echo 0)
YACE_PIDS=()
for (( k = 0; k < PROCS; k++ )); do
    c=$PER
    (( k == PROCS - 1 )) && c=$(( CONNS - PER * (PROCS - 1) ))
    pargs=("${args[@]}")
    pargs[3]=$c
    pargs+=(--json "$NGX_DIR/result-$k.json")
    (( k == 0 )) && log "yace ${pargs[*]}$( (( PROCS > 1 )) && echo " (and $(( PROCS - 1 )) more like it)")"
    bash -c "$raise_nofile && exec timeout -s INT $(( DURATION + 60 )) taskset -c 1 \"\$0\" \"\$@\"" \
        "$YACE" "${pargs[@]}" >"$NGX_DIR/yace-$k.out" 2>"$NGX_DIR/yace-$k.err" &
    CLIENT_PIDS+=($!)
    # The pid is `timeout`'s; yace is its child (taskset execs into it).
    pid=
    for _ in $(seq 100); do
        pid=$(pgrep -P "$!" 2>/dev/null | head -n1 || true)
        [[ -n $pid ]] && break
        sleep 0.05
    done
    [[ -n $pid ]] || die "yace did not start: $(tail -n3 "$NGX_DIR/yace-$k.err")"
    YACE_PIDS+=("$pid")
done
any_client() {
    local p
    for p in "${CLIENT_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
    return 1
}
PEAK_EST=0
PEAK_AT=0
HWMS=()
for (( k = 0; k < PROCS; k++ )); do HWMS+=(0); done
SPREAD=
T0=$(date +%s)
samples=()
ALL=
(( PROCS == 1 )) || ALL=" (all $PROCS)"
while any_client; do
    now=$(( $(date +%s) - T0 ))
    est=$(established)
    rss=0
    for (( k = 0; k < PROCS; k++ )); do
        r=$(awk '/^VmRSS:/ { print $2 }' "/proc/${YACE_PIDS[k]}/status" 2>/dev/null || true)
        h=$(awk '/^VmHWM:/ { print $2 }' "/proc/${YACE_PIDS[k]}/status" 2>/dev/null || true)
        rss=$(( rss + ${r:-0} ))
        [[ -n $h ]] && (( h > HWMS[k] )) && HWMS[k]=$h
    done
    samples+=("$now s: established $est, yace RSS $rss KiB$ALL")
    if (( est > PEAK_EST )); then PEAK_EST=$est; PEAK_AT=$now; fi
    # Once, late in the run: how the client's ends spread over its addresses.
    if [[ -z $SPREAD ]] && (( now >= DURATION - 5 )); then
        SPREAD=$(ss -Htn state established "( dport = :$PORT )" 2>/dev/null \
            | awk '{ a = $3; sub(/:[0-9]+$/, "", a); n[a]++ } END { for (k in n) print k, n[k] }' | sort -V)
    fi
    sleep 2
done
RC=0
for p in "${CLIENT_PIDS[@]}"; do
    wait "$p" || { r=$?; (( RC == 0 )) && RC=$r; }
done
CLIENT_PIDS=()
REQ1=$(stub_requests || echo 0)

RESULTS=()
for (( k = 0; k < PROCS; k++ )); do
    R=$NGX_DIR/result-$k.json
    [[ -s $R ]] || { cat "$NGX_DIR/yace-$k.err" >&2; die "yace $k wrote no result (exit $RC)"; }
    RESULTS+=("$R")
done
read -r RESPONSES RPS ERRORS CPU OPENED < <(jq -rs '[(map(.summary.responses) | add), (map(.summary.rps) | add | floor), (map(.summary.errors) | add), (map(.client.cpu_s) | add), (map(.summary.connections_opened) | add)] | @tsv' "${RESULTS[@]}")
OUTCOMES=$(jq -cs 'map(.outcomes | to_entries) | add | group_by(.key) | map({key: .[0].key, value: (map(.value) | add)}) | from_entries | with_entries(select(.value > 0))' "${RESULTS[@]}")
HWM_KB=0
for h in "${HWMS[@]}"; do HWM_KB=$(( HWM_KB + h )); done
PER_CONN=$(( HWM_KB * 1024 / CONNS ))

out() {
    echo "## $(date -u +%F) — $CONNS keep-alive connections, yace $("$YACE" --version | awk '{ print $2 }')"
    echo
    echo "machine: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs, kernel $(uname -r), open files at most $HARD a process; nginx $(nginx -v 2>&1 | sed 's|.*/||') $WORKERS worker(s) on CPU 0, $PROCS yace process(es) -t $THREADS on CPU 1"
    echo
    echo "command: yace ${args[*]}$( (( PROCS > 1 )) && echo " — $PROCS processes, -c $PER each (the last -c $(( CONNS - PER * (PROCS - 1) )))")"
    echo
    echo "| figure | value |"
    echo "| --- | --- |"
    echo "| connections asked (-c) | $CONNS |"
    echo "| established on nginx's port, peak (ss, every 2 s) | $PEAK_EST (at ${PEAK_AT} s) |"
    echo "| connections yace opened | $OPENED |"
    echo "| yace processes | $PROCS (peak RSS each: ${HWMS[*]} KiB) |"
    echo "| yace peak RSS (VmHWM$( (( PROCS > 1 )) && echo ", summed")) | $(awk -v k="$HWM_KB" 'BEGIN { printf "%.1f MiB (%d KiB)", k / 1024, k }') |"
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
    for (( k = 0; k < PROCS; k++ )); do
        [[ -s $NGX_DIR/yace-$k.err ]] || continue
        echo
        echo "yace $k's stderr (last lines):"
        echo
        echo '```'
        tail -n 8 "$NGX_DIR/yace-$k.err"
        echo '```'
    done
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
