//! The result contract: one versioned JSON document per run, from which
//! every report (terminal, CSV, Markdown, HTML) and every comparison or
//! merge is built, without the run. Its JSON Schema is published in
//! `docs/schema/result.schema.json`; a test keeps the two in step.

use crate::behind::{self, Behind};
use crate::hist::{encode, Distribution};
use crate::recorder::Totals;
use crate::series::SecondRow;
use crate::shortfall::{self, Shortfall};
use plan::Plan;
use sample::{Detail, Lenient, Outcome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifies this document's layout; bumped on incompatible changes.
pub const SCHEMA: &str = "yace.result.v1";

/// Above this share of its CPU, a worker thread is the bottleneck and the
/// figures measure the client as much as the server.
pub const SATURATED: f64 = 0.90;

/// A complete (or partial) run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// Always "yace.result.v1" for this layout.
    pub schema: String,
    pub yace_version: String,
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    pub plan: Plan,
    pub environment: Environment,
    pub end: End,
    pub summary: Summary,
    /// Responses by HTTP status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Requests by outcome class; every class is present.
    pub outcomes: BTreeMap<Outcome, u64>,
    /// HTTP/1.1 responses refused (`protocol_error`, `header_too_large`),
    /// by the element that broke a rule or a limit; non-zero ones only.
    #[serde(default)]
    pub error_details: BTreeMap<Detail, u64>,
    /// Responses read past a departure from RFC 9112 (their connection was
    /// then closed, not reused), by departure; non-zero ones only.
    #[serde(default)]
    pub lenient: BTreeMap<Lenient, u64>,
    pub client: ClientLoad,
    /// The `Server` header of the first response, if any.
    pub server_software: Option<String>,
    /// HTTPS: what was negotiated and how it was verified.
    pub tls: Option<TlsInfo>,
    /// HTTP/2 facts; None for HTTP/1.1.
    #[serde(default)]
    pub http2: Option<Http2Info>,
    /// FastCGI facts; absent for HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fcgi: Option<FcgiInfo>,
    pub series: Vec<SecondRow>,
    pub histograms: Histograms,
    /// Scenario runs: figures per step, in step order.
    #[serde(default)]
    pub steps: Vec<StepResult>,
    /// Scenario runs: check and extraction counts.
    #[serde(default)]
    pub checks: Vec<CheckResult>,
    /// Scenario runs: cookies the users' jars could not keep (over 180 per
    /// user, the oldest going first, or over 4 KiB).
    #[serde(default)]
    pub cookies_dropped: u64,
    /// Thresholds and how they fared; any failure sets exit code 3.
    #[serde(default)]
    pub thresholds: Vec<ThresholdResult>,
    /// Human-readable warnings about the validity of the numbers.
    pub warnings: Vec<String>,
    /// Open model: the load asked for and not offered (dropped or late
    /// requests), with its likely cause; also the first of `warnings`.
    #[serde(default)]
    pub shortfall: Option<Shortfall>,
    /// Open model: the server answered fewer requests a second than the
    /// plan offered, so they piled up and latency grew with the run; absent
    /// when it kept up (or the run was not an open model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<Behind>,
    /// `--monitor`: what the server did on the run's clock, and what it
    /// means; absent when nothing was monitored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<crate::monitor::Monitoring>,
    /// Moments someone marked while the run went on (`m` in the live
    /// view), in the order they were made; absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker>,
    /// The open model's rate as steered while the run went on (`+`/`-`/`p`
    /// on the live view); absent when it was not: the run offered this
    /// timeline, not the plan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steering: Option<Steered>,
    /// `--shard I/N`: this run was one shard of a larger one; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardInfo>,
    /// `yace merge`: this result joins the shards of one run; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<crate::shard::MergeInfo>,
}

