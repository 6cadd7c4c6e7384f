//! Running a scenario: per worker, a [`Runner`] turns each [`User`]'s
//! position into the next request's bytes and digests the responses. Pure:
//! the engine owns sockets and clocks, and says when a response arrived.

use crate::data::DataMode;
use crate::jsonpath::{json_equal, value_text};
use crate::program::{Body, CheckKind, ExtractFrom, HeaderTest, Program, Slot};
use crate::template::Scope;
use crate::think;
use plan::rng::Rng;
use sample::Captured;
use sample::{parse_http_date, Jar};
use std::sync::Arc;
use std::time::Duration;

/// What a response handler needs kept of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capture {
    /// Status and latency are enough.
    None,
    /// The head: headers, cookies.
    Head,
    /// Head and body: body checks, JSON and regex extracts.
    HeadAndBody,
}

/// A user's next move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Send the bytes just written; report the outcome with
    /// [`Runner::response`] or [`Runner::failed`].
    Request {
        step: u16,
        capture: Capture,
        /// A HEAD request: its response has no body.
        head: bool,
        /// Safe to send again on a fresh connection after a stale keep-alive.
        idempotent: bool,
    },
    /// Wait this long, then ask again.
    Think(std::time::Duration),
    /// The iteration is over; the next call starts a new one.
    EndIteration,
}

/// How often one check (or extract) held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckCount {
    pub step: u16,
    /// `status == 200`, `extract token`, …
    pub name: String,
    pub passed: u64,
    pub failed: u64,
}

/// One per worker thread: the shared compiled scenario, this worker's check
/// counters and scratch space.
#[derive(Debug, Clone)]
pub struct Runner {
    prog: Arc<Program>,
    /// [passed, failed] per counter.
    counts: Vec<[u64; 2]>,
    /// Cookies the users' jars could not keep (full, or too large).
    cookies_dropped: u64,
    scratch: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Next call begins an iteration.
    Start,
    /// Next call sends the step at `pos`.
    Ready,
    /// A request is out.
    Waiting(u16),
    /// The response to this step was digested; think comes next.
    Done(u16),
    /// Next call ends the iteration.
    End,
}

/// One virtual user: its cookie jar, variables, data rows, place in its
/// journey and random stream.
#[derive(Debug, Clone)]
pub struct User {
    index: u64,
    iteration: u64,
    rng: Rng,
    journey: usize,
    pos: usize,
    phase: Phase,
    vars: Vec<Option<String>>,
    rows: Vec<usize>,
    jar: Jar,
}

impl User {
    /// The user's index (unique across the run).
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Iterations this user has finished.
    pub fn iterations(&self) -> u64 {
        self.iteration
    }
}

const USER_AGENT: &[u8] = concat!("yace/", env!("CARGO_PKG_VERSION")).as_bytes();

impl Runner {
    pub(crate) fn new(prog: Arc<Program>) -> Runner {
        Runner {
            counts: vec![[0, 0]; prog.counters.len()],
            cookies_dropped: 0,
            prog,
            scratch: Vec::new(),
        }
    }

    pub fn new_user(&mut self, index: u64) -> User {
        User {
            index,
            iteration: 0,
            rng: Rng::for_user(self.prog.seed, index),
            journey: 0,
            pos: 0,
            phase: Phase::Start,
            vars: vec![None; self.prog.slots.len()],
            rows: vec![0; self.prog.data.len()],
            jar: Jar::default(),
        }
    }

    /// Writes the next request (full HTTP/1.1 bytes) into `out`, cleared
    /// first, and says what to do. After a journey's last step (and its think
    /// time) it returns `EndIteration` once; the call after starts a new
    /// iteration: a new weighted choice of journey, the next data rows, and
    /// no extracted variables (cookies stay with the user).
    pub fn next(&mut self, user: &mut User, out: &mut Vec<u8>) -> Action {
        out.clear();
        loop {
            match user.phase {
                Phase::Start => {
                    self.begin(user);
                    user.phase = Phase::Ready;
                }
                Phase::Ready => {
                    let journey = &self.prog.journeys[user.journey];
                    let Some(slot) = journey.slots.get(user.pos) else {
                        user.phase = Phase::End;
                        continue;
                    };
                    let id = match slot {
                        Slot::Step(id) => *id,
                        Slot::Choice(options) => pick(options, &mut user.rng),
                    };
                    self.write_request(user, id, out);
                    user.phase = Phase::Waiting(id);
                    let step = &self.prog.steps[usize::from(id)];
                    return Action::Request {
                        step: id,
                        capture: step.capture,
                        head: step.head,
                        idempotent: step.idempotent,
                    };
                }
                // Asked again without an outcome: the request is lost, and so
                // is the rest of the iteration.
                Phase::Waiting(_) => user.phase = Phase::End,
                Phase::Done(id) => {
                    user.pos += 1;
                    user.phase = Phase::Ready;
                    let t = &self.prog.steps[usize::from(id)].think;
                    let d = think::sample(t, &mut user.rng);
                    if !d.is_zero() {
                        return Action::Think(d);
                    }
                }
                Phase::End => {
                    user.phase = Phase::Start;
                    user.iteration += 1;
                    return Action::EndIteration;
                }
            }
        }
    }

