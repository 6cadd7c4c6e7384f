//! The first level of argument parsing (STYLE.md §7): clap checks shapes;
//! `flags` builds and validates the plan, reporting every problem. A leaf:
//! it imports nothing from the rest of the binary.

use clap::{ArgAction, Args};
use std::path::PathBuf;

pub const REPORT_EXAMPLES: &str = "Examples:
  yace run URL -d 30s --json result.json
  yace report result.json                   # the terminal summary again
  yace report result.json -F markdown -o report.md
  yace report result.json -F csv > per-second.csv
  yace report result.json -F junit -o yace-junit.xml  # for CI
  yace report result.json -F html -o report.html       # charts, offline
  yace report before.json after.json        # side by side, differences in %
  yace report before.json after.json -F html -o compare.html  # overlaid
  yace report report.html -F json           # the result a report embeds
  yace report result.json --lang zh         # 中文 (or YACE_LANG=zh, or a zh_* locale)";

/// The language of the summary, Markdown and HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LangArg {
    /// English (the default).
    En,
    /// Chinese (简体中文).
    Zh,
}

/// What `yace report` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// The terminal summary, as `yace run` prints it.
    Text,
    /// Markdown: tables for a ticket, a wiki or a pull request.
    Markdown,
    /// The per-second series as CSV.
    Csv,
    /// The result itself, re-checked against its schema.
    Json,
    /// JUnit XML for CI: thresholds, scenario checks and the run's validity
    /// (interrupted, validity warnings) as test cases.
    Junit,
    /// One self-contained page with charts, offline (several results:
    /// overlaid); it embeds the results, so it can be read back.
    Html,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result written by `yace run --json FILE` (or an HTML report, which
    /// embeds its results); several are compared side by side, each
    /// against the first (text, Markdown, HTML).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,

    /// Output format.
    #[arg(short = 'F', long = "format", value_enum, default_value = "text")]
    pub format: ReportFormat,

    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Language of the text, Markdown and HTML reports (default: YACE_LANG,
    /// else the locale, e.g. LANG=zh_CN.UTF-8, else English).
    #[arg(long = "lang", value_enum, value_name = "LANG")]
    pub lang: Option<LangArg>,
}

pub const RUN_EXAMPLES: &str = "Examples:
  # no URL: benchmark the embedded target (started on 127.0.0.1, a free port)
  yace run
  yace run http://127.0.0.1:8080/ -c 100 -n 100k
  yace run http://127.0.0.1:8080/sleep?ms=20 -c 50 -d 30s --json result.json
  yace run URL -c 50 -d 10s --no-keepalive -m POST \\
      -H 'Content-Type: application/json' --body-file req.json
  # open model: 1000 requests/s, whatever the server does
  yace run URL --rate 1000 -d 30s
  # open model: ramp up, then hold
  yace run URL --stages 30s:0-1000,60s:1000
  # open model, late requests sent anyway (wrk2's way)
  yace run URL --rate 5000 --late catch-up
  # open model, each request at its own due time (least lag, more client CPU)
  yace run URL --rate 1000 --timer-slack 0
  # 5000 virtual users ramped up over 50 s, one request every 5 s each
  yace run URL -u 5000 --ramp-up 50s -d 150s --pacing 5s
  yace run URL -c 50 -d 30s --threshold 'p99<200ms' --threshold 'errors<1%'
  # for CI: the thresholds and validity as JUnit, beside the JSON result
  yace run URL -d 30s --threshold 'p99<200ms' --json r.json --junit junit.xml
  yace run URL -d 60s --html report.html     # charts, opens offline
  # watch the server too: CPU, load, php-fpm's pool, with diagnoses
  yace run URL -d 60s --monitor system --monitor proc:php-fpm \\
      --monitor fpm:http://127.0.0.1/fpm-status --threshold 'server_cpu<80%'
  yace run URL -d 60s --lang zh               # 中文摘要 (or YACE_LANG=zh)
  # a server sending huge heads (many cookies): raise the response limits
  yace run URL --max-head 1M --max-fields 10000
  # the sparkline and latency histogram in a pipe too
  yace run URL -d 30s --graphs | tee run.txt
  # a terminal shows the live dashboard (q stops, m marks a moment,
  # + / - / p / r steer the rate, or the number of users); the one-line
  # progress instead:
  yace run URL -d 60s --no-tui
  # the same charts live in a browser (URL printed; 127.0.0.1 by default)
  yace run URL --rate 2000 -d 10m --dashboard
  # ... with the page's buttons steering the run (a token is printed)
  yace run URL --rate 2000 -d 10m --dashboard --dashboard-control
  # metrics out: Prometheus scrapes, or an OpenTelemetry collector receives
  yace run URL -d 10m --prometheus 127.0.0.1:9464
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 yace run URL -d 10m --otlp
  # a scenario file: validate it and print the resolved plan
  yace run -f journey.toml --dry-run
  # a scenario's journeys as visitors arriving at 50/s (the open model)
  yace run -f journey.toml --rate 50 -d 60s
  # shard 0 of 3 of one run, started together; then `yace merge`
  yace run URL --rate 30000 -d 60s --shard 0/3 --run-id shop-1 --start-at +30s --frame
  # HTTPS, verified against a CA file, one handshake per request
  yace run https://localhost:8443/ --cacert ca.pem --no-keepalive
  # more connections than one address's ~28k ports: leave from 8 addresses
  yace run URL -c 100000 -d 60s --source-addrs 127.0.0.2-127.0.0.9
  # HTTP/2: 1,000 requests in flight on 10 connections
  yace run https://localhost:8443/ --http2 -c 10 --streams 100

Exit codes: 0 success, 1 runtime failure, 2 bad input, 3 threshold breached
(not for a --shard: `yace merge` judges thresholds on the merged run), 4 disk
full, 5 a shard too late to start, 130 SIGINT, 143 SIGTERM";

pub const SERVE_HELP: &str = "Routes:
  /                 200 \"hello world\\n\"
  /bytes/N          N-byte body
  /sleep?ms=N       answers after N ms
  /session?ms=N     PHP-like locked session: one YACESESSID cookie, one at a time
  /vary             random body length (1–2048 bytes)
  /status/N         status N
  /chunked          chunked transfer encoding
  /close            Connection: close
  /echo             echoes the request body
  /_stats           JSON counters of what the server saw (?reset=1 zeroes them)

HTTP/1.1 and HTTP/2 on the same port: ALPN h2 with --tls, prior knowledge
(h2c) without. Misbehaving routes (/bad/...) and ?split=N are in the README.

Examples:
  yace serve --port 8080 &  yace run http://127.0.0.1:8080/ -c 100 -n 100k
  yace serve --port 8080 --idle-close 200ms      # the stale keep-alive race
  # HTTPS, and a client that verifies it
  yace serve --port 8443 --tls --tls-cert-out ca.pem &
  yace run https://localhost:8443/ --cacert ca.pem
  # HTTP/2 limits: 8 streams at once, GOAWAY every 100 requests
  yace serve --port 8080 --h2-max-streams 8 --h2-max-requests 100";

#[derive(Debug, Args, Default, Clone)]
// `-c -5` reaches the flag checks as the value -5 ("must be at least 1"),
// not clap's "unexpected argument" with a misleading `-- -5` tip.
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    // `help = …`, not a doc comment: rustdoc would read `[:port]` as a link.
    #[arg(
        help = "URL to load (http://host[:port]/path). Without one, yace starts its \
                  embedded target on 127.0.0.1 and benchmarks that"
    )]
    pub url: Option<String>,

    #[arg(
        short = 'f',
        long = "file",
        value_name = "PLAN",
        help = "Run a scenario file (TOML or YAML): virtual users, journeys of steps \
                with cookies, extraction and checks. Flags override its [load]"
    )]
    pub file: Option<PathBuf>,

    /// Connections to keep open (closed model); accepts 10k-style counts.
    #[arg(short = 'c', long = "connections", value_name = "N")]
    pub connections: Option<String>,

    /// Total requests to send, then stop (e.g. 100000, 100k).
    #[arg(short = 'n', long = "requests", value_name = "N")]
    pub requests: Option<String>,

    /// How long to run (e.g. 30s, 2m). Default 10s unless -n is given.
    #[arg(short = 'd', long = "duration", value_name = "TIME")]
    pub duration: Option<String>,

    /// Worker threads (default: one per CPU).
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<String>,

    /// Open model: send this many requests per second, on schedule,
    /// whatever the server does; latency counts from the intended time.
    #[arg(long = "rate", value_name = "PER_SECOND")]
    pub rate: Option<String>,

    /// Open model: most requests in flight (and connections) at once.
    #[arg(long = "max-inflight", value_name = "N")]
    pub max_inflight: Option<String>,

    /// Open model with ramps: DURATION:RATE or DURATION:FROM-TO, comma-separated
    /// (e.g. 30s:0-1000,60s:1000,10s:1000-0).
    #[arg(long = "stages", value_name = "STAGES")]
    pub stages: Option<String>,

    /// Open model: a request that could not be sent on time is dropped
    /// (`drop`, the default: no catch-up burst after a stall) or sent late
    /// (`catch-up`, like wrk2); either way it is counted and its latency
    /// runs from when it was due.
    #[arg(long = "late", value_name = "POLICY", default_value = "drop")]
    pub late: String,

    /// Open model: how late a due request may go out so that requests due
    /// close together share one wake-up of the client: they are sent on a
    /// tick of this length. Latency still counts from when each was due, so
    /// the slack shows in it (about half the tick on average). Between
    /// ticks the client sleeps through responses and reads them at the next
    /// tick, timed by the kernel's receive timestamps (HTTP/1.1 and
    /// HTTP/2). 0 sends each request at its own due time and wakes for
    /// every response: the least lag, more client CPU.
    ///
    /// HTTP/2 with --streams and the closed model or virtual users: the
    /// client works in rounds of 2% of the typical response time (at most
    /// this slack; none under 2.5 ms responses), reading each connection
    /// once and writing it once a round. A request's next send waits at
    /// most a round; responses are timed by the kernel. 0: wake for every
    /// arrival.
    #[arg(long = "timer-slack", value_name = "TIME", default_value = "750us")]
    pub timer_slack: String,

    /// Open model: how late a request may be before `--late drop` drops it.
    #[arg(long = "late-after", value_name = "TIME", default_value = "100ms")]
    pub late_after: String,

    /// Virtual users, each with its own connection and cookie jar (server
    /// sessions work), looping over the request (with --think and --pacing).
    /// Ramp with --ramp-up/--ramp-down.
    #[arg(short = 'u', long = "users", value_name = "N")]
    pub users: Option<String>,

    /// Virtual users: time to start all --users (linearly).
    #[arg(long = "ramp-up", value_name = "TIME")]
    pub ramp_up: Option<String>,

    /// Virtual users: time to stop them all (linearly) at the end.
    #[arg(long = "ramp-down", value_name = "TIME")]
    pub ramp_down: Option<String>,

    /// Virtual users as stages: DURATION:USERS or DURATION:FROM-TO, comma-separated.
    #[arg(long = "user-stages", value_name = "STAGES")]
    pub user_stages: Option<String>,

    /// Virtual users: start an iteration every TIME per user (e.g. 5s).
    #[arg(long = "pacing", value_name = "TIME")]
    pub pacing: Option<String>,

    /// Virtual users: wait after each request: 2s, uniform(1s,3s), exponential(2s).
    #[arg(long = "think", value_name = "SPEC")]
    pub think: Option<String>,

    /// Pass/fail criterion, repeatable: p99<200ms, errors<1%, rps>500,
    /// missed==0 (paced users' iterations), behind==0 (the server kept up
    /// with the open model's rate), ...
    /// A breached threshold exits with code 3 (a --shard exits 0 and its
    /// result records the breach: `yace merge` judges the merged run).
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<String>,

    /// HTTP method.
    #[arg(short = 'm', long = "method", default_value = "GET")]
    pub method: String,

    /// Extra request header, repeatable: -H 'Name: value'.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Request body.
    #[arg(long = "body", value_name = "TEXT", conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Request body, read from a file.
    #[arg(long = "body-file", value_name = "FILE")]
    pub body_file: Option<PathBuf>,

    /// Open a new connection for every request (sends Connection: close).
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,

    /// Speak HTTP/2: ALPN h2 for https://, prior knowledge (h2c) for http://.
    #[arg(long = "http2")]
    pub http2: bool,

    /// HTTP/2: concurrent streams per connection (-c 10 --streams 100: up to
    /// 1,000 requests in flight). Default 1.
    #[arg(long = "streams", value_name = "N", requires = "http2")]
    pub streams: Option<String>,

    /// Per-request timeout, from send to the end of the response.
    #[arg(long = "timeout", value_name = "TIME", default_value = "30s")]
    pub timeout: String,

    /// Connect timeout.
    #[arg(long = "connect-timeout", value_name = "TIME", default_value = "10s")]
    pub connect_timeout: String,

    /// Connect to this unix-domain socket instead of the URL's host and
    /// port (as curl's --unix-socket); the URL still gives the path and the
    /// Host header. `unix:/path/to.sock:/PATH` says the same in the URL.
    #[arg(long = "unix-socket", value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,

    /// FastCGI (fcgi:// or fcgi+unix: URLs): the document root;
    /// SCRIPT_FILENAME is DIR joined with the URL's path, as nginx's
    /// $document_root$fastcgi_script_name.
    #[arg(long = "fcgi-root", value_name = "DIR")]
    pub fcgi_root: Option<String>,

    /// FastCGI: keep connections open between requests (FCGI_KEEP_CONN, as
    /// nginx's fastcgi_keep_conn on); by default a connection per request.
    #[arg(long = "fcgi-keep-conn")]
    pub fcgi_keep_conn: bool,

    /// FastCGI: send HTTPS=on, as nginx does for a client that came over TLS.
    #[arg(long = "fcgi-https")]
    pub fcgi_https: bool,

    /// Local addresses to connect from, dealt round-robin over the
    /// connections: a range (127.0.0.2-127.0.0.9), a CIDR block
    /// (127.0.0.0/29) or a comma list. Each adds a local port range, for
    /// more connections than one address's ~28k ports; `yace doctor
    /// --source-addrs` checks the fit.
    #[arg(long = "source-addrs", value_name = "LIST")]
    pub source_addrs: Option<String>,

    /// Largest response head read, in bytes (`512k`), and of a chunked
    /// body's trailers; larger is `header_too_large`.
    #[arg(long = "max-head", value_name = "BYTES", default_value = "256k")]
    pub max_head: String,

    /// Most fields in a response head (and in its trailers).
    #[arg(long = "max-fields", value_name = "N", default_value = "4096")]
    pub max_fields: String,

    #[command(flatten)]
    pub tls: TlsArgs,

    #[command(flatten)]
    pub secrets: SecretArgs,

    /// Write the JSON result (the yace.result.v1 contract) to FILE.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write a JUnit report for CI to FILE (thresholds, checks, validity;
    /// as `yace report -F junit`).
    #[arg(long = "junit", value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write the HTML report to FILE: one page with charts that opens
    /// offline (as `yace report -F html`; written on interruption too).
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,

    #[command(flatten)]
    pub monitor: MonitorArgs,

    #[command(flatten)]
    pub shard: ShardArgs,

    /// No live view at all: no dashboard, no progress line on stderr.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// On a terminal, a one-line progress instead of the full-screen
    /// dashboard (charts, figures, errors; q stops, m marks a moment),
    /// which is the default there. Elsewhere (a pipe, CI, TERM=dumb) a
    /// plain line every few seconds is shown anyway.
    #[arg(long = "no-tui")]
    pub no_tui: bool,

    /// Serve the run's metrics for Prometheus while it runs (OpenMetrics,
    /// at http://ADDR/metrics; default 127.0.0.1 on a free port, printed):
    /// responses, errors by class, statuses, latency, in flight, users,
    /// offered rate, schedule lag, client CPU.
    #[arg(
        long = "prometheus",
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:0"
    )]
    pub prometheus: Option<String>,

    /// With --prometheus: keep serving the final figures (the result's)
    /// this long after the run, for a last scrape.
    #[arg(long = "prometheus-linger", value_name = "TIME", default_value = "0s")]
    pub prometheus_linger: String,

    /// Push the run's metrics to an OpenTelemetry collector over
    /// OTLP/HTTP (protobuf), configured by the standard variables:
    /// OTEL_EXPORTER_OTLP_ENDPOINT (or _METRICS_ENDPOINT), _HEADERS,
    /// OTEL_METRIC_EXPORT_INTERVAL (ms; 10 s here), OTEL_SERVICE_NAME.
    #[arg(long = "otlp")]
    pub otlp: bool,

    #[arg(
        long = "dashboard",
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "",
        help = "Serve a live page of the run for a browser: the HTML report's charts, \
                updated every second, and at the end the report to save. Read-only \
                unless --dashboard-control. \
                ADDR: IP[:PORT] or :PORT; by default 127.0.0.1 on a free port. Its address \
                is printed on stderr. Any address but 127.0.0.1 (or ::1) needs a token: \
                --dashboard-token, or one is made and printed with the address. Give the \
                URL first (yace run URL --dashboard), or write --dashboard=ADDR"
    )]
    pub dashboard: Option<String>,

    /// The token the live page asks for (its address ends in ?token=…).
    /// Without it, one is made when --dashboard listens elsewhere than
    /// 127.0.0.1. Never written to the result or the reports.
    #[arg(long = "dashboard-token", value_name = "TOKEN", requires = "dashboard")]
    pub dashboard_token: Option<String>,

    /// Let the live page steer the run, as the terminal's keys do (+10%,
    /// -10%, pause/resume, a rate or a number of users). Control always
    /// needs the token (one is made and printed with the address when
    /// --dashboard-token is not given, even on 127.0.0.1).
    #[arg(long = "dashboard-control", requires = "dashboard")]
    pub dashboard_control: bool,

    /// Draw a responses/s sparkline and a latency histogram under the
    /// summary even when standard output is not a terminal.
    #[arg(long = "graphs", conflicts_with = "no_graphs")]
    pub graphs: bool,

    /// No sparkline or histogram under the summary (drawn by default on a
    /// terminal).
    #[arg(long = "no-graphs")]
    pub no_graphs: bool,

    /// Language of the summary and of --html (default: YACE_LANG, else the
    /// locale, e.g. LANG=zh_CN.UTF-8, else English).
    #[arg(long = "lang", value_enum, value_name = "LANG")]
    pub lang: Option<LangArg>,

    /// Print the resolved plan as JSON and exit without sending anything.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