/// A moment of the run marked by hand, with what happened then.
/// A steered run's timeline of rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Steered {
    /// Requests the steered timetable held in all (the plan's own count
    /// no longer applies).
    pub planned: Option<u64>,
    /// From `at_s` on, the planned rate × `factor`: `rate` per second at
    /// that moment. The first is the plan's own (× 1 from 0 s). Empty when
    /// the number of users was steered instead.
    pub segments: Vec<SteerSegment>,
    /// Virtual users (or the closed model's connections) steered: from
    /// `at_s` on, `delta` users more than the plan's (fewer when negative),
    /// `users` active at that moment. The first is the plan's own (+0 from
    /// 0 s). Absent when the rate was steered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<UserSteerSegment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserSteerSegment {
    /// Seconds since the start of the run.
    pub at_s: f64,
    /// Users added to the plan's from then on (fewer when negative).
    pub delta: i64,
    /// Users active at that moment: the plan's then, plus `delta`.
    pub users: u64,
}

impl Steered {
    /// The changes made while the run went on, in words.
    pub fn changes(&self) -> Vec<String> {
        let rate = self.segments.iter().skip(1).map(|s| {
            if s.factor == 0.0 {
                format!("paused at {:.1} s", s.at_s)
            } else {
                format!(
                    "×{:.2} ({}/s) at {:.1} s",
                    s.factor,
                    crate::fmt::count(s.rate.round() as u64),
                    s.at_s
                )
            }
        });
        let users = self.users.iter().skip(1).map(|s| {
            format!(
                "{} users ({:+}) at {:.1} s",
                crate::fmt::count(s.users),
                s.delta,
                s.at_s
            )
        });
        rate.chain(users).collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SteerSegment {
    /// Seconds since the start of the run.
    pub at_s: f64,
    /// 0 pauses.
    pub factor: f64,
    /// Requests per second offered from that moment (planned × factor).
    pub rate: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Marker {
    /// Seconds since the start of the run.
    pub at_s: f64,
    /// One line, e.g. "php-fpm restarted"; empty when none was typed.
    #[serde(default)]
    pub note: String,
}

/// HTTPS facts of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TlsInfo {
    /// e.g. "TLSv1_3".
    pub version: Option<String>,
    /// e.g. "TLS13_AES_256_GCM_SHA384".
    pub cipher: Option<String>,
    /// False when --insecure skipped certificate verification.
    pub verified: bool,
    /// Handshakes that resumed an earlier session, and full ones.
    pub resumed_handshakes: u64,
    pub full_handshakes: u64,
}

/// HTTP/2 facts of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Http2Info {
    /// Concurrent streams per connection asked for (--streams).
    pub streams: u32,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server sent, if any:
    /// below `streams`, fewer requests were in flight than asked.
    pub server_max_streams: Option<u32>,
    /// Connections the server retired with GOAWAY (their unprocessed
    /// requests were re-sent: see `summary.retries`).
    pub goaways: u64,
}

/// FastCGI facts of a run (`fcgi://`, `fcgi+unix:` targets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct FcgiInfo {
    /// Responses that came with `FCGI_STDERR` output (PHP warnings and
    /// notices, php-fpm's "Primary script unknown").
    pub stderr_responses: u64,
    /// Bytes of that output, all responses together.
    pub stderr_bytes: u64,
    /// Its first distinct lines (a few, each cut at 200 bytes).
    pub stderr_lines: Vec<String>,
}

/// One scenario step's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepResult {
    pub name: String,
    pub requests: u64,
    pub responses: u64,
    pub errors: u64,
    pub non_2xx: u64,
    /// Latency from the intended start, µs.
    pub latency: Distribution,
    /// The step's latency histogram (same encoding as `histograms`).
    pub histogram: String,
    /// Requests by outcome class (non-zero ones).
    pub outcomes: BTreeMap<Outcome, u64>,
}

/// A scenario check (or extraction): how often it held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    pub step: String,
    pub name: String,
    pub passed: u64,
    pub failed: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Environment {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub cpus: usize,
    pub cpu_model: String,
    /// The target's address is on this machine, so client and server share CPUs.
    pub target_is_local: bool,
    /// The target was yace's embedded server started for this run.
    pub embedded_target: bool,
    /// The resolved address connections went to.
    pub address: String,
    /// CPUs this process was allowed to run on (fewer than `cpus` when pinned).
    pub cpus_allowed: usize,
}

