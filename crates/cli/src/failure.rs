//! How a command ends: the exit codes, the error that carries one, and
//! which code a run or a run-library error maps to.

use ::run::{Finished, StopCause};

/// Exit codes, documented in `--help` and the README.
pub mod exit {
    pub const OK: u8 = 0;
    /// The run could not be done: unreachable target, I/O failure.
    pub const RUNTIME: u8 = 1;
    /// Bad input: flags, files, URL.
    pub const USAGE: u8 = 2;
    /// The run completed but breached a threshold.
    pub const THRESHOLD: u8 = 3;
    /// An output file could not be written because the disk is full.
    pub const DISK_FULL: u8 = 4;
    /// A shard was ready too late to start within its tolerance (`--start-at`).
    pub const TOO_LATE: u8 = 5;
    /// `yace merge`: the merged result is incomplete (written, with reasons).
    pub const INCOMPLETE: u8 = 6;
    pub const SIGINT: u8 = 130;
    pub const SIGTERM: u8 = 143;
}

/// An error that ends the command, with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: exit::USAGE,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        Failure {
            code: exit::RUNTIME,
            message: message.into(),
        }
    }
}

/// Two checks of the user's input, reported in one round: both values,
/// or every problem of both (`first`'s before `second`'s).
pub fn both<A, B>(
    first: Result<A, Failure>,
    second: Result<B, Failure>,
) -> Result<(A, B), Failure> {
    match (first, second) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(a), Err(b)) => Err(Failure {
            code: a.code.max(b.code),
            message: format!("{}\n{}", a.message, b.message),
        }),
    }
}

impl From<::run::Error> for Failure {
    fn from(e: ::run::Error) -> Self {
        let code = if e.is_usage() {
            exit::USAGE
        } else if e.is_disk_full() {
            exit::DISK_FULL
        } else {
            exit::RUNTIME
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// The exit code for how a run ended: a signal first, then a run in which
/// every request failed, then thresholds.
pub fn exit_code<X>(done: &Finished<X>) -> u8 {
    match done.stopped_by {
        Some(StopCause::Terminated) => exit::SIGTERM,
        Some(StopCause::Interrupted) => exit::SIGINT,
        // A run made only of errors is no measurement: it fails like an
        // unreachable target, whatever the thresholds said.
        None if done.all_failed() => exit::RUNTIME,
        None if done.breached() => exit::THRESHOLD,
        None => exit::OK,
    }
}

/// What a run made only of errors ends with (on stderr, after the
/// summary): why its exit code is not 0, and its most common error class.
pub fn all_failed_line<X>(done: &Finished<X>) -> Option<String> {
    if done.stopped_by.is_some() || !done.all_failed() {
        return None;
    }
    let r = &done.result;
    let worst = r
        .outcomes
        .iter()
        .filter(|(o, _)| o.is_error())
        .max_by_key(|(_, n)| **n)
        .map(|(o, n)| format!("; most were {} ({})", o.name(), report::count(*n)))
        .unwrap_or_default();
    let t = &r.plan.target;
    let fix = match plain_to_tls(r) {
        Some(https) => format!("; {}:{} speaks TLS: use {https}", t.host, t.port),
        None => format!(
            ": the run measured no server; the errors above say why, and `yace doctor '{}'` \
             checks the target",
            t.url
        ),
    };
    Some(format!(
        "every request failed ({} errors, not one response){worst}{fix}",
        report::count(r.summary.errors)
    ))
}

/// A plain `http://` run whose every answer was not even an HTTP status
/// line, against a port that speaks TLS: the `https://` URL to use instead.
/// Only then is the port asked (a ClientHello, which an HTTP server would
/// count as one more, unreadable, request).
fn plain_to_tls(r: &stats::RunResult) -> Option<String> {
    use std::net::ToSocketAddrs;
    let t = &r.plan.target;
    let rest = t.url.strip_prefix("http://")?;
    let not_http = r
        .error_details
        .iter()
        .find_map(|(d, n)| (d.name() == "status_line").then_some(*n));
    if not_http != Some(r.summary.errors) {
        return None;
    }
    let addr = (t.host.as_str(), t.port).to_socket_addrs().ok()?.next()?;
    ::run::preflight::speaks_tls(addr, &t.host, ::run::probe::CONNECT_TIMEOUT)
        .then(|| format!("https://{rest}"))
}
