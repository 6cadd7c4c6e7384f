//! `yace import access-log`: a web server's access log → a replay plan, as
//! a scenario file that runs the open model (visitors arriving on a
//! timetable, each walking one journey of one request).
//!
//! - **The URL mix** (default): one journey per distinct method and
//!   target, weighted by its count in the log (the `--top` most requested;
//!   the rest are named in a note), and a `rate` equal to the log's mean
//!   rate × `--speed`, held for the log's length ÷ speed (or `--duration`).
//! - **Timed** (`--replay timed`): the same mix, and `rate_stages` with one
//!   stage per second of the log holding that second's count × speed
//!   (equal seconds merged), so a replay sends as many requests in each
//!   second as the log has; within a second, which URLs come is the mix's
//!   draw, not the log's order.
//!
//! The log is read as a stream, a line at a time (at most 64 KiB of it),
//! into bounded tallies ([`tally`]): a 1 GB log takes what a small one
//! takes. Lines not in the format are counted and the first few sampled,
//! with their line numbers. Query values of parameters named like secrets
//! (`plan::secrets`) never reach the output: `{{name}}` variables stand
//! for them.
//!
//! nginx JSON logs (`--format nginx-json`, a `log_format … escape=json`)
//! are read by key (the others are ignored; values are strings or
//! numbers): the time (`msec`, else the first of `time_iso8601`,
//! `time_local`, `@timestamp`, `timestamp`, `time`: epoch seconds, ISO 8601
//! or nginx's local time), the request (`request`, else `request_method` or
//! `method` with `request_uri`, or `uri`/`path` and `args`/`query_string`),
//! `status` and `request_time`.
//!
//! A log compressed with gzip (logrotate's `access.log.2.gz`) is read as
//! it is, still as a stream ([`input`]); several logs (a rotated set) are
//! read in turn into one plan, their bad lines named by file and line.

mod file;
mod format;
mod input;
mod tally;
mod target;

pub use format::LogFormat;

use crate::text::duration_text;
use crate::{Error, Format, Output};
use file::{Entry, Load, Plan, Stage};
use format::{Line, Record};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use tally::{Mix, Seconds, MAX_KEYS, MAX_SPAN_S};
use target::{origin_form, redact, sample, SecretVars, TargetSkip, MAX_TARGET};

/// How a log is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replay {
    /// The URL mix at the log's mean rate.
    #[default]
    Mix,
    /// The log's arrivals second by second.
    Timed,
}

/// What `yace import access-log` does.
#[derive(Debug, Clone)]
pub struct AccessLogOptions {
    pub format: LogFormat,
    pub replay: Replay,
    /// Time goes this many times faster than in the log (rates × speed,
    /// lengths ÷ speed).
    pub speed: f64,
    /// The replay's length (the mix: its hold; timed: the timetable cut
    /// there). `None`: the log's length ÷ speed.
    pub duration_ms: Option<u64>,
    /// Methods replayed (upper case); `None`: every method.
    pub methods: Option<Vec<String>>,
    /// URLs kept in the mix, the most requested first.
    pub top: usize,
    /// The scenario's `base`; `None`: none (given when it is run).
    pub base: Option<String>,
    pub output: Format,
    /// The log's name, for the file's comments.
    pub source: String,
}

impl AccessLogOptions {
    /// Defaults for `format`: the mix, GET and HEAD, the top 200 URLs.
    pub fn new(format: LogFormat) -> AccessLogOptions {
        AccessLogOptions {
            format,
            replay: Replay::Mix,
            speed: 1.0,
            duration_ms: None,
            methods: Some(vec!["GET".to_owned(), "HEAD".to_owned()]),
            top: DEFAULT_TOP,
            base: None,
            output: Format::Toml,
            source: "the log".to_owned(),
        }
    }
}