/// Why and how the run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct End {
    pub reason: EndReason,
    /// True when the run did not do all it was asked (interrupted).
    pub partial: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Every planned request was sent and answered or failed.
    Completed,
    /// The duration limit was reached.
    Duration,
    /// Stopped by SIGINT (Ctrl-C).
    Interrupted,
    /// Stopped by SIGTERM.
    Terminated,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Requests started: responses + errors + cancelled.
    pub requests: u64,
    /// Complete responses, any status.
    pub responses: u64,
    /// Failed requests (see `outcomes`).
    pub errors: u64,
    /// In flight when the run ended (or due in its last instant, with a
    /// connection free); not errors.
    pub cancelled: u64,
    /// Open model: due but never sent, as no connection was free in time or
    /// before the run stopped (not counted in `requests`).
    pub dropped: u64,
    /// Requests the plan holds, when it holds a set number (open model, or
    /// `-n`); every one is accounted for: `planned = requests + dropped +
    /// not_yet_due`, whatever stopped the run.
    pub planned: Option<u64>,
    /// Of `planned`: not yet due (closed model: not yet started) when the
    /// run stopped, e.g. on Ctrl-C.
    pub not_yet_due: Option<u64>,
    /// Paced virtual users: iterations started, on time or late (`planned`
    /// then counts iterations: `planned = started + missed + not_yet_due`).
    /// Absent for the other models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
    /// Paced virtual users: iterations that came due while their user
    /// could not start them (its previous iteration, or its connection,
    /// still under way); also counted in `dropped`. Absent for the other
    /// models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed: Option<u64>,
    /// Paced virtual users: users whose window opened before the run
    /// stopped. Absent for the other models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u64>,
    /// Paced virtual users, the worst case: of `users`, those never
    /// answered (not one response, though they had a pacing period at
    /// least): they waited from their first request to the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users_never_served: Option<u64>,
    /// Responses with a status outside 200–299.
    pub non_2xx: u64,
    /// Requests re-sent once after a stale keep-alive connection.
    pub retries: u64,
    /// Requests sent on an already used connection.
    pub reused_connections: u64,
    /// Responses that let their connection be kept alive.
    pub keepalive_responses: u64,
    pub connections_opened: u64,
    /// Wall time of the run, seconds.
    pub duration_s: f64,
    /// Complete responses per second.
    pub rps: f64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Response body bytes (ab's "HTML transferred").
    pub body_bytes: u64,
    pub bytes_in_per_s: f64,
    /// Latency from the intended send time to the end of the response.
    /// Closed model: equal to service time.
    pub latency: Distribution,
    /// Open model and virtual users: from the actual start to the end of the response.
    pub service: Option<Distribution>,
    /// Open model and virtual users: how late requests started (start − intended).
    pub lag: Option<Distribution>,
    /// Per request: TCP connect (0 µs on reused connections).
    pub connect: Distribution,
    /// HTTPS: per request, the TLS handshake (0 µs on reused connections).
    pub tls: Option<Distribution>,
    /// Per request: request written → first response byte.
    pub wait: Distribution,
    /// Per request: request written → end of response (ab's "Processing").
    pub processing: Distribution,
    /// Per new connection: TCP handshake time.
    pub handshake: Distribution,
    pub body_length: BodyLength,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct BodyLength {
    /// Body length of the first response (ab's "Document Length").
    pub first: Option<u64>,
    pub min: u64,
    pub max: u64,
    /// Responses whose length differed from the first: information, not failure.
    pub varied: u64,
}

/// How hard the load generator itself worked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientLoad {
    pub threads: usize,
    /// CPU seconds (user + system) used by the worker threads.
    pub cpu_s: f64,
    /// Highest share of its wall time any worker spent on CPU (0–1).
    pub busiest_thread: f64,
    /// A worker was busy ≥ 90%: the client may have limited the rate.
    pub saturated: bool,
    /// What the client's own extras cost while the load ran, besides the
    /// workers' `cpu_s`: CPU seconds of each one's threads, on their own
    /// clocks (`live_view`: the terminal dashboard; `live_page`: the
    /// browser page, up to the result; `exporters`: Prometheus and OTLP).
    /// Absent when none ran, and in results from before it was recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extras_cpu_s: BTreeMap<String, f64>,
    /// How many times the worker threads slept and were woken (their
    /// voluntary context switches): on a virtual machine each costs more
    /// than anything else the client does, so wake-ups per response says
    /// how well the client batches its work. Absent from older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<u64>,
    /// Socket reads (`read`/`recvmsg`) and writes (`send`) the worker
    /// threads made, each call counted whatever it returned: responses per
    /// read and per write say how much work each system call carried.
    /// Absent from older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_reads: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_writes: Option<u64>,
}

