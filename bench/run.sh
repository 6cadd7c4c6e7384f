#!/usr/bin/env bash
# bench/run.sh — yace vs wrk (HTTP/1.1) and vs h2load (HTTP/2), side by side,
# against a private nginx on 127.0.0.1.
#
#   bench/run.sh                                  # all modes, both tools, 3 reps x 10 s
#   MODES=keepalive,close,conn10k REPS=5 bench/run.sh
#   QUICK=1 TOOLS=wrk bench/run.sh                # smoke test: 2 s, 1 rep
#   YACE=/path/to/yace bench/run.sh               # skip `cargo build`
#
# Environment (defaults in brackets):
#   TOOLS     comma list of wrk,wrk2,yace,yace-slack0,yace-mon,yace-kmon,yace-tui,yace-web,yace-prom,floor,h2load [wrk,yace,h2load]
#             (wrk2: the fixed-rate peer, in the fixed* modes; WRK2 names its
#             binary — build it from https://github.com/giltene/wrk2 with make)
#             (floor: bench/floor.c, built with cc, in the fixed* modes — yace's
#             evenly spaced timetable and tick (FLOOR_TICK_US, 750) with
#             nothing else: no parsing, no histogram, no epoll; what the
#             timetable itself costs, below which no client keeping it can go;
#             with it the report gives one sleep→wake's CPU on CPU 1)
#             (yace-slack0: yace with --timer-slack 0, each request sent at
#             its own due time — the other side of the fixed-rate trade-off)
#             (yace-mon: yace with --monitor system, pid: and nginx: on —
#             what watching the server costs the client)
#             (yace-kmon: yace with the kernel's monitors, --monitor system
#             and pidfile: of nginx's master (its tree, the accept queue of
#             its listener by sock_diag), read every second)
#             (yace-tui: yace with its live dashboard drawn on a 120x40
#             pseudo-terminal (util-linux script) — what watching the run
#             costs; script's copying of the screen is counted too)
#             (yace-web: yace with its live browser page, --dashboard, and one
#             reader on the page's event stream (curl -N, as a browser tab) —
#             what serving the page costs; curl's CPU is counted too)
#             (yace-prom: yace with --prometheus and --otlp on, scraped every
#             second by curl and pushing every second to a sink that answers
#             200 — what the metrics exporters cost; curl's CPU is counted too)
#             (wrk runs the HTTP/1.1 modes, h2load the h2 mode, yace all)
#   MODES     comma list of keepalive,close,conn10k,https,h2  [all five]
#             and the fixed-rate modes fixed<K>k[-c<N>] (e.g. fixed10k,
#             fixed50k-c1000: 10,000 or 50,000 req/s over 50 or N
#             connections; yace's schedule lag p99 is reported beside),
#             and over HTTP/2 fixed<K>k[-c<N>]-h2 (N in flight, 50, over
#             N / H2_STREAMS connections; yace against yace-slack0)
#   H2_STREAMS  h2 mode: concurrent streams per connection (h2load -m, yace --streams) [10]
#   REPS      repetitions per mode and tool          [3; QUICK: 1]
#   DURATION  seconds per run, "10" or "10s"         [10s; QUICK: 2s]
#   QUICK=1   smoke mode; the report goes to bench/out/ instead of bench/results/
#   YACE      path to a yace binary                  [build target/dist/yace]
#   RESULTS_DIR  where the dated report is appended  [bench/results]
#   SETTLE    seconds of rest before each run        [1]
#   QUIET_MAX_BUSY  % busy of CPU 0 or 1 before a run above which we wait, then warn [10]
#   QUIET_WAIT      seconds to wait for a quiet machine before each run [30]
#   RUN_MAX_OTHER   % of CPU 1 during a run not used by the client above which we warn [15]
#
# Fairness: nginx (1 worker) is pinned to CPU 0, every client to CPU 1 with one
# thread; the tools alternate A B A B; requests are counted by nginx's
# stub_status, not by the clients; CPU and RSS come from GNU time. See README.md.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
export PATH="$PATH:/usr/sbin:/sbin"

log()  { printf '[bench] %s\n' "$*" >&2; }
die()  { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }
WARNINGS=()
warn() { printf '[bench] WARNING: %s\n' "$*" >&2; WARNINGS+=("$*"); }

# ---------------------------------------------------------------- settings --
QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
    DURATION=${DURATION:-2s}
    REPS=${REPS:-1}
    IDLE_WAIT=${IDLE_WAIT:-5}
fi
IDLE_WAIT=${IDLE_WAIT:-30}
DURATION=${DURATION:-10s}
REPS=${REPS:-3}
TOOLS=${TOOLS:-wrk,yace,h2load}
MODES=${MODES:-keepalive,close,conn10k,https,h2}
H2_STREAMS=${H2_STREAMS:-10}
SETTLE=${SETTLE:-1}
QUIET_MAX_BUSY=${QUIET_MAX_BUSY:-10}
RUN_MAX_OTHER=${RUN_MAX_OTHER:-15}
QUIET_WAIT=${QUIET_WAIT:-30}

[[ $DURATION =~ ^([0-9]+)s?$ ]] || die "DURATION must be whole seconds, e.g. 10 or 10s (got '$DURATION')"
DUR=${BASH_REMATCH[1]}
(( DUR >= 1 && DUR <= 600 )) || die "DURATION must be 1..600 s"
[[ $REPS =~ ^[0-9]+$ ]] && (( REPS >= 1 )) || die "REPS must be a positive integer"