/// URLs kept in the mix by default.
const DEFAULT_TOP: usize = 200;
/// The most journeys a plan may have (a scenario's steps are numbered by
/// a `u16`; past a few thousand, a mix is a list nobody reads).
pub const MAX_TOP: usize = 10_000;
/// One of the logs read in turn by [`access_logs`](crate::access_logs).
pub struct LogFile<'a> {
    /// Its name, in what the user is told (`access.log.1.gz:12: …`).
    pub name: String,
    /// Its bytes: text, or text compressed with gzip. Buffered here, when
    /// its turn comes.
    pub reader: Box<dyn Read + 'a>,
}

impl std::fmt::Debug for LogFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogFile")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What is read of a plain log at a time.
const BUFFER: usize = 256 << 10;

/// A line longer than this is a bad line (and is not kept whole).
const MAX_LINE: usize = 64 << 10;
/// Bad lines shown.
const SAMPLES: usize = 5;

/// Reads one line (without `\n` and `\r`) into `buf`, keeping at most
/// [`MAX_LINE`] bytes of it: `Ok(None)` at the end, `Ok(Some(true))` when
/// the line was longer (the rest is skipped, never held).
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut any = false;
    let mut long = false;
    loop {
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], i + 1),
            None => (avail, avail.len()),
        };
        let room = MAX_LINE.saturating_sub(buf.len());
        if chunk.len() > room {
            long = true;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let end = done > chunk.len();
        input.consume(done);
        if end {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(long))
}

/// Why a request is not replayed, though its line is good.
#[derive(Debug, Default)]
struct Skipped {
    /// By method (at most 16 names; the rest under `other`).
    methods: BTreeMap<String, u64>,
    /// No request line (`"-"`, `""`, bytes that are none).
    no_request: u64,
    /// A target that is no path (`*`, `host:443`).
    not_path: u64,
    too_long: u64,
}

/// Everything the log adds up to.
#[derive(Debug, Default)]
struct Tally {
    lines: u64,
    blank: u64,
    bad: u64,
    /// The first bad lines: (file, line number, why, the line).
    samples: Vec<(String, u64, String, String)>,
    /// The name of the log being read.
    file: String,
    skipped: Skipped,
    kept: u64,
    mix: Mix,
    seconds: Seconds,
    secrets: SecretVars,
    /// Responses by class (1xx … 5xx) of the requests kept.
    classes: [u64; 5],
    /// Requests whose time was moved back by `$request_time`.
    moved_back: u64,
    /// Requests whose time had milliseconds.
    fine: u64,
    /// Kept methods other than GET and HEAD (replayed without a body).
    bodiless: BTreeMap<String, u64>,
}

impl Tally {
    fn bad(&mut self, line_no: u64, why: String, line: &[u8]) {
        self.bad += 1;
        if self.samples.len() < SAMPLES {
            self.samples
                .push((self.file.clone(), line_no, why, sample(line)));
        }
    }

    fn request(&mut self, r: Record, o: &AccessLogOptions, line_no: u64, line: &[u8]) {
        let method = r.method.to_ascii_uppercase();
        if let Some(keep) = &o.methods {
            if !keep.contains(&method) {
                let key = if self.skipped.methods.len() < 16
                    || self.skipped.methods.contains_key(&method)
                {
                    method
                } else {
                    "other".to_owned()
                };
                *self.skipped.methods.entry(key).or_default() += 1;
                return;
            }
        }
        let target = match origin_form(&r.target) {
            Ok(t) => t,
            Err(TargetSkip::NotPath) => {
                self.skipped.not_path += 1;
                return;
            }
            Err(TargetSkip::TooLong) => {
                self.skipped.too_long += 1;
                return;
            }
        };
        let arrival = r.time_ms - r.request_time_ms.unwrap_or(0);
        if let Err(span) = self.seconds.add(arrival.div_euclid(1000)) {
            let why = format!(
                "its time ({} UTC) would make the log span {} days; yace reads at most {} \
                 (split the log, or fix the time)",
                utc(arrival.div_euclid(1000)),
                span / 86_400,
                MAX_SPAN_S / 86_400
            );
            self.bad(line_no, why, line);
            return;
        }
        if r.request_time_ms.is_some() {
            self.moved_back += 1;
        }
        if r.fine {
            self.fine += 1;
        }
        if let Some(s) = r.status {
            self.classes[(usize::from(s / 100)).clamp(1, 5) - 1] += 1;
        }
        if method != "GET" && method != "HEAD" {
            *self.bodiless.entry(method.clone()).or_default() += 1;
        }
        let url = redact(&target, &mut self.secrets);
        self.mix.add(&format!("{method} {url}"));
        self.kept += 1;
    }
}