/// HdrHistogram V2 + deflate, base64; values in microseconds. Decode with
/// `yace_stats::hist::decode` or any HdrHistogram library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Histograms {
    pub latency: String,
    pub service: Option<String>,
    pub connect: String,
    pub tls: Option<String>,
    pub wait: String,
    pub processing: String,
    pub handshake: String,
    /// Open model and virtual users: schedule lag (start − intended), so
    /// shards' lag merges exactly (`yace merge`). Absent from older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<String>,
    /// Latency by interval of the run, in order: consecutive 5-second
    /// slices (`INTERVAL_S`) aligned to its start, the last possibly
    /// shorter, whose counts add up to `latency`'s. Enough to put an
    /// interval on a percentile from one run (a block bootstrap over them)
    /// and to merge runs interval by interval. Absent from results written
    /// before they existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalHistogram>,
}

/// The latency of one slice of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntervalHistogram {
    /// Seconds since the start of the run.
    pub start_s: f64,
    /// Its length in seconds: 5 (`INTERVAL_S`), except for a shorter last one.
    pub length_s: f64,
    /// Latency of the responses that ended in it (same encoding as the
    /// others, at the per-second series' precision: 2 significant digits).
    pub latency: String,
}

/// Paced virtual users' iterations and users, added over the workers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paced {
    pub started: u64,
    pub missed: u64,
    pub not_yet_due: u64,
    pub users: u64,
    pub users_never_served: u64,
}

/// What the caller knows that the totals don't.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub plan: Plan,
    pub environment: Environment,
    pub started_at: String,
    pub duration_ns: u64,
    pub reason: EndReason,
    pub cpu_ns: u64,
    pub busiest_thread: f64,
    pub threads: usize,
    pub connections_opened: u64,
    /// Planned requests not yet due when the run stopped, as the workers
    /// counted them (None: the plan has no set number).
    pub not_yet_due: Option<u64>,
    /// The open model steered while it ran: its timeline replaces the
    /// plan's count.
    pub steering: Option<Steered>,
    /// The open model with journeys: arrivals that started a visit or were
    /// cancelled at the end. The plan's timetable then holds arrivals, each
    /// any number of requests.
    pub visits: Option<u64>,
    /// Paced virtual users: their iterations, as the workers accounted
    /// for them (None for the other models).
    pub paced: Option<Paced>,
    pub server_software: Option<String>,
    /// Scenario step names, by step id (empty for a plain run).
    pub step_names: Vec<String>,
    /// HTTPS runs.
    pub tls: Option<TlsInfo>,
    /// HTTP/2 runs.
    pub http2: Option<Http2Info>,
    pub checks: Vec<CheckResult>,
    /// Latency by interval, as [`Series::finish`](crate::Series::finish) left it.
    pub intervals: Vec<IntervalHistogram>,
}