    fn begin(&mut self, user: &mut User) {
        let prog = &self.prog;
        user.journey = if prog.journeys.len() == 1 {
            0
        } else {
            let total: f64 = prog.journeys.iter().map(|j| j.weight).sum();
            let mut r = user.rng.next_f64() * total;
            let mut chosen = prog.journeys.len() - 1;
            for (i, j) in prog.journeys.iter().enumerate() {
                if r < j.weight {
                    chosen = i;
                    break;
                }
                r -= j.weight;
            }
            chosen
        };
        user.pos = 0;
        user.vars.iter_mut().for_each(|v| *v = None);
        for (row, set) in user.rows.iter_mut().zip(&prog.data) {
            let n = set.rows.len() as u64;
            *row = match set.mode {
                DataMode::PerUser => user.index % n,
                DataMode::RoundRobin => user.index.wrapping_add(user.iteration) % n,
                DataMode::Random => user.rng.below(n),
            } as usize;
        }
    }

    fn write_request(&mut self, user: &mut User, id: u16, out: &mut Vec<u8>) {
        let Runner { prog, scratch, .. } = self;
        let step = &prog.steps[usize::from(id)];
        let User {
            vars,
            rows,
            rng,
            jar,
            index,
            iteration,
            ..
        } = user;
        let mut scope = Scope {
            vars,
            data: &prog.data,
            rows,
            user: *index,
            iteration: *iteration,
            rng,
        };
        out.extend_from_slice(step.method.as_bytes());
        out.push(b' ');
        if step.dynamic {
            scratch.clear();
            step.url.render(&mut scope, scratch);
            write_target(&prog.base.path, scratch, out);
        } else {
            step.url.render(&mut scope, out);
        }
        out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        out.extend_from_slice(prog.base.host_header.as_bytes());
        out.extend_from_slice(b"\r\n");
        if !step.user_agent {
            out.extend_from_slice(b"User-Agent: ");
            out.extend_from_slice(USER_AGENT);
            out.extend_from_slice(b"\r\n");
        }
        if !step.accept {
            out.extend_from_slice(b"Accept: */*\r\n");
        }
        for (name, value) in &step.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            value.render(&mut scope, out);
            out.extend_from_slice(b"\r\n");
        }
        if let Some(ct) = step.content_type {
            out.extend_from_slice(b"Content-Type: ");
            out.extend_from_slice(ct.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        let jar_cookies = prog.cookies && !jar.is_empty();
        if jar_cookies || step.cookie.is_some() {
            out.extend_from_slice(b"Cookie: ");
            if let Some(c) = &step.cookie {
                c.render(&mut scope, out);
                if jar_cookies {
                    out.extend_from_slice(b"; ");
                }
            }
            if jar_cookies {
                jar.write(out);
            }
            out.extend_from_slice(b"\r\n");
        }
        scratch.clear();
        let body: &[u8] = match &step.body {
            Body::None => &[],
            Body::Bytes(b) => b,
            Body::Template(t) => {
                t.render(&mut scope, scratch);
                scratch
            }
        };
        if !body.is_empty() || step.send_length {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(body.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }

    /// The response to `step` arrived: `response` is it, typed (the body
    /// de-chunked, possibly cut at 1 MiB), when the step asked the engine to
    /// capture it. Updates cookies, runs extracts and checks. Ignored unless
    /// `step` is the user's request that is out.
    pub fn response(
        &mut self,
        user: &mut User,
        step: u16,
        status: u16,
        response: Option<&Captured>,
        latency: Duration,
    ) {
        // Only the request that is out has an outcome; a stray report is
        // ignored rather than moving the user on.
        if user.phase != Phase::Waiting(step) {
            return;
        }
        let st = &self.prog.steps[usize::from(step)];
        let resp = response.filter(|_| st.capture != Capture::None);
        if let (true, Some(r)) = (self.prog.cookies, &resp) {
            let now = r.header("date").and_then(parse_http_date);
            for v in r.all("set-cookie") {
                self.cookies_dropped += user.jar.set(v, now);
            }
        }
        let body: &[u8] = match (&resp, st.capture) {
            (Some(r), Capture::HeadAndBody) => &r.body,
            _ => &[],
        };
        // Parsed once, and only if an extract or check asks for it.
        let parsed = std::cell::OnceCell::new();
        let json = || {
            parsed
                .get_or_init(|| serde_json::from_slice::<serde_json::Value>(body).ok())
                .as_ref()
        };
        let counts = &mut self.counts;
        let mut tally = |counter: usize, ok: bool| counts[counter][usize::from(!ok)] += 1;
        for ex in &st.extracts {
            let value = match (&ex.from, &resp) {
                (ExtractFrom::Json(p), _) => json().and_then(|j| p.get(j)).map(value_text),
                (ExtractFrom::Header(h), Some(r)) => r.header(h).map(str::to_owned),
                (ExtractFrom::Regex(re, g), _) => re
                    .captures(body)
                    .and_then(|c| c.get(*g))
                    .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned()),
                (ExtractFrom::Cookie(name), Some(r)) => {
                    if self.prog.cookies {
                        user.jar.get(name).map(str::to_owned)
                    } else {
                        let mut jar = Jar::default();
                        r.all("set-cookie").for_each(|v| {
                            jar.set(v, None);
                        });
                        jar.get(name).map(str::to_owned)
                    }
                }
                (_, None) => None,
            };
            tally(ex.counter, value.is_some());
            user.vars[ex.slot] = Some(value.unwrap_or_default());
        }
        let mut all_passed = true;
        for check in &st.checks {
            let ok = match &check.kind {
                CheckKind::Status(s) => status == *s,
                CheckKind::StatusIn(v) => v.contains(&status),
                CheckKind::BodyContains(_) | CheckKind::BodyMatches(_) if resp.is_none() => false,
                CheckKind::BodyContains(re) | CheckKind::BodyMatches(re) => re.is_match(body),
                CheckKind::Json(p, eq) => json()
                    .and_then(|j| p.get(j))
                    .is_some_and(|v| eq.as_ref().is_none_or(|e| json_equal(v, e))),
                CheckKind::Header(name, test) => {
                    let v = resp.as_ref().and_then(|r| r.header(name));
                    match (test, v) {
                        (_, None) => false,
                        (HeaderTest::Exists, Some(_)) => true,
                        (HeaderTest::Equals(e), Some(v)) => v == e,
                        (HeaderTest::Contains(c), Some(v)) => v.contains(c.as_str()),
                    }
                }
                CheckKind::MaxLatency(max) => latency <= *max,
            };
            tally(check.counter, ok);
            all_passed &= ok;
        }
        user.phase = if !all_passed && st.abort_on_fail {
            Phase::End
        } else {
            Phase::Done(step)
        };
    }

    /// The request for `step` failed without a response: the rest of this
    /// iteration is skipped (the next call returns `EndIteration`).
    pub fn failed(&mut self, user: &mut User, step: u16) {
        if user.phase == Phase::Waiting(step) {
            user.phase = Phase::End;
        }
    }

    /// Every check and extract of the scenario, in file order, with this
    /// runner's counts (zero for those never run).
    pub fn counters(&self) -> Vec<CheckCount> {
        self.prog
            .counters
            .iter()
            .zip(&self.counts)
            .map(|((step, name), [passed, failed])| CheckCount {
                step: *step,
                name: name.clone(),
                passed: *passed,
                failed: *failed,
            })
            .collect()
    }

    /// Adds another worker's counts to this one's.
    pub fn merge(&mut self, other: &Runner) {
        debug_assert!(
            Arc::ptr_eq(&self.prog, &other.prog),
            "runners of one scenario"
        );
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            a[0] += b[0];
            a[1] += b[1];
        }
        self.cookies_dropped += other.cookies_dropped;
    }

    /// Cookies the users' jars could not keep: over 180 in a jar (the
    /// oldest went) or over 4 KiB.
    pub fn cookies_dropped(&self) -> u64 {
        self.cookies_dropped
    }
}

fn pick(options: &[(u16, f64)], rng: &mut Rng) -> u16 {
    let total: f64 = options.iter().map(|(_, w)| w).sum();
    let mut r = rng.next_f64() * total;
    for (id, w) in options {
        if r < *w {
            return *id;
        }
        r -= w;
    }
    options[options.len() - 1].0
}

/// A request target computed at run time: an absolute URL (a `Location`,
/// say) is sent as its path (a run has one target), anything else is put
/// under base's path.
fn write_target(base_path: &str, rendered: &[u8], out: &mut Vec<u8>) {
    let after_scheme = [&b"http://"[..], b"https://"]
        .iter()
        .find_map(|p| rendered.strip_prefix(*p));
    if let Some(rest) = after_scheme {
        match rest.iter().position(|&b| b == b'/' || b == b'?') {
            Some(i) if rest[i] == b'/' => out.extend_from_slice(&rest[i..]),
            Some(i) => {
                out.push(b'/');
                out.extend_from_slice(&rest[i..]);
            }
            None => out.push(b'/'),
        }
        return;
    }
    out.extend_from_slice(base_path.trim_end_matches('/').as_bytes());
    if rendered.first() != Some(&b'/') {
        out.push(b'/');
    }
    out.extend_from_slice(rendered);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(base: &str, rendered: &str) -> String {
        let mut out = Vec::new();
        write_target(base, rendered.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn run_time_targets() {
        assert_eq!(target("/", "/a"), "/a");
        assert_eq!(target("/api/", "/a"), "/api/a");
        assert_eq!(target("/api", "a?x=1"), "/api/a?x=1");
        assert_eq!(target("/api", ""), "/api/");
        assert_eq!(target("/api", "http://h:1/cart?x=1"), "/cart?x=1");
        assert_eq!(target("/api", "https://h"), "/");
        assert_eq!(target("/api", "http://h?q"), "/?q");
    }
}