/// `2024-05-14 09:30:00` for a second since the epoch (UTC).
fn utc(sec: i64) -> String {
    let days = sec.div_euclid(86_400);
    let s = sec.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The last second of a span: its time of day when it is on the first's
/// day, else its date too.
fn until(first: i64, last: i64) -> String {
    let (a, b) = (utc(first), utc(last));
    if a[..10] == b[..10] {
        b[11..].to_owned()
    } else {
        b
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn share(part: u64, whole: u64) -> String {
    let p = part as f64 * 100.0 / whole.max(1) as f64;
    if p > 0.0 && p < 0.1 {
        "<0.1%".to_owned()
    } else {
        format!("{p:.1}%")
    }
}

/// Reads the log and writes the plan.
pub(crate) fn import(input: &mut dyn BufRead, o: &AccessLogOptions) -> Result<Output, Error> {
    check(o)?;
    let mut t = Tally::default();
    read(&mut t, Box::new(input), &o.source, o)?;
    write(&t, o)
}

/// Reads the logs in turn and writes one plan of them all.
pub(crate) fn import_files(files: Vec<LogFile>, o: &AccessLogOptions) -> Result<Output, Error> {
    check(o)?;
    if files.is_empty() {
        return Err(Error::new("no log to read"));
    }
    let mut t = Tally::default();
    for f in files {
        let input = BufReader::with_capacity(BUFFER, f.reader);
        read(&mut t, Box::new(input), &f.name, o)?;
    }
    write(&t, o)
}

/// The options a caller may have set wrong.
fn check(o: &AccessLogOptions) -> Result<(), Error> {
    if !(o.speed.is_finite() && o.speed > 0.0) {
        return Err(Error::new(format!(
            "--speed {}: must be a number above 0 (2: twice as fast as the log)",
            o.speed
        )));
    }
    if o.top == 0 || o.top > MAX_TOP {
        return Err(Error::new(format!(
            "--top {}: must be from 1 to {MAX_TOP}",
            o.top
        )));
    }
    if o.duration_ms == Some(0) {
        return Err(Error::new("--duration must be above 0"));
    }
    Ok(())
}

/// Reads the log `name`, a line at a time (decompressed first when it is
/// gzip), into `t`.
fn read(
    t: &mut Tally,
    input: Box<dyn BufRead + '_>,
    name: &str,
    o: &AccessLogOptions,
) -> Result<(), Error> {
    let mut input = input::open(input).map_err(|e| Error::new(format!("{name}: {}", e.message)))?;
    t.file = name.to_owned();
    let mut buf = Vec::with_capacity(4096);
    let mut line_no = 0u64;
    loop {
        let long = match read_line(&mut *input, &mut buf) {
            Ok(None) => break,
            Ok(Some(long)) => long,
            Err(e) => {
                return Err(Error::new(format!(
                    "{name}: cannot read line {}: {e}",
                    line_no + 1
                )))
            }
        };
        line_no += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            t.blank += 1;
            continue;
        }
        t.lines += 1;
        if long {
            let why = format!("longer than {} KiB", MAX_LINE >> 10);
            t.bad(line_no, why, &buf);
            continue;
        }
        match o.format.line(&buf) {
            Line::Bad(why) => t.bad(line_no, why, &buf),
            Line::NoRequest => t.skipped.no_request += 1,
            Line::Request(r) => t.request(r, o, line_no, &buf),
        }
    }
    Ok(())
}

/// The plan, and what standard error says about it.
fn write(t: &Tally, o: &AccessLogOptions) -> Result<Output, Error> {
    let mut warnings = bad_lines(t, o);
    if t.kept == 0 {
        let mut msg = format!(
            "nothing to replay in {}: {} line{} read as {}, no request kept",
            o.source,
            t.lines,
            plural(t.lines),
            o.format.name()
        );
        let skipped = skipped_text(t);
        if !skipped.is_empty() {
            msg.push_str(&format!(" ({skipped})"));
        }
        for w in warnings {
            msg.push_str("\n  ");
            msg.push_str(&w);
        }
        return Err(Error::new(msg));
    }
    let (first, last) = t.seconds.span().expect("a request was kept");
    let span_s = (last - first + 1) as u64;
    let ranked = t.mix.ranked();
    let shown = ranked.len().min(o.top);
    let in_mix: u64 = ranked[..shown].iter().map(|(_, c)| c).sum();
    let distinct = ranked.len() as u64;

    // The notes on standard error.
    let mut notes = Vec::new();
    let skipped = skipped_text(t);
    notes.push(format!(
        "read {} line{} of {} as {}: {} request{} to replay, from {} to {} UTC ({}){}",
        t.lines,
        plural(t.lines),
        o.source,
        o.format.name(),
        t.kept,
        plural(t.kept),
        utc(first),
        until(first, last),
        duration_text(span_s * 1000),
        if skipped.is_empty() {
            String::new()
        } else {
            format!("; not replayed: {skipped}")
        }
    ));
    if shown < ranked.len() || t.mix.folded > 0 {
        let other = t.kept - in_mix;
        notes.push(format!(
            "the mix keeps the {shown} most requested of {}{} URLs ({} of the requests); the \
             other {} request{} are sent as the mix (--top N keeps more)",
            if t.mix.folds > 0 { "more than " } else { "" },
            distinct,
            share(in_mix, t.kept),
            other,
            plural(other)
        ));
    }
    if t.mix.folds > 0 {
        notes.push(format!(
            "the log has more than {MAX_KEYS} distinct URLs: the rarer ones were folded into \
             one count as it was read ({} requests), so the counts kept are lower bounds",
            t.mix.folded
        ));
    }
    if !t.secrets.vars.is_empty() {
        let list: Vec<String> = t
            .secrets
            .vars
            .iter()
            .map(|(v, n)| format!("{{{{{v}}}}} ({n})"))
            .collect();
        notes.push(format!(
            "query values of parameters named like secrets are not copied: {} stand for them, \
             set to REPLACE_ME in [vars]: put valid values there before a run",
            list.join(", ")
        ));
    }
    if !t.bodiless.is_empty() {
        let list: Vec<&str> = t.bodiless.keys().map(String::as_str).collect();
        notes.push(format!(
            "{} requests are replayed without a body: a log has none",
            list.join(", ")
        ));
    }
    let non_2xx: u64 = t.classes.iter().sum::<u64>() - t.classes[1];
    if non_2xx > 0 {
        let list: Vec<String> = t
            .classes
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| format!("{}xx {n}", i + 1))
            .collect();
        notes.push(format!(
            "statuses in the log: {}; each URL is requested again whatever it got",
            list.join(", ")
        ));
    }
    if t.moved_back > 0 {
        notes.push(
            "arrival times are the log's times less $request_time (nginx writes a line when \
             the request ends)"
                .to_owned(),
        );
    } else if o.format.name() != "custom" {
        notes.push(
            "arrival times are the times of the log's lines: nginx writes a line when the \
             request ends, Apache (%t) when it came"
                .to_owned(),
        );
    }

    // The file.
    let mut entries = Vec::with_capacity(shown);
    for (key, count) in &ranked[..shown] {
        let (method, url) = key.split_once(' ').expect("METHOD target");
        entries.push(Entry {
            method: method.to_owned(),
            url: url.to_owned(),
            weight: *count,
            note: share(*count, t.kept),
        });
    }
    let mut entries_after = Vec::new();
    if shown < ranked.len() || t.mix.folded > 0 {
        let other = t.kept - in_mix;
        entries_after.push(format!(
            "Not in the mix: {}{} more URLs, {} requests ({}); --top keeps more.",
            if t.mix.folds > 0 { "more than " } else { "" },
            distinct - shown as u64,
            other,
            share(other, t.kept)
        ));
    }
    let speed = if o.speed == 1.0 {
        String::new()
    } else {
        format!(" × speed {}", file::rate_text(o.speed))
    };
    let mut comments = vec![
        format!(
            "Imported by `yace import access-log` from {} ({}): {} requests ({}),",
            o.source,
            o.format.name(),
            t.kept,
            methods_text(o)
        ),
        format!(
            "{} to {} UTC ({}), {}/s on average.",
            utc(first),
            until(first, last),
            duration_text(span_s * 1000),
            file::rate_text(t.kept as f64 / span_s as f64)
        ),
        "Each visitor walks one journey, a URL of the log picked by weight (its count".to_owned(),
        format!(
            "in the log): the {shown} most requested URL{}, {} of the requests.",
            plural(shown as u64),
            share(in_mix, t.kept)
        ),
        "Check it with `yace run -f FILE --dry-run`; run it with".to_owned(),
        "`yace run -f FILE http://HOST:PORT` (the URL gives the server; it replaces `base`)."
            .to_owned(),
    ];
    let (load, load_comments) =
        match o.replay {
            Replay::Mix => {
                let rate = t.kept as f64 / span_s as f64 * o.speed;
                let hold_ms = o
                    .duration_ms
                    .unwrap_or_else(|| ((span_s as f64 * 1000.0 / o.speed).round() as u64).max(1));
                let how = if o.duration_ms.is_some() {
                    "held for --duration".to_owned()
                } else {
                    format!(
                        "held for the log's length{}",
                        if speed.is_empty() {
                            String::new()
                        } else {
                            format!(" ÷ speed {}", file::rate_text(o.speed))
                        }
                    )
                };
                (
                    Load::Mix { rate, hold_ms },
                    vec![format!(
                    "Visitors arrive at the log's mean rate{speed}, {how}; each sends one request."
                )],
                )
            }
            Replay::Timed => {
                let (stages, cut) = stages(t.seconds.counts(), first, o);
                notes.push(format!(
                "the replay keeps the log's arrivals second by second{}: {} stage{}; the order of \
                 URLs within a second is the mix's, not the log's",
                if speed.is_empty() {
                    String::new()
                } else {
                    format!(" ({} s of the log in each second)", file::rate_text(o.speed))
                },
                stages.len(),
                plural(stages.len() as u64)
            ));
                if t.fine == 0 {
                    notes.push(
                        "the log's times are whole seconds: within each, the replay spreads the \
                     arrivals evenly"
                            .to_owned(),
                    );
                }
                let mut c = vec![
                format!(
                    "The log's arrivals, second by second{speed}: one stage per second of the log"
                ),
                "(equal seconds merged) holding that second's count. Within a second, which URLs"
                    .to_owned(),
                "come is the mix's draw (by weight), not the log's order.".to_owned(),
            ];
                if let Some(cut) = cut {
                    c.push(format!("Cut at --duration {}.", duration_text(cut)));
                }
                (Load::Timed(stages), c)
            }
        };
    let (vars, vars_comments) = if t.secrets.vars.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        (
            t.secrets
                .vars
                .iter()
                .map(|(v, _)| (v.clone(), "REPLACE_ME".to_owned()))
                .collect(),
            vec![
                "Query values of parameters named like secrets (tokens, keys, sessions,".to_owned(),
                "signatures) are not copied from the log: put valid values here before a run."
                    .to_owned(),
            ],
        )
    };
    if !warnings.is_empty() {
        comments.push(format!(
            "{} line{} of the log did not read as {} (see the warnings).",
            t.bad,
            plural(t.bad),
            o.format.name()
        ));
    }
    let plan = Plan {
        comments,
        base: o.base.clone(),
        entries,
        entries_after,
        vars,
        vars_comments,
        load,
        load_comments,
    };
    warnings.shrink_to_fit();
    Ok(Output {
        text: plan.write(o.output),
        warnings,
        notes,
    })
}