IFS=, read -r -a TOOL_LIST <<<"$TOOLS"
IFS=, read -r -a MODE_LIST <<<"$MODES"
is_yace() { [[ $1 == yace || $1 == yace-slack0 || $1 == yace-mon || $1 == yace-kmon || $1 == yace-tui || $1 == yace-web || $1 == yace-prom ]]; }
for t in "${TOOL_LIST[@]}"; do is_yace "$t" || [[ $t == wrk || $t == wrk2 || $t == floor || $t == h2load ]] || die "unknown tool '$t' (wrk, wrk2, yace, yace-slack0, yace-mon, yace-kmon, yace-tui, yace-web, yace-prom, floor, h2load)"; done
is_fixed() { [[ $1 =~ ^fixed([0-9]+)k(-c([0-9]+))?(-h2)?$ ]]; }
# A fixed-rate mode over HTTP/2 (no peer paces HTTP/2 requests: yace with
# the tick is measured against yace waking for every arrival).
is_fixed_h2() { is_fixed "$1" && [[ $1 == *-h2 ]]; }
for m in "${MODE_LIST[@]}"; do
    [[ $m == keepalive || $m == close || $m == conn10k || $m == https || $m == h2 ]] || is_fixed "$m" \
        || die "unknown mode '$m' (keepalive, close, conn10k, https, h2, fixed<K>k[-c<N>][-h2], e.g. fixed10k, fixed50k-c1000, fixed10k-h2)"
done
WRK2=${WRK2:-wrk2}
FLOOR_TICK_US=${FLOOR_TICK_US:-750}
[[ $FLOOR_TICK_US =~ ^[0-9]+$ ]] || die "FLOOR_TICK_US must be whole microseconds, e.g. 750 (0: each request at its own due time)"
[[ $H2_STREAMS =~ ^[0-9]+$ ]] && (( H2_STREAMS >= 1 )) || die 'H2_STREAMS must be a positive integer'
has_tool() { [[ ",$TOOLS," == *",$1,"* ]]; }
has_mode() { [[ ",$MODES," == *",$1,"* ]]; }
# The peer a mode is measured against: wrk speaks only HTTP/1.1, h2load is
# the HTTP/2 reference (nghttp2).
peer_for() {
    if [[ $1 == h2 ]]; then echo h2load; elif is_fixed_h2 "$1"; then echo yace-slack0; elif is_fixed "$1"; then echo wrk2; else echo wrk; fi
}
# Requests per second of a fixed-rate mode.
rate_for() { [[ $1 =~ ^fixed([0-9]+)k ]] && echo $(( BASH_REMATCH[1] * 1000 )); }
applies() {   # tool mode: does this tool run in this mode?
    # The fixed-rate modes compare yace (both timer strategies) with wrk2,
    # and with the floor of its timetable.
    if is_fixed_h2 "$2"; then [[ $1 == yace || $1 == yace-slack0 ]]; return; fi
    if is_fixed "$2"; then [[ $1 == yace || $1 == yace-slack0 || $1 == wrk2 || $1 == floor ]]; return; fi
    [[ $1 != yace-slack0 && $1 != floor ]] && { is_yace "$1" || [[ $1 == "$(peer_for "$2")" ]]; }
}

# Connections per mode.
conns_for() {
    # HTTP/2 at a fixed rate: N requests in flight (50) over ⌈N / H2_STREAMS⌉ connections.
    if is_fixed_h2 "$1"; then
        local n=50
        [[ $1 =~ -c([0-9]+)-h2$ ]] && n=${BASH_REMATCH[1]}
        echo $(( (n + H2_STREAMS - 1) / H2_STREAMS )); return
    fi
    if [[ $1 =~ ^fixed[0-9]+k-c([0-9]+)$ ]]; then echo "${BASH_REMATCH[1]}"; return; fi
    case $1 in
        fixed*)    echo 50 ;;
        keepalive) echo 50 ;;
        https)     echo 50 ;;
        h2)        echo 10 ;;
        close)     echo 50 ;;
        conn10k)   echo 10000 ;;
    esac
}