/// Watching the server during the run, shared by `run` and `ab`.
#[derive(Debug, Args, Default, Clone)]
pub struct MonitorArgs {
    /// Watch the server while loading it (repeatable): `system` (this
    /// machine's CPU, load, memory, TCP states and accept queue on the
    /// target's port), `pid:N`, `pidfile:PATH` (a process and its children,
    /// and the accept queues of the sockets they listen on), `proc:NAME`
    /// (every process named NAME*, summed), `listen:[HOST:]PORT` or
    /// `listen:/PATH.sock` (one socket's accept queue), `node:URL`
    /// (node_exporter), `prom:URL[,match=GLOB]`,
    /// `nginx:URL` (stub_status), `apache:URL` (mod_status),
    /// `fpm:URL` (php-fpm's status page), `fpm:fcgi://HOST:PORT/PATH` or
    /// `fpm:fcgi+unix:SOCKET:/PATH` (the same over FastCGI, e.g. from
    /// `pm.status_listen`), `ssh:[USER@]HOST[:PORT]`
    /// (the server's /proc over your ssh). The result, the summary and the
    /// reports gain the server's series and diagnoses.
    #[arg(long = "monitor", value_name = "SPEC")]
    pub monitor: Vec<String>,

    /// How often the monitors read (at least 100ms).
    #[arg(long = "monitor-interval", value_name = "TIME", default_value = "1s")]
    pub interval: String,
}

