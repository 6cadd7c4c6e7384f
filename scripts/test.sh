#!/usr/bin/env bash
# yace's test command (the README's second command, and what CI runs).
# It does its own set-up on a fresh Debian machine: system packages the
# tests and the benchmark smoke test need, then the crates (cargo fetches
# them), then every gate: format, lints, docs, tests, fuzz smoke, benchmark
# smoke, and the Debian package installed with dpkg -i, run and purged.
#
#   scripts/test.sh           the full gate (CI): ~10 min warm, ~20 on a fresh
#                             machine; needs apt (nginx, wrk, Apache, php-fpm,
#                             ab, h2load) and installs nightly Rust's
#                             cargo-fuzz on first use.
#   scripts/test.sh --quick   for contributors: format, lints, docs and every
#                             test except the real Apache/nginx/php-fpm stacks;
#                             no fuzzing, no benchmark. A few minutes warm;
#                             needs nginx (the TLS tests' peer), ab, xmllint
#                             and chromium (the HTML report's browser checks).
#   --contended               with either: the same gate beside one CPU hog
#                             per core (a busy loop this script starts,
#                             bounded to YACE_HOG_SECONDS, default 2 h, and
#                             kills by PID when it ends, however it ends).
#                             The tests assert behaviour, not speed, so the
#                             gate must pass on a busy machine too; run it
#                             so once per change that touches tests.
#
# Every test binary runs even when one fails (cargo test --no-fail-fast);
# the whole output is kept in target/test-output.txt and the gate ends with
# one line per failing test ("FAILED <binary>: <test>") and exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
CONTENDED=0
for arg in "$@"; do
    case "$arg" in
        --quick) QUICK=1 ;;
        --contended) CONTENDED=1 ;;
        *) echo "usage: scripts/test.sh [--quick] [--contended]" >&2; exit 2 ;;
    esac
done