# ------------------------------------------------------------- dependencies --
install_deps() {
    local missing=()
    command -v nginx >/dev/null 2>&1 || missing+=(nginx)
    if has_tool wrk; then command -v wrk >/dev/null 2>&1 || missing+=(wrk); fi
    if has_tool wrk2; then
        command -v "$WRK2" >/dev/null 2>&1 || die "wrk2 not found (WRK2=$WRK2): it is not packaged; build it from source (git clone https://github.com/giltene/wrk2 && make) and set WRK2=/path/to/wrk2/wrk"
    fi
    if has_tool floor; then command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev); fi
    if has_tool h2load && has_mode h2; then command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client); fi
    # GNU time (not the shell keyword): it accepts -f.
    /usr/bin/time -f '%U' true >/dev/null 2>&1 || missing+=(time)
    command -v ps >/dev/null 2>&1 || missing+=(procps)
    command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    if has_tool yace-tui; then command -v script >/dev/null 2>&1 || missing+=(util-linux); fi
    if has_tool yace-web || has_tool yace-prom; then command -v curl >/dev/null 2>&1 || missing+=(curl); fi
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    (( ${#missing[@]} == 0 )) && return 0

    log "installing: ${missing[*]}"
    local sudo=()
    [[ $(id -u) == 0 ]] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    local pkgs=() p
    for p in "${missing[@]}"; do
        [[ $p == nginx ]] && continue
        pkgs+=("$p")
    done
    if [[ " ${missing[*]} " == *" nginx "* ]]; then
        "${sudo[@]}" apt-get install -y -qq nginx-light >&2 || "${sudo[@]}" apt-get install -y -qq nginx >&2
    fi
    (( ${#pkgs[@]} == 0 )) || "${sudo[@]}" apt-get install -y -qq "${pkgs[@]}" >&2
    command -v nginx >/dev/null 2>&1 || die "nginx still missing after install"
}
install_deps
nginx -V 2>&1 | grep -q stub_status || die "this nginx lacks the stub_status module"

# ------------------------------------------------------------------- yace --
if has_tool yace || has_tool yace-mon || has_tool yace-kmon || has_tool yace-tui || has_tool yace-web || has_tool yace-prom; then
    if [[ -z ${YACE:-} ]]; then
        # The shipped build (fat LTO, one codegen unit), not the everyday one.
        log "building yace: cargo build --profile dist -p yace"
        (cd "$REPO" && cargo build --profile dist -p yace) >&2
        YACE="${CARGO_TARGET_DIR:-$REPO/target}/dist/yace"
    fi
    [[ -x $YACE ]] || die "yace binary not found or not executable: $YACE"
fi

# --------------------------------------------------------------- fd limits --
# conn10k needs 10,000 sockets in the client and 10,000 in nginx.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE=$(ulimit -n)
[[ $NOFILE == unlimited ]] && NOFILE=1048576
if (( NOFILE < 65536 )); then
    # Enough for conn10k is enough: say so quietly; otherwise warn (conn10k is skipped).
    msg="could not raise 'ulimit -n' to 65536 (hard limit $(ulimit -Hn)); using $NOFILE"
    if has_mode conn10k && (( NOFILE < $(conns_for conn10k) + 100 )); then warn "$msg"; else log "$msg"; fi
fi

# -------------------------------------------------------------- work dirs --
STAMP=$(date -u +%Y%m%dT%H%M%SZ)-$$
OUT_DIR="$BENCH_DIR/out/$STAMP"          # client logs; bench/out/ is git-ignored
mkdir -p "$OUT_DIR"
if [[ $QUICK == 1 ]]; then
    RESULTS_DIR=${RESULTS_DIR:-$BENCH_DIR/out}
else
    RESULTS_DIR=${RESULTS_DIR:-$BENCH_DIR/results}
fi
mkdir -p "$RESULTS_DIR"
if has_tool floor; then
    FLOOR="$OUT_DIR/floor"
    cc -O2 -o "$FLOOR" "$BENCH_DIR/floor.c" || die "cc could not build bench/floor.c"
fi

NGX_DIR=$(mktemp -d /tmp/yace-bench-nginx.XXXXXX)
chmod 755 "$NGX_DIR"                     # the worker may run as another user
NGINX_PID=
NGINX_WORKER_PID=
CLIENT_PID=
SLEEP_PID=
SINK_PID=
SINK_PORT=

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $SLEEP_PID ]] && kill "$SLEEP_PID" 2>/dev/null || true
    if [[ -n $CLIENT_PID ]] && kill -0 "$CLIENT_PID" 2>/dev/null; then
        kill -TERM "$CLIENT_PID" 2>/dev/null || true
        wait "$CLIENT_PID" 2>/dev/null || true
    fi
    if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$NGINX_PID" 2>/dev/null && kill -KILL "$NGINX_PID" 2>/dev/null || true
    fi
    if [[ -n $NGINX_WORKER_PID ]] && kill -0 "$NGINX_WORKER_PID" 2>/dev/null; then
        sleep 0.5
        kill -0 "$NGINX_WORKER_PID" 2>/dev/null && kill -KILL "$NGINX_WORKER_PID" 2>/dev/null || true
    fi
    [[ -n $SINK_PID ]] && kill "$SINK_PID" 2>/dev/null || true
    rm -rf "$NGX_DIR"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# yace-prom's OTLP collector stand-in (bench/otlp-sink.py), started once,
# outside the timed runs, on CPU 0 with nginx.
if has_tool yace-prom; then
    taskset -c 0 python3 "$BENCH_DIR/otlp-sink.py" >"$NGX_DIR/sink.port" &
    SINK_PID=$!
    for _ in $(seq 100); do SINK_PORT=$(head -n1 "$NGX_DIR/sink.port" 2>/dev/null); [[ -n $SINK_PORT ]] && break; sleep 0.05; done
    [[ -n $SINK_PORT ]] || die "the OTLP sink for yace-prom did not start"
fi

# ------------------------------------------------------------------ nginx --
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start_nginx() {
    local attempt
    for attempt in 1 2 3 4 5; do
        PORT=$(free_port)
        TLS_PORT=$(free_port)
        H2_PORT=$(free_port)
        if [[ ! -s $NGX_DIR/cert.pem ]]; then
            # A throwaway self-signed certificate for the https mode (both clients skip verification, as wrk cannot verify).
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
                -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
                -keyout "$NGX_DIR/key.pem" -out "$NGX_DIR/cert.pem" 2>>"$NGX_DIR/start.log" \
                || die "openssl could not make the https mode's certificate"
        fi
        sed -e "s|@PREFIX@|$NGX_DIR|g" \
            -e "s|@PORT@|$PORT|g" \
            -e "s|@TLS_PORT@|$TLS_PORT|g" \
            -e "s|@H2_PORT@|$H2_PORT|g" \
            -e "s|@NOFILE@|$NOFILE|g" \
            -e "s|@WORKER_CONNECTIONS@|$(( NOFILE - 64 ))|g" \
            -e "s|@BACKLOG@|4096|g" \
            "$BENCH_DIR/nginx/nginx.conf.in" >"$NGX_DIR/nginx.conf"
        rm -f "$NGX_DIR/nginx.pid"
        if taskset -c 0 nginx -p "$NGX_DIR/" -c "$NGX_DIR/nginx.conf" -e "$NGX_DIR/error.log" 2>>"$NGX_DIR/start.log"; then
            for _ in $(seq 50); do [[ -s $NGX_DIR/nginx.pid ]] && break; sleep 0.1; done
            [[ -s $NGX_DIR/nginx.pid ]] || die "nginx started but wrote no pid file"
            NGINX_PID=$(<"$NGX_DIR/nginx.pid")
            for _ in $(seq 50); do
                NGINX_WORKER_PID=$(ps -o pid= --ppid "$NGINX_PID" | head -n1 | tr -d ' ')
                [[ -n $NGINX_WORKER_PID ]] && break
                sleep 0.1
            done
            return 0
        fi
        log "nginx did not start on port $PORT (attempt $attempt): $(tail -n1 "$NGX_DIR/start.log")"
    done
    die "could not start nginx; see messages above"
}

# One stub_status read: prints "<active connections> <requests>".
# Each read is itself one request that nginx counts. Pinned to nginx's CPU.
stub() {
    local out
    out=$(taskset -c 0 timeout 5 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf "GET /nginx_status HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3
        cat <&3' _ "$PORT" 2>/dev/null) || return 1
    awk '{ sub(/\r$/, "") }
         /^Active connections:/          { active = $3 }
         /^ *[0-9]+ +[0-9]+ +[0-9]+ *$/ { requests = $3 }
         END { if (active == "" || requests == "") exit 1; print active, requests }' <<<"$out"
}

start_nginx
URL="http://127.0.0.1:$PORT/"
read -r _ R1 < <(stub) || die "stub_status not answering on $PORT"
read -r _ R2 < <(stub) || die "stub_status not answering on $PORT"
(( R2 - R1 == 1 )) || die "stub_status: two back-to-back reads differ by $((R2 - R1)), expected 1"
log "nginx pid $NGINX_PID (worker $NGINX_WORKER_PID) on $URL, nofile $NOFILE"

# --------------------------------------------------------------- CPU load --
# Prints "busy0 total0 busy1 total1" in clock ticks for cpu0 and cpu1.
cpu_ticks() {
    awk '$1 == "cpu0" || $1 == "cpu1" {
             busy = $2 + $3 + $4 + $7 + $8 + $9   # user nice system irq softirq steal
             total = busy + $5 + $6                # + idle iowait
             printf "%d %d ", busy, total
         } END { print "" }' /proc/stat
}
# busy percentages of cpu0 and cpu1 between two cpu_ticks outputs
busy_pct() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        d0 = y[2] - x[2]; d1 = y[4] - x[4]
        printf "%.1f %.1f\n", (d0 > 0 ? 100 * (y[1] - x[1]) / d0 : 0), (d1 > 0 ? 100 * (y[3] - x[3]) / d1 : 0)
    }'
}

# Wait until only our own stub read is connected (previous run's sockets gone).
# nginx's count sometimes stays a connection or two high after 10,000 were
# reset; a smoke test (QUICK) gives up on it sooner.
wait_idle() {
    local active requests
    for _ in $(seq $(( IDLE_WAIT * 10 ))); do
        read -r active requests < <(stub) || { sleep 0.1; continue; }
        (( active <= 1 )) && return 0
        sleep 0.1
    done
    warn "nginx still had $active connections open ${IDLE_WAIT} s after the previous run"
}

# ------------------------------------------------------------ the clients --
client_cmd() {   # tool mode -> prints argv, one word per line
    local tool=$1 mode=$2 conns
    conns=$(conns_for "$mode")
    local url=$URL
    [[ $mode == https ]] && url="https://127.0.0.1:$TLS_PORT/"
    [[ $mode == h2 ]] && url="https://127.0.0.1:$H2_PORT/"
    is_fixed_h2 "$mode" && url="https://127.0.0.1:$H2_PORT/"
    case $tool in
        h2load)
            printf '%s\n' taskset -c 1 h2load -t1 -c "$conns" -m "$H2_STREAMS" -D "$DUR" "$url"
            ;;
        floor)
            printf '%s\n' taskset -c 1 "$FLOOR" 127.0.0.1 "$PORT" "$(rate_for "$mode")" "$conns" "$DUR" "$FLOOR_TICK_US"
            ;;
        wrk2)
            printf '%s\n' taskset -c 1 "$WRK2" -t1 "-c$conns" "-d${DUR}s" "-R$(rate_for "$mode")" "$url"
            ;;
        wrk)
            printf '%s\n' taskset -c 1 wrk -t1 "-c$conns" "-d${DUR}s"
            [[ $mode == close ]] && printf '%s\n' -H 'Connection: close'
            printf '%s\n' "$url"
            ;;
        yace-tui)
            # The dashboard needs a terminal: a pseudo-terminal of a fixed
            # size, TERM set (CI may have none), the screen thrown away.
            local cmd
            cmd="stty cols 120 rows 40; exec env TERM=xterm-256color $(quote_cmd "$YACE" run "$url" -t 1 -c "$conns" -d "${DUR}s" --json "$OUT_DIR/${CUR_TAG:-$mode-$tool}.json")"
            [[ $mode == close ]] && cmd+=" --no-keepalive"
            [[ $mode == https || $mode == h2 ]] && cmd+=" --insecure"
            [[ $mode == h2 ]] && cmd+=" --http2 --streams $H2_STREAMS"
            printf '%s\n' taskset -c 1 script -qfec "$cmd" /dev/null
            ;;
        yace-web)
            # yace with --dashboard, and one reader on the page's stream once
            # yace has said where it is; the reader's events are kept.
            printf '%s\n' taskset -c 1 bash -c "$WEB_READER" yace-web "$OUT_DIR/yace-web-$mode.events" \
                "$YACE" run "$url" -t 1 -c "$conns" -d "${DUR}s" --dashboard \
                --json "$OUT_DIR/${CUR_TAG:-$mode-$tool}.json"
            [[ $mode == close ]] && printf '%s\n' --no-keepalive
            [[ $mode == https || $mode == h2 ]] && printf '%s\n' --insecure
            [[ $mode == h2 ]] && printf '%s\n' --http2 --streams "$H2_STREAMS"
            ;;
        yace-prom)
            # yace with both exporters, scraped and pushing every second.
            printf '%s\n' taskset -c 1 bash -c "$PROM_READER" yace-prom "$SINK_PORT" \
                "$YACE" run "$url" -t 1 -c "$conns" -d "${DUR}s" --prometheus --otlp \
                --json "$OUT_DIR/${CUR_TAG:-$mode-$tool}.json"
            [[ $mode == close ]] && printf '%s\n' --no-keepalive
            [[ $mode == https || $mode == h2 ]] && printf '%s\n' --insecure
            [[ $mode == h2 ]] && printf '%s\n' --http2 --streams "$H2_STREAMS"
            ;;
        yace|yace-slack0) if is_fixed "$mode"; then
            # A fixed rate over at most `conns` connections, as wrk2 -R -c;
            # the result (for the schedule lag) kept per run.
            printf '%s\n' taskset -c 1 "$YACE" run "$url" -t 1 --rate "$(rate_for "$mode")" \
                --max-inflight "$conns" -d "${DUR}s" --json "$OUT_DIR/${CUR_TAG:-$mode-$tool}.json"
            [[ $tool == yace-slack0 ]] && printf '%s\n' --timer-slack 0
            is_fixed_h2 "$mode" && printf '%s\n' --insecure --http2 --streams "$H2_STREAMS"
            return 0
        fi ;;&
        yace|yace-mon|yace-kmon)
            printf '%s\n' taskset -c 1 "$YACE" run "$url" -t 1 -c "$conns" -d "${DUR}s"
            # What watching the server costs: this machine's /proc (TCP
            # states on the port included), nginx's worker and its
            # stub_status, read every second on the client's core.
            [[ $tool == yace-mon ]] && printf '%s\n' --monitor system --monitor "pid:$NGINX_WORKER_PID" \
                --monitor "nginx:http://127.0.0.1:$PORT/nginx_status" --json "$OUT_DIR/yace-mon-$mode.json"
            # The kernel's monitors: the machine, the port's sockets and
            # accept queue, and nginx's process tree with its listener.
            [[ $tool == yace-kmon ]] && printf '%s\n' --monitor system --monitor "pidfile:$NGX_DIR/nginx.pid" \
                --json "$OUT_DIR/yace-kmon-$mode.json"
            [[ $mode == close ]] && printf '%s\n' --no-keepalive
            [[ $mode == https || $mode == h2 ]] && printf '%s\n' --insecure
            [[ $mode == h2 ]] && printf '%s\n' --http2 --streams "$H2_STREAMS"
            ;;
    esac
    return 0
}
# yace-prom's wrapper: SINK_PORT YACE ARGS… — yace pushing every second to
# the OTLP sink (started once, untimed) and curl scraping the address yace
# prints every second until yace ends.
PROM_READER='port=$1; shift; '\
'err=$(mktemp); OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port OTEL_METRIC_EXPORT_INTERVAL=1000 "$@" 2>"$err" & y=$!; url=; '\
'for _ in $(seq 200); do url=$(grep -o "metrics for Prometheus at http://[^ ]*" "$err" | head -n1 | cut -d" " -f5); '\
'[[ -n $url ]] && break; sleep 0.05; done; '\
'( while kill -0 "$y" 2>/dev/null; do curl -s "$url" >/dev/null; sleep 1; done ) & c=$!; '\
'rc=0; wait "$y" || rc=$?; kill "$c" "$sink" 2>/dev/null; wait "$c" "$sink" 2>/dev/null; '\
'cat "$err" >&2; rm -f "$err"; [[ -n $url ]] || { echo "yace-prom: yace said no metrics address" >&2; exit 1; }; exit "$rc"'
# yace-web's wrapper: EVENTS_FILE YACE ARGS… — runs yace, reads the page's
# address from its stderr ("live page at http://…/"), keeps `curl -N` on
# the stream (…/events) until yace ends; yace's exit code.
# (One line: client_cmd prints one word a line.)
WEB_READER='events=$1; shift; err=$(mktemp); "$@" 2>"$err" & y=$!; url=; '\
'for _ in $(seq 200); do url=$(grep -o "live page at http://[^ ]*" "$err" | head -n1 | cut -d" " -f4); '\
'[[ -n $url ]] && break; sleep 0.05; done; c=; '\
'if [[ -n $url ]]; then curl -sN "${url}events" >"$events" & c=$!; fi; '\
'rc=0; wait "$y" || rc=$?; if [[ -n $c ]]; then kill "$c" 2>/dev/null; wait "$c" 2>/dev/null; fi; '\
'cat "$err" >&2; rm -f "$err"; [[ -n $url ]] || { echo "yace-web: yace said no page address" >&2; exit 1; }; exit "$rc"'
quote_cmd() {   # shell-quote argv for the report, readably
    local w out=
    for w in "$@"; do
        if [[ $w =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then out+="$w "; else out+="'${w//\'/\'\\\'\'}' "; fi
    done
    printf '%s' "${out% }"
}
# voluntary context switches of the nginx worker so far: how often it slept
# and was woken (a burst of requests wakes it once)
nginx_wakeups() {
    awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$NGINX_WORKER_PID/status"
}
# user+sys CPU seconds used so far by the nginx worker
nginx_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$NGINX_WORKER_PID/stat"
}

RAW="$OUT_DIR/runs.tsv"
printf 'mode\ttool\trep\tconns\twall_s\tserver_requests\tmid_active\tuser_s\tsys_s\tmaxrss_kb\trc\tquiet_cpu0\tquiet_cpu1\trun_cpu0\trun_cpu1\tnginx_cpu_s\twakeups\tserver_wakeups\n' >"$RAW"
FAILED=0

run_one() {
    local mode=$1 tool=$2 rep=$3 conns argv=() tag timef clog
    conns=$(conns_for "$mode")
    tag="$mode-$tool-$rep"
    CUR_TAG=$tag
    mapfile -t argv < <(client_cmd "$tool" "$mode")
    timef="$OUT_DIR/$tag.time"
    clog="$OUT_DIR/$tag.log"

    if [[ $mode == conn10k ]] && (( NOFILE < conns + 100 )); then
        warn "$tag: skipped, 'ulimit -n' is $NOFILE (< $((conns + 100)))"
        FAILED=1
        return 0
    fi

    wait_idle
    sleep "$SETTLE"

    # Is the machine quiet? 1 s samples of CPU 0 and CPU 1, for up to QUIET_WAIT s.
    local q0 q1 s_a s_b waited=0
    while :; do
        s_a=$(cpu_ticks); sleep 1; s_b=$(cpu_ticks)
        read -r q0 q1 < <(busy_pct "$s_a" "$s_b")
        awk -v a="$q0" -v b="$q1" -v m="$QUIET_MAX_BUSY" 'BEGIN { exit !(a > m || b > m) }' || break
        (( waited == 0 )) && log "waiting up to ${QUIET_WAIT}s for the machine to be quiet (cpu0 ${q0}% cpu1 ${q1}%)"
        (( ++waited < QUIET_WAIT )) || break
    done
    (( waited > 0 )) && log "waited ${waited}s for quiet"
    if awk -v a="$q0" -v b="$q1" -v m="$QUIET_MAX_BUSY" 'BEGIN { exit !(a > m || b > m) }'; then
        warn "$tag: machine not quiet before the run: cpu0 ${q0}% cpu1 ${q1}% busy, loadavg $(cut -d' ' -f1-3 /proc/loadavg); top: $(ps -eo comm,pcpu --sort=-pcpu --no-headers | head -n3 | tr -s ' ' | paste -sd, -)"
    fi

    log "run $tag: $(quote_cmd "${argv[@]}")"
    local r_before r_after r_mid active_mid=NA reads=0 t0 t1 c_a c_b n_a n_b v_a v_b rc=0
    read -r _ r_before < <(stub) || die "$tag: stub_status read failed"
    c_a=$(cpu_ticks)
    n_a=$(nginx_cpu)
    v_a=$(nginx_wakeups)
    t0=$(date +%s.%N)
    # Bounded: the client's own -d, and a hard timeout as a backstop.
    timeout -k 5 $(( DUR + 60 )) /usr/bin/time -o "$timef" -f '%U %S %M %e %w' "${argv[@]}" >"$clog" 2>&1 &
    CLIENT_PID=$!
    # One server-side sample mid-run: how many connections the client holds.
    sleep "$(awk -v d="$DUR" 'BEGIN { print d / 2 }')" &
    SLEEP_PID=$!
    wait "$SLEEP_PID"    # unlike a foreground sleep, `wait` lets Ctrl-C in at once
    SLEEP_PID=
    if read -r active_mid r_mid < <(stub); then
        reads=$((reads + 1))
        active_mid=$((active_mid - 1))   # minus the stub read itself
    else
        active_mid=NA
    fi
    wait "$CLIENT_PID" || rc=$?
    CLIENT_PID=
    t1=$(date +%s.%N)
    c_b=$(cpu_ticks)
    n_b=$(nginx_cpu)
    v_b=$(nginx_wakeups)
    read -r _ r_after < <(stub) || die "$tag: stub_status read failed"
    reads=$((reads + 1))

    local served=$(( r_after - r_before - reads ))
    local wall r0 r1 u=NA s=NA m=NA w=NA
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    read -r r0 r1 < <(busy_pct "$c_a" "$c_b")
    if [[ -s $timef ]]; then
        read -r u s m _ w < <(tail -n1 "$timef")
    fi
    if (( rc != 0 )) || [[ $u == NA ]]; then
        warn "$tag: client failed (exit $rc); last lines of $clog: $(tail -n3 "$clog" | tr '\n' ' ')"
        FAILED=1
        [[ $rc == 0 ]] && rc=1
    fi
    local ngx_s
    ngx_s=$(awk -v a="$n_a" -v b="$n_b" 'BEGIN { printf "%.2f", b - a }')
    # During the run CPU 1 should be busy with the client only. (CPU 0 also runs
    # kernel work that is charged to no task, e.g. ksoftirqd in close mode, so
    # its busy % and nginx's CPU seconds are only recorded in the raw lines.)
    if [[ $u != NA ]]; then
        local other
        other=$(awk -v r1="$r1" -v w="$wall" -v u="$u" -v s="$s" 'BEGIN { printf "%.1f", r1 - 100 * (u + s) / w }')
        if awk -v o="$other" -v m="$RUN_MAX_OTHER" 'BEGIN { exit !(o > m) }'; then
            warn "$tag: CPU 1 was ${r1}% busy but the client used only $(awk -v o="$other" -v r="$r1" 'BEGIN { print r - o }')% of the wall time: something else ran on the client's CPU"
        fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$mode" "$tool" "$rep" "$conns" "$wall" "$served" "$active_mid" "$u" "$s" "$m" "$rc" \
        "$q0" "$q1" "$r0" "$r1" "$ngx_s" "${w:-NA}" "$(( v_b - v_a ))" >>"$RAW"
    log "  -> $served requests in ${wall}s, client cpu ${u}u+${s}s, maxrss ${m} KiB, mid-run conns $active_mid, cpu0 ${r0}% cpu1 ${r1}%"
}

# -------------------------------------------------------------------- run --
log "modes: $MODES; tools: $TOOLS; $REPS rep(s) x ${DUR}s; logs in $OUT_DIR"
for mode in "${MODE_LIST[@]}"; do
    for rep in $(seq "$REPS"); do
        for tool in "${TOOL_LIST[@]}"; do        # interleaved: A B A B ...
            applies "$tool" "$mode" && run_one "$mode" "$tool" "$rep"
        done
    done
done

# ----------------------------------------------------------------- report --
cp "$NGX_DIR/error.log" "$OUT_DIR/nginx-error.log" 2>/dev/null || true
if grep -qE '\[(alert|crit|emerg)\]' "$OUT_DIR/nginx-error.log" 2>/dev/null; then
    warn "nginx error.log has alerts: $(grep -E '\[(alert|crit|emerg)\]' "$OUT_DIR/nginx-error.log" | head -n3 | tr '\n' ' ')"
fi
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
host=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)
if [[ -n ${RESULTS_NAME:-} ]]; then
    slug=$RESULTS_NAME