/// What outputs hide, shared by `run` and `ab`.
#[derive(Debug, Args, Default, Clone)]
pub struct SecretArgs {
    /// Show secrets in every output (summary, --json, --dry-run, reports):
    /// by default credential-like headers, URL passwords and secret query
    /// values are shown as ***. The result records that this was used.
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,
    /// Also hide this header's value in outputs (repeatable).
    #[arg(long = "redact-header", value_name = "NAME")]
    pub redact_header: Vec<String>,
    /// Also hide this query parameter's value in outputs (repeatable).
    #[arg(long = "redact-param", value_name = "NAME")]
    pub redact_param: Vec<String>,
}

impl SecretArgs {
    pub fn secrets(&self) -> plan::secrets::Secrets {
        plan::secrets::Secrets {
            shown: self.show_secrets,
            headers: self.redact_header.clone(),
            params: self.redact_param.clone(),
        }
    }
}

/// HTTPS options, shared by `run` and `ab`.
#[derive(Debug, Args, Default, Clone)]
pub struct TlsArgs {
    /// HTTPS: do not verify the server's certificate (said loudly in the
    /// summary and recorded in the result).
    #[arg(long = "insecure")]
    pub insecure: bool,
    /// HTTPS: trust the CA certificates in this PEM file instead of the system's.
    #[arg(long = "cacert", value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// HTTPS: client certificate chain (PEM), with --key.
    #[arg(long = "cert", value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// HTTPS: client private key (PEM), with --cert.
    #[arg(long = "key", value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// HTTPS: full handshake on every connection (no session resumption):
    /// the worst case for a server.
    #[arg(long = "no-tls-resume")]
    pub no_tls_resume: bool,
}