impl RunResult {
    /// Assembles the result from merged totals, the series and the facts.
    /// Warnings that suggest a setting name it as `spell` does (the front
    /// end's flag: `-t` for yace run, `--threads` for yace ab).
    pub fn build(
        t: &Totals,
        series: Vec<SecondRow>,
        f: RunFacts,
        spell: &dyn plan::Spelling,
    ) -> RunResult {
        let open = !matches!(f.plan.load, plan::Load::Closed { .. });
        let secs = f.duration_ns as f64 / 1e9;
        let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        let statuses: BTreeMap<u16, u64> = t
            .statuses
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(code, &n)| (code as u16, n))
            .collect();
        let non_2xx = statuses
            .iter()
            .filter(|(c, _)| !(200..300).contains(*c))
            .map(|(_, n)| n)
            .sum();
        let saturated = f.busiest_thread >= SATURATED;
        let mut warnings = Vec::new();
        if saturated {
            warnings.push(format!(
                "the load generator was saturated: its busiest thread was on CPU {:.0}% of the \
                 time, so the client may have limited the rate; add threads ({}) or client \
                 machines",
                f.busiest_thread * 100.0,
                spell.usage(plan::Field::Threads)
            ));
        }
        let e = &f.environment;
        if e.target_is_local && e.cpus_allowed >= e.cpus && e.cpus > 1 {
            warnings.push(
                "client and server share this machine's CPUs: pin them apart (taskset) for \
                 figures that mean something"
                    .into(),
            );
        }
        if f.tls.as_ref().is_some_and(|t| !t.verified) {
            warnings.push(format!(
                "certificate verification was OFF ({}): the server's identity was not checked",
                spell.name(plan::Field::Insecure)
            ));
        }
        if let Some(h) = &f.http2 {
            if let Some(m) = h.server_max_streams.filter(|&m| m < h.streams) {
                warnings.push(format!(
                    "the server allows {m} concurrent streams per connection, fewer than \
                     {} {}: at most {m} requests were in flight per connection",
                    spell.usage(plan::Field::Streams),
                    h.streams
                ));
            }
        }
        let resource = t.count(Outcome::ClientResource);
        if resource > 0 {
            warnings.push(format!(
                "{resource} requests failed for lack of client resources (file descriptors or \
                 local ports): this run is not valid as a measure of the server; run `yace doctor`"
            ));
        }
        let requests = t.requests() - t.count(Outcome::Dropped);
        let dropped = t.count(Outcome::Dropped);
        // Journeys: the timetable's arrivals are visitors (the workers
        // count those started or cancelled at the end).
        // Paced users: the plan's iterations (a steered run's users had
        // other windows than the plan's, so no count of its own).
        let paced = f
            .paced
            .filter(|_| f.steering.is_none())
            .and_then(|p| f.plan.planned_iterations().map(|planned| (p, planned)));
        let (started, what) = match (f.visits, paced) {
            (Some(v), _) => (v, "arrivals"),
            (None, Some((p, _))) => (p.started, "iterations"),
            (None, None) => (requests, "requests"),
        };
        // A shard plans its share of the timetable (`--shard`); a steered
        // run what its steering held.
        let planned = match (&f.steering, paced) {
            (Some(st), _) => st.planned,
            (None, Some((_, planned))) => Some(planned),
            (None, None) => f.plan.planned(),
        };
        let not_yet_due = match paced {
            Some((p, _)) => Some(p.not_yet_due),
            None => f.not_yet_due,
        };
        if let Some(st) = &f.steering {
            let what = if st.users.is_empty() {
                "the rate"
            } else {
                "the number of users"
            };
            warnings.push(format!(
                "{what} was steered while the run went on ({}): the run offered that \
                 timeline, not the plan's; compare it only with runs steered the same way",
                st.changes().join(", ")
            ));
        }
        if let (Some(p), Some(n)) = (planned, not_yet_due) {
            if started + dropped + n != p {
                warnings.push(format!(
                    "accounting: the plan held {p} {what} but {started} started, {dropped} \
                     were dropped and {n} were not yet due; this is a bug in yace, please report it"
                ));
            }
        }
        let shortfall = shortfall::of(
            t,
            &shortfall::Offered {
                plan: &f.plan,
                planned,
                not_yet_due,
                paced: paced.map(|(p, _)| p),
                saturated,
                busiest_thread: f.busiest_thread,
                connections_opened: f.connections_opened,
                duration_s: secs,
            },
            spell,
        );
        if let Some(s) = &shortfall {
            warnings.insert(0, s.message.clone());
        }
        let behind = behind::of(
            &f.plan,
            &series,
            t.count(Outcome::Cancelled),
            dropped,
            f.steering.is_some(),
        );
        if let Some(b) = &behind {
            warnings.insert(usize::from(shortfall.is_some()), b.message.clone());
        }
        let lenient: u64 = t.lenient.iter().sum();
        if lenient > 0 {
            warnings.push(format!(
                "the server is out of spec: {} responses needed leniency to be read (see \
                 `lenient`), and yace closed their connections instead of reusing them",
                crate::fmt::count(lenient)
            ));
        }
        let partial = matches!(f.reason, EndReason::Interrupted | EndReason::Terminated);
        let mut r = RunResult {
            schema: SCHEMA.into(),
            yace_version: env!("CARGO_PKG_VERSION").into(),
            started_at: f.started_at,
            end: End {
                reason: f.reason,
                partial,
            },
            summary: Summary {
                requests,
                responses: t.responses(),
                errors: t.errors(),
                cancelled: t.count(Outcome::Cancelled),
                dropped,
                planned,
                not_yet_due: planned.and(not_yet_due),
                started: paced.map(|(p, _)| p.started),
                missed: paced.map(|(p, _)| p.missed),
                users: paced.map(|(p, _)| p.users),
                users_never_served: paced.map(|(p, _)| p.users_never_served),
                non_2xx,
                retries: t.retries,
                reused_connections: t.reused,
                keepalive_responses: t.keepalive_responses,
                connections_opened: f.connections_opened,
                duration_s: secs,
                rps: per_s(t.responses()),
                bytes_in: t.bytes_in,
                bytes_out: t.bytes_out,
                body_bytes: t.body_bytes,
                bytes_in_per_s: per_s(t.bytes_in),
                latency: Distribution::of(&t.latency),
                service: open.then(|| Distribution::of(&t.service)),
                lag: open.then(|| Distribution::of(&t.lag)),
                connect: Distribution::of(&t.connect),
                tls: f.tls.as_ref().map(|_| Distribution::of(&t.tls)),
                wait: Distribution::of(&t.wait),
                processing: Distribution::of(&t.processing),
                handshake: Distribution::of(&t.handshake),
                body_length: BodyLength {
                    first: t.body.first,
                    min: t.body.min,
                    max: t.body.max,
                    varied: t.body.varied,
                },
            },
            statuses,
            outcomes: Outcome::ALL.iter().map(|&o| (o, t.count(o))).collect(),
            error_details: Detail::ALL
                .iter()
                .map(|&d| (d, t.details[d as usize]))
                .filter(|&(_, n)| n > 0)
                .collect(),
            lenient: Lenient::ALL
                .iter()
                .map(|&l| (l, t.lenient[l as usize]))
                .filter(|&(_, n)| n > 0)
                .collect(),
            client: ClientLoad {
                threads: f.threads,
                cpu_s: f.cpu_ns as f64 / 1e9,
                busiest_thread: f.busiest_thread,
                saturated,
                extras_cpu_s: BTreeMap::new(),
                wakeups: None,
                socket_reads: None,
                socket_writes: None,
            },
            server_software: f.server_software,
            tls: f.tls.clone(),
            http2: f.http2.clone(),
            fcgi: None,
            series,
            histograms: Histograms {
                latency: encode(&t.latency),
                service: open.then(|| encode(&t.service)),
                connect: encode(&t.connect),
                tls: f.tls.as_ref().map(|_| encode(&t.tls)),
                wait: encode(&t.wait),
                processing: encode(&t.processing),
                handshake: encode(&t.handshake),
                lag: open.then(|| encode(&t.lag)),
                intervals: f.intervals,
            },
            steps: t
                .steps
                .iter()
                .enumerate()
                .map(|(i, st)| {
                    let count = |o: Outcome| st.outcomes[o as usize];
                    StepResult {
                        name: f
                            .step_names
                            .get(i)
                            .cloned()
                            .unwrap_or_else(|| format!("step {i}")),
                        requests: st.outcomes.iter().sum::<u64>() - count(Outcome::Dropped),
                        responses: count(Outcome::Response),
                        errors: Outcome::ALL
                            .iter()
                            .filter(|o| o.is_error())
                            .map(|&o| count(o))
                            .sum(),
                        non_2xx: st.non_2xx,
                        latency: Distribution::of(&st.latency),
                        histogram: encode(&st.latency),
                        outcomes: Outcome::ALL
                            .iter()
                            .filter(|&&o| count(o) > 0)
                            .map(|&o| (o, count(o)))
                            .collect(),
                    }
                })
                .collect(),
            checks: f.checks,
            cookies_dropped: 0,
            thresholds: Vec::new(),
            warnings,
            shortfall,
            behind,
            monitor: None,
            markers: Vec::new(),
            steering: f.steering,
            shard: None,
            merge: None,
            plan: f.plan,
            environment: f.environment,
        };
        if !open {
            if let Some(w) = closed_model_stall(&r, spell) {
                r.warnings.push(w);
            }
        }
        r
    }

    /// The published JSON Schema of this document.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(RunResult)).expect("schema serializes")
    }
}