# Each phase's heading says how long the gate has run so far (the README's
# figures come from these).
log() { printf '\n== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# --- what failed, said once at the end however the script ends -------------
TEST_LOG=target/test-output.txt
mkdir -p target
: >"$TEST_LOG"
TESTS_FAILED=0
HOGS=()
# One line per failing test, named with its binary (cargo's "Running
# tests/lab/main.rs (target/debug/deps/lab-…)" line before it); a binary
# that failed without a failing test (it crashed, or a doc test) is named
# from cargo's own list of failed targets.
failing_tests() {
    awk '
        /^ *Running / {
            name = $3; sub(/^\(.*\//, "", name); sub(/-[0-9a-f]+\)$/, "", name)
            bin = name " (" $2 ")"; next
        }
        /^ *Doc-tests / { bin = "doc-tests " $2; next }
        /^test .* \.\.\. FAILED$/ { sub(/^test /, ""); sub(/ \.\.\. FAILED$/, ""); print "FAILED " bin ": " $0; next }
        /^error: [0-9]+ targets? failed:/ { list = 1; next }
        list && /^    `/ { gsub(/^ +`|`$/, ""); print "FAILED binary: cargo test " $0; next }
        { list = 0 }
    ' "$TEST_LOG" | awk '!seen[$0]++'
}
finish() {
    local rc=$?
    if [ ${#HOGS[@]} -gt 0 ]; then
        kill "${HOGS[@]}" 2>/dev/null || true
        wait "${HOGS[@]}" 2>/dev/null || true
    fi
    if [ "$TESTS_FAILED" = 1 ]; then
        printf '\n== failing tests (whole output: %s)\n' "$TEST_LOG"
        failing_tests
        [ "$rc" -ne 0 ] || rc=1
    fi
    exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# Runs `cargo test --no-fail-fast ARGS`, output to the terminal and the log;
# a failure is remembered (the gates after it still run) and said at the end.
run_tests() {
    if ! cargo test --no-fail-fast --locked "$@" 2>&1 | tee -a "$TEST_LOG"; then
        TESTS_FAILED=1
    fi
}

if [[ $CONTENDED == 1 ]]; then
    # One busy loop per core, at the tests' own priority, bounded in time
    # in case this script is killed with SIGKILL (no trap runs then).
    HOG_SECONDS=${YACE_HOG_SECONDS:-7200}
    for _ in $(seq "$(nproc)"); do
        bash -c 'end=$((SECONDS + $1)); while [ $SECONDS -lt "$end" ]; do :; done' hog "$HOG_SECONDS" &
        HOGS+=($!)
    done
    log "contended: ${#HOGS[@]} CPU hogs running (PIDs ${HOGS[*]}, at most ${HOG_SECONDS}s)"
fi

# --- system packages -------------------------------------------------------
need=()
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
[ -x /usr/bin/time ] || need+=(time)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
command -v pgrep >/dev/null 2>&1 || need+=(procps)
# ip, tc: the shards' network namespaces (crates/cli/tests/shards/netns.rs).
{ command -v ip && command -v tc; } >/dev/null 2>&1 || need+=(iproute2)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# venv: kubernetes-validate's own environment (below).
python3 -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
# Web stacks for crates/cli/tests/stacks (configs in stacks/): Apache 2.4
# (prefork/event, proxy_fcgi), mod_php, php-fpm, and real `ab` as a peer.
# nginx (above) has the fastcgi and proxy modules built in.
if [[ $QUICK == 0 ]]; then
    [ -x /usr/sbin/apache2 ] || need+=(apache2)
    compgen -G '/usr/lib/apache2/modules/libphp*.so' >/dev/null || need+=(libapache2-mod-php)
    compgen -G '/usr/sbin/php-fpm*' >/dev/null || need+=(php-fpm)
    # The monitors tests' targets (crates/cli/tests/stacks/daemons.rs): a
    # node_exporter for --monitor node:/prom:, an sshd (and ssh) for ssh:.
    [ -x /usr/bin/prometheus-node-exporter ] || need+=(prometheus-node-exporter)
    [ -x /usr/sbin/sshd ] || need+=(openssh-server)
    [ -x /usr/bin/ssh ] || need+=(openssh-client)
fi
command -v ab >/dev/null 2>&1 || need+=(apache2-utils)
# tmux: the live dashboard is driven in a real terminal (crates/cli/tests/yace/cli/live.rs).
command -v tmux >/dev/null 2>&1 || need+=(tmux)
# xmllint: JUnit reports are validated against the JUnit schema.
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
# h2load: the HTTP/2 peer in the benchmark.
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
# chromium: the HTML report is opened and looked at headless
# (tests/browser/report.py); fonts so its text renders.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
# A Chinese font: the --lang zh report is looked at too.
[ -e /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ] || need+=(fonts-wqy-zenhei)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d keeps Debian from starting the system nginx, apache2,
  # php-fpm, node_exporter and sshd services on install.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- Rust toolchain (pinned in rust-toolchain.toml; rustup has it) ---------
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

# --- kubernetes-validate (PyPI), in a venv created once and reused ---------
# `yace k8s render`'s manifests are validated strictly against Kubernetes'
# schemas (crates/cli/tests/shards/render.rs); the test fails, rather than
# skips, when YACE_KUBERNETES_VALIDATE names a validator that does not run.
KV_VERSION=1.37.0
KV_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/yace/kubernetes-validate-$KV_VERSION"
if [ "$("$KV_VENV/bin/kubernetes-validate" --version 2>/dev/null)" != "$KV_VERSION" ]; then
  log "installing kubernetes-validate $KV_VERSION (PyPI) in $KV_VENV"
  rm -rf "$KV_VENV"
  python3 -m venv "$KV_VENV"
  "$KV_VENV/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KV_VERSION"
fi
export YACE_KUBERNETES_VALIDATE="$KV_VENV/bin/kubernetes-validate"

# --- the metrics' readers (PyPI), in a venv created once and reused ---------
# --prometheus is parsed by Prometheus' own Python parser and --otlp decoded
# by OpenTelemetry's own protobuf classes (crates/cli/tests/yace/cli/export.rs).
PM_PINS="prometheus_client==0.26.0 opentelemetry-proto==1.45.2 protobuf==7.36.2"
PM_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/yace/metrics-readers-1"
if ! "$PM_VENV/bin/python" -c 'import prometheus_client, opentelemetry.proto' >/dev/null 2>&1; then
  log "installing the metrics' readers (PyPI: $PM_PINS) in $PM_VENV"
  rm -rf "$PM_VENV"
  python3 -m venv "$PM_VENV"
  # shellcheck disable=SC2086
  "$PM_VENV/bin/pip" install -q --disable-pip-version-check $PM_PINS
fi
export YACE_METRICS_PYTHON="$PM_VENV/bin/python"

log "format"
cargo fmt --all -- --check

log "lints (clippy, warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings

log "docs (cargo doc, warnings denied: broken intra-doc links fail)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# The HTML report in a browser: real runs, real pages, headless Chromium;
# screenshots to look at in target/browser/. The vendored chart library
# must be the one its README names.
browser_checks() {
    log "HTML report in headless Chromium (tests/browser/report.py; screenshots in target/browser/)"
    (cd crates/report/assets/uplot && sha256sum --quiet -c SHA256SUMS)
    python3 tests/browser/report.py --yace target/debug/yace --out target/browser
}

if [[ $QUICK == 1 ]]; then
    log "tests (quick: all but the real stacks; CI runs those too)"
    run_tests --workspace --exclude yace
    run_tests -p yace --bin yace --test yace --test models
    browser_checks
    [[ $TESTS_FAILED == 0 ]] || exit 1
    log "quick gates passed (the full gate, CI's: scripts/test.sh)"
    exit 0
fi

log "tests"
run_tests --workspace
browser_checks

log "fuzz smoke test (fuzz/run.sh 10: every fuzz target builds and runs 10 s)"
# cargo-fuzz needs nightly; the first run installs it (~2 min) and builds
# the targets (~3 min), later runs take about a minute. See fuzz/README.md.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  fuzz/run.sh 10
else
  echo "skipped: no nightly toolchain (cargo-fuzz needs one: rustup toolchain install nightly)"
fi

# The smoke tests below prove the scripts work, not the speed: they use the
# thin-LTO release build (about 4 min on two cores) rather than the shipped
# `dist` one (fat LTO, one codegen unit: a serial build several minutes
# longer); dated benchmarks and packages build `dist` themselves.
log "release build for the smoke tests (cargo build --release)"
cargo build --release --locked -p yace
export YACE="${CARGO_TARGET_DIR:-$PWD/target}/release/yace"
export YACE_PROFILE=release

log "benchmark smoke test (bench/run.sh, QUICK=1: proves the script works; ratios need a quiet machine)"
QUICK=1 QUIET_WAIT=5 bench/run.sh
# The fixed-rate mode with the timetable's floor (bench/floor.c, built with
# cc); wrk2 is not packaged, so yace and the floor only.
QUICK=1 QUIET_WAIT=5 MODES=fixed1k TOOLS=yace,floor bench/run.sh >/dev/null

log "benchmark smoke test (bench/connections.sh: 2,000 connections over 8 source addresses, 5 s)"
CONNS=2000 DURATION=5 bench/connections.sh >/dev/null

log "Debian package (scripts/deb.sh --system: cargo deb, then dpkg -i on this machine, checked, purged)"
# The release binary is the benchmark's (the same build: no second one).
# YACE_PROFILE=release (above) packages it.
# cargo-deb is pinned; a fresh machine builds it once (~1.5 min).
command -v cargo-deb >/dev/null 2>&1 || cargo install cargo-deb --version 3.8.0 --locked
scripts/deb.sh --system

[[ $TESTS_FAILED == 0 ]] || exit 1
log "all gates passed"