impl TlsArgs {
    pub fn options(&self) -> plan::TlsOptions {
        plan::TlsOptions {
            insecure: self.insecure,
            cacert: self.cacert.clone(),
            cert: self.cert.clone(),
            key: self.key.clone(),
            resume: !self.no_tls_resume,
        }
    }
}

pub const CAPACITY_EXAMPLES: &str = "Examples:
  # seed 003's arithmetic: a front page with at most 40% of 1M views a day
  yace capacity --pageviews 1M --share 40% --peak-factor 3
  yace capacity --pageviews 5M --requests-per-view 12 --peak 80/20 --visit 5m
  # backwards: what a measured rate supports, keeping 25% in reserve
  yace capacity --supports 420 --peak 80/20
  yace capacity --result result.json --peak 80/20 --service-time 120ms
  # the pool capped by memory (or read from a result run with --monitor)
  yace capacity --pageviews 1M --service-time 200ms --worker-rss 64MB \\
      --memory 8GB
  # the headroom over a find-max answer, and the servers a load needs
  yace capacity --pageviews 1M --share 40% --find-max find-max.json
  yace capacity --pageviews 1M --share 40% --lang zh   # 中文";

/// `yace lab`: experiments.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum LabCommand {
    /// Run an experiment file: targets × sweep × repetitions in randomized
    /// blocks, each run kept as a result in a directory.
    #[command(after_help = LAB_EXAMPLES)]
    Run(LabRunArgs),
    /// Go on with an interrupted experiment; finished runs are not redone.
    Resume(LabResumeArgs),
    /// The experiment's statistics again, from its directory.
    Report(LabReportArgs),
}

pub const LAB_EXAMPLES: &str = "Examples:
  yace lab run examples/lab/concurrency.toml --dry-run   # every run, the time it takes
  yace lab run examples/lab/concurrency.toml -o sweep/
  yace lab resume sweep/            # after Ctrl-C or a crash
  yace lab report sweep/ -F md -o sweep.md
  yace lab report sweep/ -F html -o sweep.html   # charts, offline (run/resume write sweep/report.html)
  yace lab report sweep/ --lang zh                 # 中文 (or YACE_LANG=zh)";

#[derive(Debug, Args)]
pub struct LabRunArgs {
    /// The experiment (TOML, or YAML by its extension).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where results go (default: lab-NAME-DATE).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// List every run it would do, in order, and the time it takes; run nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// No line per run.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// No full-screen view on a terminal: a line per run, as in a pipe.
    #[arg(long = "no-tui")]
    pub no_tui: bool,
}

#[derive(Debug, Args)]
pub struct LabResumeArgs {
    /// The experiment's directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// No full-screen view on a terminal: a line per run, as in a pipe.
    #[arg(long = "no-tui")]
    pub no_tui: bool,
}

#[derive(Debug, Args)]
pub struct LabReportArgs {
    /// The experiment's directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// text, md, csv, json or html (one page with charts, offline; each
    /// run's own report is written beside its result and linked).
    #[arg(short = 'F', long = "format", default_value = "text")]
    pub format: String,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Language of the text, Markdown and HTML reports (default: YACE_LANG,
    /// else the locale, e.g. LANG=zh_CN.UTF-8, else English).
    #[arg(long = "lang", value_enum, value_name = "LANG")]
    pub lang: Option<LangArg>,
}

/// `yace compare`: groups of saved results, benchstat-like.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline's results (one per repetition).
    #[arg(value_name = "A.json", required = true)]
    pub before: Vec<PathBuf>,
    /// The other side's results, after `--`.
    #[arg(value_name = "B.json", last = true, required = true)]
    pub after: Vec<PathBuf>,
    /// The smallest change worth calling a difference.
    #[arg(long = "practical", default_value = "2%")]
    pub practical: String,
    /// text or md.
    #[arg(short = 'F', long = "format", default_value = "text")]
    pub format: String,
    /// Language of the table (default: YACE_LANG, else the locale, e.g.
    /// LANG=zh_CN.UTF-8, else English).
    #[arg(long = "lang", value_enum, value_name = "LANG")]
    pub lang: Option<LangArg>,
}

/// `yace probe`: this machine's `--monitor system` figures on stdout.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Time between samples.
    #[arg(long = "interval", value_name = "TIME", default_value = "1s")]
    pub interval: String,
    /// Samples to print before ending (it also ends when stdout closes).
    #[arg(long = "count", value_name = "N", default_value = "86400")]
    pub count: u64,
    /// Also count TCP sockets by state on this local port.
    #[arg(long = "port", value_name = "PORT")]
    pub port: Option<u16>,
}

