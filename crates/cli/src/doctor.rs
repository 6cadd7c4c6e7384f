//! `yace doctor`: its flags, and the checklist printed as text or JSON.
//! The checks themselves are library code: `host` (this machine's facts and
//! the advice for each; `host::preflight` is the cheap subset every run
//! does) and `run::doctor` (gathering them, and one timed request to the
//! target through `run::probe`).

mod render;

use crate::{exit, Failure};
use ::run::doctor::{gather, Checkup, Findings};
use clap::Args;
use plan::Target;
use std::io::Write;

const DOCTOR_HELP: &str = "\
Checks, one line each (ok, warn or fail; warn and fail give the command that fixes it):
  open_files  ulimit -n against the connections (yace needs one per connection + 64)
  ports       the local port range against the connections open at once
              (with --source-addrs: per source address, as they are dealt)
  sources     with --source-addrs: each address can be bound here, and suits the target
  time_wait   TIME_WAIT and tcp_tw_reuse against new connections per second
  somaxconn   the listen backlog cap, when the server runs on this machine
  cpus        threads against the CPUs this process may use (taskset, cgroups)
  conntrack   the connection-tracking table, when the module is loaded
  target      whether the URL is this machine (client and server sharing CPUs)
  probe       one GET: status, Server, body framing, keep-alive, and its phases
              (dns, connect, wait for the first byte, receive, total) in ms

Examples:
  yace doctor                                   # this machine, for 50 connections
  yace doctor http://10.0.0.7:8080/ -c 10k      # before a 10,000-connection run
  yace doctor http://10.0.0.7/ -c 200 --no-keepalive --rate 5000
  yace doctor -c 100k --source-addrs 127.0.0.2-127.0.0.9   # ports per source address
  yace doctor URL --json | jq '.checks[] | select(.level != \"ok\")'

Exit codes: 0 nothing failed (warnings allowed) · 1 a check failed · 2 bad input";

#[derive(Args, Debug)]
#[command(after_help = DOCTOR_HELP)]
pub struct DoctorArgs {
    #[arg(
        help = "Target to check (http://host[:port]/path): where it runs, and one \
                  timed GET request"
    )]
    pub url: Option<String>,

    /// Connections you plan to open (as `yace run -c`); accepts 10k-style counts.
    #[arg(short = 'c', long = "connections", value_name = "N", default_value = "50",
          value_parser = count_arg)]
    pub connections: u64,

    /// New connections per second you plan, for the port and TIME_WAIT
    /// checks. Default: none with keep-alive; with --no-keepalive (or a
    /// server that closes), estimated from the probe.
    #[arg(long = "rate", value_name = "PER_SECOND", value_parser = rate_arg)]
    pub rate: Option<f64>,

    /// Worker threads you plan (default: one per CPU, as `yace run`).
    #[arg(short = 't', long = "threads", value_name = "N", value_parser = count_arg)]
    pub threads: Option<u64>,

    /// You plan a new connection per request (`yace run --no-keepalive`),
    /// which puts ports in TIME_WAIT.
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,

    /// Local addresses you plan to connect from (as `yace run
    /// --source-addrs`): ports are then checked per address, and each
    /// address for whether it can be bound here.
    #[arg(long = "source-addrs", value_name = "LIST", value_parser = sources_arg)]
    pub source_addrs: Option<plan::source::SourceAddrs>,

    /// Print one JSON document (yace.doctor.v1) on stdout instead of the checklist.
    #[arg(long = "json")]
    pub json: bool,

    /// HTTPS: as for `yace run` (the probe verifies the certificate the same way).
    #[command(flatten)]
    pub tls: crate::args::TlsArgs,
}

fn count_arg(s: &str) -> Result<u64, String> {
    match plan::parse_count("", s) {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{} ({})", e.problem, e.hint.unwrap_or_default())),
    }
}

fn sources_arg(s: &str) -> Result<plan::source::SourceAddrs, String> {
    plan::source::SourceAddrs::parse(s).map_err(|e| format!("{} ({})", e.problem, e.hint))
}

fn rate_arg(s: &str) -> Result<f64, String> {
    match plan::parse_amount(s) {
        Some(r) if r > 0.0 => Ok(r),
        _ => Err(format!(
            "'{s}' is not a positive number of connections per second (e.g. --rate 5000)"
        )),
    }
}

/// Runs the checks and prints them; exit 1 if any failed.
pub fn run(a: DoctorArgs) -> Result<u8, Failure> {
    let target = a
        .url
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| Failure::usage(format!("URL: {e} (e.g. http://127.0.0.1:8080/path)")))?;
    let checkup = Checkup {
        connections: a.connections,
        rate: a.rate,
        threads: a.threads.map(|t| t as usize),
        keepalive: !a.no_keepalive,
        sources: a.source_addrs.map(|s| s.0).unwrap_or_default(),
        tls: a.tls.options(),
        spelling: &crate::flags::RunFlags,
    };
    let f = gather(&checkup, target.as_ref());
    let mut out = std::io::stdout().lock();
    // A closed stdout (yace doctor | head) still gets the exit code.
    let _ = if a.json {
        let text = serde_json::to_string_pretty(&render::json(&f)).expect("JSON serializes");
        writeln!(out, "{text}")
    } else {
        render::text(&f, &mut out)
    };
    Ok(exit_code(&f))
}

/// 1 when a check failed (warnings allowed), else 0.
pub fn exit_code(f: &Findings) -> u8 {
    if f.failed() {
        exit::RUNTIME
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use host::{Check, Level};

    pub(crate) fn findings(checks: Vec<Check>) -> Findings {
        Findings {
            connections: 50,
            threads: 2,
            keepalive: true,
            rate: None,
            sources: Vec::new(),
            url: None,
            target: None,
            probe: None,
            checks,
        }
    }

    #[test]
    fn exit_code_is_1_only_with_a_failure() {
        let ok = Check::new("a", Level::Ok, "fine".into());
        let warn = Check::new("b", Level::Warn, "hm".into()).fix("do x".into());
        let fail = Check::new("c", Level::Fail, "bad".into()).fix("do y".into());
        assert_eq!(exit_code(&findings(vec![ok.clone(), warn.clone()])), 0);
        assert_eq!(exit_code(&findings(vec![ok, warn, fail])), 1);
    }

    #[test]
    fn count_and_rate_flags() {
        assert_eq!(count_arg("10k"), Ok(10_000));
        assert!(count_arg("0").is_err());
        assert!(count_arg("lots")
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(rate_arg("2.5"), Ok(2.5));
        assert!(rate_arg("-1").is_err());
    }
}