/// A closed model measures service time: a connection waits for its answer,
/// so a server that stalls costs requests, not latency (coordinated
/// omission). When the run shows a stall — a maximum far above the p99, or
/// a second without a response between seconds with them — say so, and how
/// to see it in latency.
fn closed_model_stall(r: &RunResult, spell: &dyn plan::Spelling) -> Option<String> {
    let l = &r.summary.latency;
    let p99 = l.at(99.0).unwrap_or(0.0);
    let spike = l.count >= 100 && l.max_us >= 100_000.0 && l.max_us > 10.0 * p99.max(1.0);
    // Whole seconds only: the first and last may be partial.
    let inner = r
        .series
        .get(1..r.series.len().saturating_sub(1))
        .unwrap_or(&[]);
    let silent = inner.iter().find(|s| s.responses == 0 && s.length_s >= 1.0);
    let what = match (silent, spike) {
        (Some(s), _) => format!("second {} had no response", s.second + 1),
        (None, true) => format!(
            "the slowest response ({:.0} ms) took over 10× the p99 ({:.1} ms)",
            l.max_us / 1000.0,
            p99 / 1000.0
        ),
        (None, false) => return None,
    };
    Some(format!(
        "the server stalled ({what}): in a closed model a stall costs requests, not latency, so \
         these percentiles hide it (coordinated omission); run {} at the throughput measured \
         here ({:.0}/s) to see it in latency",
        spell.usage(plan::Field::Rate),
        r.summary.rps
    ))
}