/// `yace capacity`: the rate a server must hold, from its traffic.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// The tested page's own views a day (`1M`, `250k`), not the whole
    /// site's: the site's rate is the page's ÷ --share.
    #[arg(long = "pageviews", value_name = "N")]
    pub pageviews: Option<String>,
    /// The tested page's share of the site's traffic, e.g. `40%`: the site's
    /// rate = the page's rate ÷ this share.
    #[arg(long = "share", value_name = "PCT", default_value = "100%")]
    pub share: String,
    /// Requests per page view (assets and API calls from this server).
    #[arg(long = "requests-per-view", value_name = "N", default_value = "1")]
    pub requests_per_view: String,
    /// The peak as a multiple of the day's average rate.
    #[arg(long = "peak-factor", value_name = "F", conflicts_with = "peak")]
    pub peak_factor: Option<String>,
    /// `80/20`: 80% of the day's traffic in 20% of its hours.
    #[arg(long = "peak", value_name = "80/20")]
    pub peak: Option<String>,
    /// A visit's length, for concurrent users by Little's law (`5m`).
    #[arg(long = "visit", value_name = "TIME")]
    pub visit: Option<String>,
    /// Page views per visit, with --visit.
    #[arg(long = "views-per-visit", value_name = "N", default_value = "1")]
    pub views_per_visit: String,
    /// Backwards: the tested page's views a day this many req/s supports.
    #[arg(long = "supports", value_name = "RATE", conflicts_with = "pageviews")]
    pub supports: Option<String>,
    /// Backwards, from a result: its responses/s (and mean latency as the
    /// service time, unless --service-time).
    #[arg(long = "result", value_name = "FILE", conflicts_with_all = ["pageviews", "supports"])]
    pub result: Option<PathBuf>,
    /// A `yace find-max --json` answer: its maximum rate under the SLOs.
    /// With --pageviews: the headroom over the rate required, and how many
    /// such servers the load needs; alone: what that rate supports.
    #[arg(long = "find-max", value_name = "FILE", conflicts_with_all = ["supports", "result"])]
    pub find_max: Option<PathBuf>,
    /// A `yace lab` experiment's folder: its best point's median throughput
    /// (over its repetitions, client-bound runs left out) stands for the
    /// measured rate, as --find-max's answer does.
    #[arg(long = "lab", value_name = "DIR", conflicts_with_all = ["supports", "result", "find_max"])]
    pub lab: Option<PathBuf>,
    /// With --lab: the target whose best point is read (default: the best
    /// of all targets).
    #[arg(long = "target", value_name = "NAME", requires = "lab")]
    pub lab_target: Option<String>,
    /// Language of the steps (default: YACE_LANG, else the locale, else
    /// English).
    #[arg(long = "lang", value_enum, value_name = "LANG")]
    pub lang: Option<LangArg>,
    /// Backwards: the share of the measured rate kept in reserve.
    #[arg(long = "headroom", value_name = "PCT", default_value = "25%")]
    pub headroom: String,
    /// A request's service time, for the worker pool it needs (php-fpm
    /// pm.max_children, Apache MaxRequestWorkers) by Little's law.
    #[arg(long = "service-time", value_name = "TIME")]
    pub service_time: Option<String>,
    /// Resident memory of one worker (`42MB`), to cap the pool so that it
    /// fits in memory (read from --result when it was monitored with
    /// proc:php-fpm or proc:apache2).
    #[arg(long = "worker-rss", value_name = "SIZE")]
    pub worker_rss: Option<String>,
    /// The server's memory (`8GB`; read from --result when monitored).
    #[arg(long = "memory", value_name = "SIZE")]
    pub memory: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Port to listen on (0: any free port).
    #[arg(short = 'p', long = "port", default_value_t = 8080)]
    pub port: u16,

    /// Address to bind.
    #[arg(long = "bind", default_value = "127.0.0.1")]
    pub bind: String,

    /// Server threads (default: one per CPU).
    #[arg(
        short = 't',
        long = "threads",
        default_value_t = 0,
        hide_default_value = true
    )]
    pub threads: usize,

    /// Misbehave: close keep-alive connections idle this long (a server's
    /// keep-alive timeout; clients meet the stale-connection race).
    #[arg(long = "idle-close", value_name = "TIME")]
    pub idle_close: Option<String>,

    /// Misbehave: `close` or `reset` every connection as soon as it is accepted.
    #[arg(long = "on-accept", value_name = "WHAT")]
    pub on_accept: Option<String>,

    /// Serve HTTPS with a self-signed certificate made at start (its SHA-256
    /// fingerprint is printed); pair with --tls-cert-out for clients' --cacert.
    #[arg(long = "tls")]
    pub tls: bool,

    /// With --tls: write the certificate (PEM) here, e.g. for `yace run --cacert FILE`.
    #[arg(long = "tls-cert-out", value_name = "FILE", requires = "tls")]
    pub tls_cert_out: Option<PathBuf>,

    /// Listen on this unix-domain socket instead of --bind/--port (plain
    /// HTTP/1.1 and h2c); reach it with `yace run unix:PATH:/`.
    #[arg(long = "unix", value_name = "PATH", conflicts_with = "tls")]
    pub unix: Option<PathBuf>,

    /// HTTP/2 (always on: ALPN h2 with --tls, h2c with prior knowledge
    /// without): streams a client may have open at once on one connection
    /// (SETTINGS_MAX_CONCURRENT_STREAMS). Default 128, like nginx.
    #[arg(long = "h2-max-streams", value_name = "N")]
    pub h2_max_streams: Option<String>,

    /// HTTP/2: after N requests on a connection, a graceful GOAWAY (like
    /// nginx's keepalive_requests); streams opened past it are refused.
    /// Default: no limit.
    #[arg(long = "h2-max-requests", value_name = "N")]
    pub h2_max_requests: Option<String>,
}

#[derive(Debug, Args)]
#[command(
    disable_help_flag = true,
    disable_version_flag = true,
    about = "ApacheBench (ab) front end: ab's options and report, without ab's defects",
    after_help = AB_HELP
)]
pub struct AbArgs {
    /// Number of requests to perform (default 1; with -t, a cap).
    #[arg(short = 'n', value_name = "requests")]
    pub requests: Option<u64>,
    /// Number of multiple requests to make at a time.
    #[arg(short = 'c', value_name = "concurrency", default_value_t = 1)]
    pub concurrency: u64,
    /// Seconds to max. to spend on benchmarking (-n, in any order, caps the count).
    #[arg(short = 't', value_name = "timelimit")]
    pub timelimit: Option<f64>,
    /// Seconds to max. wait for each response (default 30); a slow request fails alone.
    #[arg(short = 's', value_name = "timeout", default_value_t = 30.0)]
    pub timeout: f64,
    /// Size of TCP send/receive buffer, in bytes.
    #[arg(short = 'b', value_name = "windowsize")]
    pub window: Option<u32>,
    /// Address to bind to when making outgoing connections.
    #[arg(short = 'B', value_name = "address")]
    pub bind: Option<std::net::IpAddr>,
    /// File containing data to POST (remember also to set -T).
    #[arg(short = 'p', value_name = "postfile")]
    pub postfile: Option<PathBuf>,
    /// File containing data to PUT (remember also to set -T).
    #[arg(short = 'u', value_name = "putfile")]
    pub putfile: Option<PathBuf>,
    /// Content-type header to use for POST/PUT data (default text/plain).
    #[arg(short = 'T', value_name = "content-type")]
    pub content_type: Option<String>,
    /// How much troubleshooting info to print (2: info, 3: response codes).
    #[arg(short = 'v', value_name = "verbosity")]
    pub verbosity: Option<u8>,
    /// Print out results in HTML tables.
    #[arg(short = 'w')]
    pub html: bool,
    /// Use HEAD instead of GET.
    #[arg(short = 'i')]
    pub head: bool,
    /// String to insert as table attributes (with -w).
    #[arg(short = 'x', value_name = "attributes")]
    pub table_attrs: Option<String>,
    /// String to insert as tr attributes (with -w).
    #[arg(short = 'y', value_name = "attributes")]
    pub tr_attrs: Option<String>,
    /// String to insert as td or th attributes (with -w).
    #[arg(short = 'z', value_name = "attributes")]
    pub td_attrs: Option<String>,
    /// Add cookie, eg. 'Apache=1234' (repeatable).
    #[arg(short = 'C', value_name = "attribute", action = ArgAction::Append)]
    pub cookies: Vec<String>,
    /// Add arbitrary header line, eg. 'Accept-Encoding: gzip' (repeatable).
    #[arg(short = 'H', value_name = "attribute", action = ArgAction::Append)]
    pub headers: Vec<String>,
    /// Add Basic WWW Authentication, the attributes are a colon separated username and password.
    #[arg(short = 'A', value_name = "attribute")]
    pub auth: Option<String>,
    /// Add Basic Proxy Authentication, the attributes are a colon separated username and password.
    #[arg(short = 'P', value_name = "attribute")]
    pub proxy_auth: Option<String>,
    /// Proxyserver and port number to use (proxy:port).
    #[arg(short = 'X', value_name = "proxy:port")]
    pub proxy: Option<String>,
    /// Print version number and exit.
    #[arg(short = 'V')]
    pub version: bool,
    /// Use HTTP KeepAlive feature (HTTP/1.1 keep-alive in yace).
    #[arg(short = 'k')]
    pub keepalive: bool,
    /// Do not show percentiles served table.
    #[arg(short = 'd')]
    pub no_percentiles: bool,
    /// Do not show confidence estimators and warnings.
    #[arg(short = 'S')]
    pub no_confidence: bool,
    /// Do not show progress when doing more than 150 requests.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Accept variable document length (yace always does; see --strict-length).
    #[arg(short = 'l')]
    pub accept_variable_length: bool,
    /// Don't exit on socket receive errors (yace never does).
    #[arg(short = 'r')]
    pub no_exit_on_errors: bool,
    /// Output CSV file with percentages served.
    #[arg(short = 'e', value_name = "filename")]
    pub csv: Option<PathBuf>,
    /// Output collected data to gnuplot format file (one line per request, streamed).
    #[arg(short = 'g', value_name = "filename")]
    pub gnuplot: Option<PathBuf>,
    /// Method name.
    #[arg(short = 'm', value_name = "method")]
    pub method: Option<String>,
    /// Display usage information (this message).
    #[arg(short = 'h', long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
    /// SSL/TLS protocol: only ALL (TLS 1.2 or 1.3, negotiated).
    #[arg(short = 'f', value_name = "protocol")]
    pub ssl_protocol: Option<String>,
    /// SSL/TLS cipher suite: not selectable (rustls's safe defaults).
    #[arg(short = 'Z', value_name = "ciphersuite")]
    pub ssl_cipher: Option<String>,
    /// Client certificate chain and private key, in one PEM file.
    #[arg(short = 'E', value_name = "certfile")]
    pub ssl_cert: Option<PathBuf>,
    #[command(flatten)]
    pub tls: TlsArgs,