else
    # CPU model + core count says more than a VM's hostname.
    slug=$(printf '%s-%scpu' "${cpu_model:-$host}" "$(nproc)" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
fi
RESULTS_FILE="$RESULTS_DIR/$(date -u +%Y-%m-%d)-$slug.md"

commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "no-commit")
if [[ -n $(git -C "$REPO" status --porcelain -- . ':(exclude)bench/results' ':(exclude)bench/out' 2>/dev/null) ]]; then
    commit+="-dirty"
fi
nginx_version=$(nginx -v 2>&1 | sed 's/^nginx version: //')
wrk_version=$( (wrk -v 2>&1 || true) | head -n1 | sed 's/ Copyright.*//')
has_tool wrk2 && wrk_version+="; wrk2: $( ("$WRK2" -v 2>&1 || true) | head -n1 | sed 's/ Copyright.*//') ($WRK2)"
h2load_version=$( (h2load --version 2>&1 || true) | head -n1)
yace_version=
if has_tool yace; then yace_version=$("$YACE" --version 2>/dev/null | head -n1 || true); fi

REPORT="$OUT_DIR/report.md"
{
    echo "## yace vs wrk and h2load — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo "- machine: \`$host\`, $(nproc) CPUs, ${cpu_model:-unknown CPU}, kernel $(uname -r), ${mem_gib} GiB RAM"
    echo "- nginx: $nginx_version (1 worker, pinned to CPU 0, \`return 200 \"hello world\\n\"\`, access_log off)"
    echo "- wrk: ${wrk_version:-n/a}; h2load: ${h2load_version:-n/a}"
    echo "- yace: commit \`$commit\`${yace_version:+ ($yace_version)}${YACE:+, binary \`$YACE\`}"
    echo "- settings: TOOLS=$TOOLS MODES=$MODES REPS=$REPS DURATION=${DUR}s QUICK=$QUICK; ulimit -n $NOFILE; clients pinned to CPU 1; runs interleaved"
    echo "- commands (URL is the private nginx on a free port):"
    for mode in "${MODE_LIST[@]}"; do
        for tool in "${TOOL_LIST[@]}"; do
            applies "$tool" "$mode" || continue
            CUR_TAG="$mode-$tool-N"   # the listing names a run's result by its rep
            mapfile -t argv < <(client_cmd "$tool" "$mode")
            echo "  - $mode / $tool: \`/usr/bin/time -f '%U %S %M %e %w' $(quote_cmd "${argv[@]}")\`"
        done
    done
    echo
    # Each mode's peer, as peer_for says (mode=peer,...).
    peers=$(for m in "${MODE_LIST[@]}"; do printf '%s=%s,' "$m" "$(peer_for "$m")"; done)
    python3 - "$RAW" "$peers" <<'PY'
import csv, json, os, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
peers = dict(p.split("=", 1) for p in sys.argv[2].split(",") if p)
out_dir = os.path.dirname(sys.argv[1])

def lag_p99(r):
    # yace's own schedule lag (fixed-rate modes keep each run's result).
    try:
        res = json.load(open(os.path.join(out_dir, f"{r['mode']}-{r['tool']}-{r['rep']}.json")))
    except (OSError, ValueError):
        return None
    for p in ((res["summary"].get("lag") or {}).get("percentiles") or []):
        if p["p"] == 99.0:
            return p["us"]
    return None
order_modes, order_tools = [], []
for r in rows:
    if r["mode"] not in order_modes: order_modes.append(r["mode"])
    if r["tool"] not in order_tools: order_tools.append(r["tool"])

def med(xs):
    return statistics.median(xs) if xs else None

def fmt(x, spec):
    return "—" if x is None else format(x, spec)

stats = {}
for mode in order_modes:
    for tool in order_tools:
        rs = [r for r in rows if r["mode"] == mode and r["tool"] == tool]
        if not rs:
            continue
        ok = [r for r in rs if r["rc"] == "0" and r["user_s"] != "NA" and int(r["server_requests"]) > 0]
        reqs = lambda r: int(r["server_requests"])
        cpu = lambda r: float(r["user_s"]) + float(r["sys_s"])
        stats[(mode, tool)] = dict(
            conns=rs[0]["conns"],
            runs=f"{len(ok)}/{len(rs)}",
            rps=med([reqs(r) / float(r["wall_s"]) for r in ok]),
            rpc=med([reqs(r) / cpu(r) for r in ok if cpu(r) > 0]),
            uus=med([float(r["user_s"]) * 1e6 / reqs(r) for r in ok]),
            sus=med([float(r["sys_s"]) * 1e6 / reqs(r) for r in ok]),
            rss=max([int(r["maxrss_kb"]) / 1024 for r in ok], default=None),
            act=med([int(r["mid_active"]) for r in ok if r["mid_active"] != "NA"]),
            lag=med([x for x in (lag_p99(r) for r in ok) if x is not None]),
            # The whole client process's voluntary context switches (GNU
            # time's %w) per request: how often it slept and was woken.
            wpr=med([int(r["wakeups"]) / reqs(r) for r in ok if r.get("wakeups", "NA") not in ("NA", "", None)]),
            # The nginx worker's, likewise: requests that arrive in a burst
            # share one of its wake-ups (and the client pays for waking it).
            swpr=med([int(r["server_wakeups"]) / reqs(r) for r in ok if r.get("server_wakeups", "NA") not in ("NA", "", None)]),
        )

# What the extras cost on their own threads' clocks (client.extras_cpu_s),
# as a share of the client's CPU from GNU time: free of the machine's noise.
extra_key = {"yace-tui": "live_view", "yace-web": "live_page", "yace-prom": "exporters"}
def extras_share(r):
    key = extra_key.get(r["tool"])
    if not key or r["user_s"] == "NA":
        return None
    try:
        res = json.load(open(os.path.join(out_dir, f"{r['mode']}-{r['tool']}-{r['rep']}.json")))
    except (OSError, ValueError):
        return None
    cpu = res["client"].get("extras_cpu_s", {}).get(key)
    total = float(r["user_s"]) + float(r["sys_s"])
    return None if cpu is None or total <= 0 else 100 * cpu / total

print("| mode | conns | tool | ok runs | req/s (median) | req/CPU-s (median) | user µs/req | sys µs/req | wake-ups/req | server wake-ups/req | peak RSS MiB | server-side conns mid-run | schedule lag p99 µs | yace/peer req/CPU-s |")
print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for (mode, tool), st in stats.items():
    ratio = ""
    peer_name = peers[mode]
    peer = stats.get((mode, peer_name)) if tool != peer_name else None
    if tool in ("yace", "yace-slack0", "yace-mon", "yace-kmon", "yace-tui", "yace-web", "yace-prom", "floor") and peer and peer["rpc"] and st["rpc"]:
        ratio = f"**{st['rpc'] / peer['rpc']:.3f}**"
        if mode.startswith("fixed"):
            ratio += f" (CPU {peer['rpc'] / st['rpc']:.2f}× {peer_name}'s)"
    plain = stats.get((mode, "yace"))
    if tool == "yace-kmon" and plain and plain["rpc"] and st["rpc"]:
        ratio += f" (the kernel's monitors cost {100 * (1 - st['rpc'] / plain['rpc']):+.1f}% of yace's req/CPU-s)"
    if tool == "yace-mon" and plain and plain["rpc"] and st["rpc"]:
        ratio += f" (monitors cost {100 * (1 - st['rpc'] / plain['rpc']):+.1f}% of yace's req/CPU-s)"
    own = med([x for x in (extras_share(r) for r in rows if r["mode"] == mode and r["tool"] == tool) if x is not None])
    if own is not None:
        ratio += f" (its own threads: {own:.2f}% of the client's CPU)"
    if tool == "yace-tui" and plain and plain["rpc"] and st["rpc"]:
        ratio += f" (the dashboard costs {100 * (1 - st['rpc'] / plain['rpc']):+.1f}% of yace's req/CPU-s)"
    if tool == "yace-prom" and plain and plain["rpc"] and st["rpc"]:
        ratio += f" (the exporters, scraped and pushing every second, cost {100 * (1 - st['rpc'] / plain['rpc']):+.1f}% of yace's req/CPU-s)"
    if tool == "yace-web" and plain and plain["rpc"] and st["rpc"]:
        ratio += f" (the live page and its reader cost {100 * (1 - st['rpc'] / plain['rpc']):+.1f}% of yace's req/CPU-s)"
    print(f"| {mode} | {st['conns']} | {tool} | {st['runs']} | {fmt(st['rps'], ',.0f')} | {fmt(st['rpc'], ',.0f')} "
          f"| {fmt(st['uus'], '.3f')} | {fmt(st['sus'], '.3f')} | {fmt(st['wpr'], '.2f')} | {fmt(st['swpr'], '.2f')} | {fmt(st['rss'], '.1f')} | {fmt(st['act'], '.0f')} | {fmt(st['lag'], ',.0f')} | {ratio} |")
PY
    echo
    echo "req/s = requests counted by nginx stub_status ÷ wall time of the run; req/CPU-s = the same count ÷ the client's user+sys seconds (GNU time); wake-ups = voluntary context switches (the client's from GNU time, the nginx worker's from /proc)."
    if has_tool floor; then
        echo
        echo "floor: bench/floor.c, yace's evenly spaced timetable at a ${FLOOR_TICK_US} µs tick with nothing else (no parsing, histogram or epoll) — what the timetable costs on this machine. On CPU 1 one $(taskset -c 1 "$FLOOR" --wake 1000 3000)."
    fi
    if has_tool yace-kmon; then
        for f in "$OUT_DIR"/yace-kmon-*.json; do
            [[ -e $f ]] || continue
            python3 - "$f" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = r["summary"]["duration_s"]
parts = [f"{s['spec'].split(':')[0]} {100 * (s.get('cpu_s') or 0) / d:.3f}%" for s in r["monitor"]["sources"]]
mode = sys.argv[1].rsplit("yace-kmon-", 1)[1][:-5]
print(f"yace-kmon ({mode}, last rep): the kernel monitors' own CPU, as % of one core: {', '.join(parts)}; "
      f"{r['summary']['responses'] / d:,.0f} responses/s; {len(r['monitor']['sources'][0]['t'])} samples each.")
print()
PY
        done
    fi
    if has_tool yace-mon; then
        for f in "$OUT_DIR"/yace-mon-*.json; do
            [[ -e $f ]] || continue
            python3 - "$f" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = r["summary"]["duration_s"]
parts = [f"{s['spec'].split(':')[0]} {100 * (s.get('cpu_s') or 0) / d:.2f}%" for s in r["monitor"]["sources"]]
mode = sys.argv[1].rsplit("yace-mon-", 1)[1][:-5]
print(f"yace-mon ({mode}, last rep): the monitor threads' own CPU, as % of one core: {', '.join(parts)}; "
      f"{len(r['monitor']['sources'][0]['t'])} samples each.")
print()
PY
        done
    fi
    if has_tool yace-web; then
        for f in "$OUT_DIR"/yace-web-*.events; do
            [[ -e $f ]] || continue
            m=${f##*/yace-web-}; m=${m%.events}
            echo "yace-web ($m, last rep): the stream's reader got $(grep -c '^event: ' "$f") events, $(( $(wc -c <"$f") / 1024 )) KiB: $(grep -c '^event: full' "$f") full, $(grep -c '^event: tail' "$f") tail, $(grep -c '^event: end' "$f") end (the report)."
            echo
        done
    fi
    echo "The ratio is yace's median req/CPU-s ÷ its peer's: wrk for the HTTP/1.1 modes, wrk2 for the fixed-rate modes (the same requests, so 1.25 means 0.8× wrk2's CPU) and yace-slack0 for the fixed-rate HTTP/2 ones (-h2: yace waking for every arrival; no peer paces HTTP/2 requests), h2load for h2 (> 1: yace does more work per CPU-second). h2 mode: HTTPS with ALPN h2, $H2_STREAMS streams per connection. Schedule lag: how late yace sent each request after its due time (its latency still counts from the due time); wrk2 does not report its own."
    if (( ${#WARNINGS[@]} )); then
        echo
        echo "Warnings:"
        for w in "${WARNINGS[@]}"; do echo "- $w"; done
    fi
    echo
    echo "<details><summary>raw runs</summary>"
    echo
    echo '```'
    column -t -s $'\t' "$RAW" 2>/dev/null || cat "$RAW"
    echo '```'
    echo
    echo "</details>"
    echo
} >"$REPORT"

cat "$REPORT"
cat "$REPORT" >>"$RESULTS_FILE"
log "report appended to $RESULTS_FILE (client logs in $OUT_DIR)"

if (( FAILED )); then
    die "some runs failed or were skipped; see warnings"
fi