/// `GET, HEAD` or `every method`.
fn methods_text(o: &AccessLogOptions) -> String {
    match &o.methods {
        None => "every method".to_owned(),
        Some(m) => m.join(", "),
    }
}

/// What was not replayed, in words (empty: nothing).
fn skipped_text(t: &Tally) -> String {
    let mut parts = Vec::new();
    let by_method: u64 = t.skipped.methods.values().sum();
    if by_method > 0 {
        let list: Vec<String> = t
            .skipped
            .methods
            .iter()
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        parts.push(format!(
            "{by_method} of other methods ({}; --methods adds them)",
            list.join(", ")
        ));
    }
    if t.skipped.no_request > 0 {
        parts.push(format!("{} without a request line", t.skipped.no_request));
    }
    if t.skipped.not_path > 0 {
        parts.push(format!(
            "{} whose target is no path (OPTIONS *, CONNECT)",
            t.skipped.not_path
        ));
    }
    if t.skipped.too_long > 0 {
        parts.push(format!(
            "{} with a target over {} KiB",
            t.skipped.too_long,
            MAX_TARGET >> 10
        ));
    }
    if t.bad > 0 {
        parts.push(format!("{} bad line{}", t.bad, plural(t.bad)));
    }
    parts.join(", ")
}

/// The warnings about bad lines: how many, the first few with their line
/// numbers, and a hint when most are bad.
fn bad_lines(t: &Tally, o: &AccessLogOptions) -> Vec<String> {
    if t.bad == 0 {
        return Vec::new();
    }
    let mut w = vec![format!(
        "{} of {} line{} did not read as {}{}:",
        t.bad,
        t.lines,
        plural(t.lines),
        o.format.name(),
        if t.bad as usize > t.samples.len() {
            format!(" (the first {} below)", t.samples.len())
        } else {
            String::new()
        }
    )];
    for (file, n, why, text) in &t.samples {
        w.push(format!("{file}:{n}: {why}: {text}"));
    }
    if t.bad * 2 > t.lines {
        w.push(
            "most lines did not read: is --format right? nginx's default is combined; a \
             log_format of your own is given as its string (--format '$remote_addr …')"
                .to_owned(),
        );
    }
    w
}