    #[command(flatten)]
    pub secrets: SecretArgs,
    /// Count responses whose length differs from the first as failed (ab's default).
    #[arg(long = "strict-length")]
    pub strict_length: bool,
    /// Also write yace's JSON result (the yace.result.v1 contract).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write yace's HTML report: one page with charts, offline (not
    /// ab's -w, which prints ab's tables as HTML).
    #[arg(long = "html", value_name = "FILE")]
    pub html_file: Option<PathBuf>,
    #[command(flatten)]
    pub monitor: MonitorArgs,
    /// Worker threads (default: one per CPU, at most -c).
    #[arg(long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    #[arg(value_name = "URL", help = "[http://]hostname[:port]/path")]
    pub url: Option<String>,
}

const AB_HELP: &str = "Where yace ab differs from ab (the report names each where it applies):
  - a request slower than -s fails alone and the run goes on
    (no apr_pollset_poll 70007 abort);
  - Ctrl-C prints the report so far, marked partial (exit 130);
  - document length differences are information, not \"Failed requests:
    Length\" (--strict-length for ab's way);
  - -k is HTTP/1.1 keep-alive; all -c connections open at the start;
    one worker thread per CPU;
  - times are measured in microseconds and shown in ms with decimals;
  - -t and -n work in any order: -t is the time limit, -n a cap.

Examples:
  yace ab -n 10000 -c 100 http://127.0.0.1/
  yace ab -k -c 100 -t 60 http://127.0.0.1/index.php
  yace ab -n 1000 -c 10 -p data.json -T application/json \\
      --json result.json http://127.0.0.1:8080/echo
  # yace's own HTML report beside ab's text (charts, opens offline)
  yace ab -n 10000 -c 100 --html report.html http://127.0.0.1/
  # and watch the server (this machine, nginx's stub_status)
  yace ab -k -c 100 -t 60 --monitor system \\
      --monitor nginx:http://127.0.0.1/nginx_status http://127.0.0.1/";

pub const FIND_MAX_EXAMPLES: &str = "Examples:
  # the highest rate at which p99 stays under 100 ms and errors under 0.1%
  yace find-max http://127.0.0.1:8080/ --slo 'p99<100ms' --slo 'errors<0.1%'
  # a pool of 8 workers x 20 ms (400 req/s) on the embedded target
  yace serve --port 8080 &
  yace find-max 'http://127.0.0.1:8080/pool?ms=20&workers=8' --slo 'p99<100ms'
  # bounded, each trial kept as a result, the answer as JSON
  yace find-max URL --slo 'p99<200ms' --max-rate 5000 --max-time 5m \\
      --out trials/ --json find-max.json
  # a frontier: the highest rate for each latency target, in one search
  yace find-max URL --frontier 'p99<50ms' --frontier 'p99<100ms' --frontier 'p99<200ms'
  # request options are yace run's
  yace find-max URL -m POST -H 'Content-Type: application/json' \\
      --body '{}' --slo 'p95<300ms' --slo 'non_2xx<1%'
  # a server-side SLO, and what ran out above the answer
  yace find-max URL --slo 'p99<100ms' --slo 'server_cpu<80%' \\
      --monitor system --monitor fpm:http://127.0.0.1/fpm-status";

/// `yace find-max`: the request flags of `yace run`, and the search's own.
#[derive(Debug, Args)]
pub struct FindMaxArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Service level objective, repeatable; all must hold: p99<100ms,
    /// errors<0.1%, non_2xx<1%, mean<50ms (the --threshold syntax).
    #[arg(
        long = "slo",
        value_name = "EXPR",
        required_unless_present = "frontier"
    )]
    pub slo: Vec<String>,

    /// One level of a frontier, repeatable: a search per level (each with
    /// every --slo too), trials shared between them, e.g. --frontier
    /// 'p99<50ms' --frontier 'p99<100ms' --frontier 'p99<200ms'.
    #[arg(long = "frontier", value_name = "EXPR")]
    pub frontier: Vec<String>,

    /// The first rate tried, requests/s.
    #[arg(long = "start-rate", value_name = "PER_SECOND", default_value = "100")]
    pub start_rate: String,

    /// Never try more than this many requests/s.
    #[arg(long = "max-rate", value_name = "PER_SECOND", default_value = "100k")]
    pub max_rate: String,

    /// Never try fewer than this many requests/s.
    #[arg(long = "min-rate", value_name = "PER_SECOND", default_value = "1")]
    pub min_rate: String,

    /// Trial length while the answer is far.
    #[arg(long = "trial", value_name = "TIME", default_value = "5s")]
    pub trial: String,

    /// Trial length once the bracket is within 10%.
    #[arg(long = "long-trial", value_name = "TIME", default_value = "10s")]
    pub long_trial: String,

    /// The final hold at the answer.
    #[arg(long = "confirm", value_name = "TIME", default_value = "30s")]
    pub confirm: String,

    /// Rest after a trial that failed (or came close): an overloaded
    /// server works off its queue before the next trial starts.
    #[arg(long = "cool-down", value_name = "TIME", default_value = "3s")]
    pub cool_down: String,

    /// The whole search's time budget; no trial starts that would pass it.
    #[arg(long = "max-time", value_name = "TIME", default_value = "15m")]
    pub max_time: String,

    /// Keep each trial's result (yace.result.v1) in this folder.
    #[arg(long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub const IMPORT_CURL_EXAMPLES: &str = "Examples:
  # a browser's Copy as cURL (bash), quoted as one argument
  yace import curl 'curl https://example.test/api -H \"accept: application/json\"'
  # or pasted on standard input (end with Ctrl-D)
  yace import curl
  # as a scenario step instead of a yace run command line
  yace import curl --step 'curl -X POST http://127.0.0.1:8080/echo -d a=1'
  yace import curl --step --yaml < request.curl

Every curl flag is imported, said to change only curl's own output, or
named in a warning on standard error. Credentials (-u, -b, Authorization)
are kept, and a note says so.";

pub const IMPORT_HAR_EXAMPLES: &str = "Examples:
  yace import har session.har > journey.toml
  yace run -f journey.toml --dry-run             # check what was imported
  yace run -f journey.toml http://127.0.0.1:8080  # against another base
  yace import har session.har --assets keep --yaml > journey.yaml
  yace import har session.har --host api.example.test --max-think 5s

In the browser: DevTools, Network, \"Save all as HAR (with content)\"; with
Chrome, \"Export HAR (with sensitive data)\" keeps the cookies a login needs.";