/// How a threshold fared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThresholdResult {
    pub expr: String,
    pub step: Option<String>,
    /// The measured value, in the threshold's unit (ms for latency, % for rates).
    pub actual: f64,
    pub passed: bool,
    /// The unit of `actual`: "ms", "%", "req/s", or "" for a count. Absent
    /// from results written before it existed, whose unit is read from `expr`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_optional_and_read_back() {
        // A marker without a note (older writers may leave it out).
        let m: Marker = serde_json::from_str(r#"{"at_s": 12.5}"#).unwrap();
        assert_eq!(m.note, "");
        let m = Marker {
            at_s: 3.25,
            note: "php-fpm restarted".into(),
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"at_s": 3.25, "note": "php-fpm restarted"})
        );
        let schema = RunResult::json_schema();
        let props = &schema["properties"];
        assert!(props.get("markers").is_some());
        assert!(
            !schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "markers"),
            "results without markers stay valid"
        );
    }

    #[test]
    fn histograms_without_intervals_read_and_write_as_before() {
        let old = r#"{"latency":"a","service":null,"connect":"c","tls":null,"wait":"w",
            "processing":"p","handshake":"h"}"#;
        let h: Histograms = serde_json::from_str(old).unwrap();
        assert!(h.intervals.is_empty());
        let back = serde_json::to_value(&h).unwrap();
        assert!(back.get("intervals").is_none(), "{back}");
        let with = Histograms {
            intervals: vec![IntervalHistogram {
                start_s: 0.0,
                length_s: 2.5,
                latency: "i".into(),
            }],
            ..h
        };
        let v = serde_json::to_value(&with).unwrap();
        assert_eq!(v["intervals"][0]["length_s"], 2.5);
        assert_eq!(serde_json::from_value::<Histograms>(v).unwrap(), with);
    }
}