/// The timed replay's stages, from the count of each second of the log
/// starting at `first`; and the length it was cut at, if it was.
fn stages(counts: &[u32], first: i64, o: &AccessLogOptions) -> (Vec<Stage>, Option<u64>) {
    let mut out: Vec<Stage> = Vec::new();
    let mut elapsed_ms = 0u64;
    let mut cut = None;
    let mut day = None;
    let mut i = 0;
    while i < counts.len() {
        let c = counts[i];
        let n = counts[i..].iter().take_while(|&&x| x == c).count();
        let mut duration_ms = ((n as f64 * 1000.0 / o.speed).round() as u64).max(1);
        if let Some(limit) = o.duration_ms {
            if elapsed_ms + duration_ms >= limit {
                if elapsed_ms + duration_ms > limit {
                    cut = Some(limit);
                }
                duration_ms = limit - elapsed_ms;
            }
        }
        // Rate × duration gives back the log's count exactly.
        let rate =
            f64::from(c) * n as f64 * 1000.0 / ((n as f64 * 1000.0 / o.speed).round().max(1.0));
        let when = utc(first + i as i64);
        let today = when[..10].to_owned();
        let mut note = if day.as_ref() != Some(&today) {
            day = Some(today);
            format!("{when} UTC")
        } else {
            when[11..].to_owned()
        };
        if n > 1 {
            note.push_str(&format!(" +{n}s"));
        }
        note.push_str(&format!(": {c}/s in the log"));
        if duration_ms > 0 {
            out.push(Stage {
                duration_ms,
                rate,
                note,
            });
        }
        elapsed_ms += duration_ms;
        if o.duration_ms.is_some_and(|l| elapsed_ms >= l) {
            break;
        }
        i += n;
    }
    (out, cut)
}

#[cfg(test)]
mod tests;