/// `yace import`: a user's real traffic as yace input.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub command: ImportCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ImportCommand {
    /// A curl command (a browser's Copy as cURL) as a `yace run` command
    /// line, or as a scenario step.
    #[command(after_help = IMPORT_CURL_EXAMPLES)]
    Curl(ImportCurlArgs),
    /// A HAR capture (a browser's Save all as HAR) as a scenario file:
    /// one journey, think times, values the server handed out extracted.
    #[command(after_help = IMPORT_HAR_EXAMPLES)]
    Har(ImportHarArgs),
    /// A web server's access log as a replay plan (a scenario file): the
    /// URL mix at the log's mean rate, or its arrivals second by second.
    #[command(name = "access-log", after_help = IMPORT_ACCESS_LOG_EXAMPLES)]
    AccessLog(ImportAccessLogArgs),
}

#[derive(Debug, Args)]
pub struct ImportCurlArgs {
    /// Write a scenario step (TOML) instead of a `yace run` command line.
    #[arg(long = "step")]
    pub step: bool,

    /// With --step: YAML instead of TOML.
    #[arg(long = "yaml", requires = "step")]
    pub yaml: bool,

    /// The curl command as one argument ('curl …', bash syntax); several
    /// arguments are taken as curl's own, already split by the shell;
    /// none: the command is read from standard input.
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

/// What `yace import har` does with static assets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AssetsArg {
    Drop,
    Keep,
}

#[derive(Debug, Args)]
pub struct ImportHarArgs {
    /// The HAR file (`-`: standard input).
    #[arg(value_name = "FILE.har")]
    pub file: PathBuf,

    /// Static assets (images, CSS, scripts, fonts, media): drop or keep.
    #[arg(long = "assets", value_enum, default_value = "drop")]
    pub assets: AssetsArg,

    /// Also write the requests to other hosts, as commented-out steps (a
    /// run has one target).
    #[arg(long = "all-hosts")]
    pub all_hosts: bool,

    /// The host to keep (default: the first page's).
    #[arg(long = "host", value_name = "HOST[:PORT]")]
    pub host: Option<String>,

    /// The longest think time kept; longer pauses are cut to it (0s: no
    /// think times).
    #[arg(long = "max-think", value_name = "TIME", default_value = "30s")]
    pub max_think: String,

    /// Write YAML instead of TOML.
    #[arg(long = "yaml")]
    pub yaml: bool,
}

pub const IMPORT_ACCESS_LOG_EXAMPLES: &str = "Examples:
  yace import access-log /var/log/nginx/access.log > mix.toml
  yace run -f mix.toml http://127.0.0.1:8080 --dry-run   # check it
  yace run -f mix.toml http://127.0.0.1:8080             # the log's URLs at its mean rate
  # the log's arrivals second by second, twice as fast, for 10 minutes
  yace import access-log access.log --replay timed --speed 2 --duration 10m > replay.toml
  # nginx JSON (log_format … escape=json), or a log_format of your own
  yace import access-log access.json --format nginx-json
  yace import access-log access.log --format '$remote_addr [$time_local] \"$request\" $status $request_time'
  # logrotate's set, oldest first (gzip is read as it is)
  yace import access-log access.log.2.gz access.log.1 access.log --methods GET,HEAD,POST --top 500

Lines that do not read are counted and the first few shown (file:line) on
standard error, with what was not replayed and why. Query values of
parameters named like secrets (token, key, session, sig…) are not copied.";

/// How `yace import access-log` replays the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayArg {
    /// The URL mix, at the log's mean rate.
    Mix,
    /// The log's arrivals, second by second (rate stages).
    Timed,
}

#[derive(Debug, Args)]
pub struct ImportAccessLogArgs {
    /// The access log (`-`: standard input), plain or gzip-compressed
    /// (`access.log.2.gz`); several are read in turn as one log (a rotated
    /// set, oldest first).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// How its lines are written: combined (nginx's default, and
    /// Apache's), common, nginx-json, or an nginx log_format string.
    #[arg(long = "format", value_name = "FORMAT", default_value = "combined")]
    pub format: String,

    /// mix: the URL mix at the log's mean rate; timed: the log's
    /// arrivals second by second.
    #[arg(long = "replay", value_enum, default_value = "mix")]
    pub replay: ReplayArg,

    /// Replay this many times faster than the log (rates × X, lengths ÷ X).
    #[arg(long = "speed", value_name = "X", default_value = "1")]
    pub speed: String,

    /// The replay's length (default: the log's, ÷ speed); timed: the
    /// timetable is cut there.
    #[arg(long = "duration", value_name = "TIME")]
    pub duration: Option<String>,

    /// Methods replayed, comma-separated (`all`: every one).
    #[arg(long = "methods", value_name = "LIST", default_value = "GET,HEAD")]
    pub methods: String,

    /// Keep the N most requested URLs in the mix (1 to 10000).
    #[arg(long = "top", value_name = "N", default_value_t = 200)]
    pub top: usize,

    /// The scenario's base URL (default: none; give the server's URL when
    /// you run it).
    #[arg(long = "base", value_name = "URL")]
    pub base: Option<String>,

    /// Write YAML instead of TOML.
    #[arg(long = "yaml")]
    pub yaml: bool,
}

pub const COMPLETIONS_EXAMPLES: &str = "Examples:
  yace completions bash > ~/.local/share/bash-completion/completions/yace
  yace completions zsh > ~/.zfunc/_yace          # a folder in your $fpath
  yace completions fish > ~/.config/fish/completions/yace.fish

The Debian package installs all three.";

/// A shell `yace completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

/// `yace completions`: a shell's completion script on standard output.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: ShellArg,
}

pub const MAN_EXAMPLES: &str = "Examples:
  yace man | man -l -                   # read yace(1) now
  yace man --out ~/.local/share/man/man1  # every page: yace.1, yace-run.1, …

The Debian package installs every page.";

/// `yace man`: manual pages in roff.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page (yace.1, yace-run.1, yace-import-har.1, …) to
    /// this folder, instead of yace.1 to standard output.
    #[arg(long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `yace run --shard I/N`: one shard of a run spread over N processes
/// (docs/design/010-shards.md).
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = "Shards (a run over several processes or machines)")]
pub struct ShardArgs {
    /// Run only shard I of N (0-based: 0/3, 1/3, 2/3), exactly its share
    /// of the plan; `env` reads I from JOB_COMPLETION_INDEX (Kubernetes)
    /// or SLURM_PROCID, and N from --shards or SLURM_NTASKS.
    #[arg(long = "shard", value_name = "I/N|env")]
    pub shard: Option<String>,

    /// The number of shards, for `--shard env` on Kubernetes.
    #[arg(long = "shards", value_name = "N")]
    pub shards: Option<String>,

    /// The run every shard belongs to (letters, digits, . _ -), carried in
    /// the result for `yace merge` (default: from the plan's hash).
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,

    /// Start the load at this time: RFC 3339 UTC (2026-12-01T10:00:00Z) or
    /// `+30s` from now; the target is resolved and probed before.
    #[arg(long = "start-at", value_name = "TIME")]
    pub start_at: Option<String>,

    /// How late after --start-at a shard may still start; later, it sends
    /// nothing, writes a partial result and exits 5.
    #[arg(long = "start-tolerance", value_name = "TIME", default_value = "1s")]
    pub start_tolerance: String,

    /// Also write the result to standard output as framed, checksummed
    /// lines (`YACE-RESULT v1 …`) that `yace merge` finds in collected logs.
    #[arg(long = "frame")]
    pub frame: bool,
}

/// `yace merge`: the shards of one run, as one result.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard results: JSON files, directories of them, or logs holding
    /// framed results (kubectl logs, Slurm output files).
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<PathBuf>,

    /// How many shards the run had; fewer found makes the result incomplete.
    #[arg(long = "expect-shards", value_name = "N", required = true)]
    pub expect_shards: u64,

    /// Merge this run's shards only (when the inputs hold several runs).
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,

    /// Where the merged result goes.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "merged.json"
    )]
    pub output: PathBuf,

    /// No summary on standard output.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
}

pub const MERGE_EXAMPLES: &str = "Examples:
  # three shards, each its own process (or pod, or Slurm task)
  yace run URL --rate 3000 -d 60s --shard 0/3 --run-id r1 --start-at +30s --json s0.json
  yace merge --expect-shards 3 s0.json s1.json s2.json -o merged.json
  yace merge --expect-shards 8 logs/            # framed results in collected logs
  yace report merged.json -F html -o merged.html

Exit codes: 0 complete, 3 a threshold breached on the merged result,
6 incomplete (a shard missing, partial or short; written with the reasons),
2 refused (several runs or plans mixed, no result found; nothing written)";

/// `yace k8s …`: a sharded run as a Kubernetes Indexed Job.
#[derive(Debug, Args)]
pub struct K8sArgs {
    #[command(subcommand)]
    pub command: K8sCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum K8sCommand {
    /// Print a ConfigMap (the plan, with -f) and an Indexed Job: one pod
    /// per shard, no Service, no ports, no service-account token, no
    /// retries, a deadline from the run's length, anti-affinity, and a
    /// start time far enough ahead for the pods to be scheduled.
    #[command(after_help = K8S_EXAMPLES)]
    Render(K8sRenderArgs),
    /// Run those manifests with your kubectl (your kubeconfig, your context): apply,
    /// wait until every pod is Ready before the start time (else delete
    /// the Job before any load), wait for the end, merge every pod's
    /// result, report, and delete the Job and ConfigMap (unless --keep).
    #[command(after_help = K8S_RUN_EXAMPLES)]
    Run(Box<K8sRunArgs>),
}

/// What the manifests are written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderFormat {
    Yaml,
    /// A `List`, as `kubectl apply -f` reads it too.
    Json,
}

/// The Job and ConfigMap of a sharded run, for `yace k8s render` and `run`.
#[derive(Debug, Args)]
pub struct K8sJobArgs {
    /// Shards (pods): the Job's completions and parallelism.
    #[arg(long = "shards", value_name = "N", required = true)]
    pub shards: u64,
    /// The image with yace in it (its entrypoint is `yace`).
    #[arg(long = "image", value_name = "IMAGE", required = true)]
    pub image: String,
    /// The Job's name (and the ConfigMap's prefix).
    #[arg(long = "name", default_value = "yace")]
    pub name: String,
    /// The namespace (default: the kubeconfig context's).
    #[arg(long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// The run id (default: the name and the start time).
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,
    /// How far ahead the shards start: time for every pod to be scheduled,
    /// pull the image and connect.
    #[arg(long = "start-in", value_name = "TIME", default_value = "90s")]
    pub start_in: String,
    /// CPU per shard, requested and the limit.
    #[arg(long = "cpu", default_value = "2")]
    pub cpu: String,
    /// Memory per shard, requested and the limit.
    #[arg(long = "memory", default_value = "512Mi")]
    pub memory: String,
}

#[derive(Debug, Args)]
pub struct K8sRenderArgs {
    #[command(flatten)]
    pub job: K8sJobArgs,
    #[arg(short = 'F', long = "format", value_enum, default_value = "yaml")]
    pub format: RenderFormat,
    /// The run's flags, as for `yace run` (a URL and -d, or -f plan.toml).
    #[arg(value_name = "RUN FLAGS", last = true, required = true)]
    pub run: Vec<String>,
}

#[derive(Debug, Args)]
pub struct K8sRunArgs {
    #[command(flatten)]
    pub job: K8sJobArgs,
    /// The kubectl to run (default: $KUBECTL, else `kubectl` on the PATH);
    /// it acts with your kubeconfig and its current context.
    #[arg(long = "kubectl", value_name = "PATH")]
    pub kubectl: Option<PathBuf>,
    /// Leave the Job and ConfigMap in the cluster when the run ends.
    #[arg(long = "keep")]
    pub keep: bool,
    /// Write the merged result as JSON.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the merged result as one HTML page.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Keep every pod's log here (default: a temporary folder, removed
    /// once the merge is complete and written with --json).
    #[arg(long = "logs", value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// No summary on standard output.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// The run's flags, as for `yace run` (a URL and -d, or -f plan.toml).
    #[arg(value_name = "RUN FLAGS", last = true, required = true)]
    pub run: Vec<String>,
}

pub const K8S_EXAMPLES: &str = "Examples:
  yace k8s render --shards 8 --image registry.example/yace:0.1 -- \\
      https://shop.example/ --rate 40000 -d 5m > job.yaml
  kubectl apply -f job.yaml
  kubectl logs -l yace.dev/run-id=RUN --tail=-1 --prefix > shards.log
  yace merge --expect-shards 8 shards.log -o merged.json
  # or all of it, with your kubectl: yace k8s run (same flags)";

pub const K8S_RUN_EXAMPLES: &str = "Examples:
  yace k8s run --shards 8 --image registry.example/yace:0.1 \\
      --json merged.json -- https://shop.example/ --rate 40000 -d 5m
  KUBECTL=/opt/bin/kubectl yace k8s run --shards 4 --image IMG \\
      --namespace load --html merged.html -- -f shop.toml -d 10m

Exit codes: 0 complete, 3 a threshold breached on the merged result,
5 the pods were not all Ready before the start time (the Job was deleted
before any load was sent), 6 incomplete (a shard missing, partial or
short; written with the reasons), 1 kubectl failed, 130 interrupted
(the Job is deleted)";

/// `yace slurm …`: a sharded run as a Slurm batch job.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    #[command(subcommand)]
    pub command: SlurmCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SlurmCommand {
    /// Print an sbatch script: one task per shard (`srun
    /// --kill-on-bad-exit`, `--shard env`), one start time, then the merge.
    Render(SlurmRenderArgs),
}

#[derive(Debug, Args)]
pub struct SlurmRenderArgs {
    /// Shards: the job's tasks.
    #[arg(long = "shards", value_name = "N", required = true)]
    pub shards: u64,
    #[arg(long = "name", default_value = "yace")]
    pub name: String,
    /// The run id (default: the name and the Slurm job id).
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,
    /// How far ahead of the script's start the shards start.
    #[arg(long = "start-in", value_name = "TIME", default_value = "30s")]
    pub start_in: String,
    #[arg(long = "cpus-per-task", value_name = "N", default_value = "2")]
    pub cpus_per_task: u32,
    /// The yace binary on the nodes.
    #[arg(long = "yace", value_name = "PATH", default_value = "yace")]
    pub yace: String,
    /// The run's flags, as for `yace run`.
    #[arg(value_name = "RUN FLAGS", last = true, required = true)]
    pub run: Vec<String>,
}
