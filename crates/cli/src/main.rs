//! The `yace` binary: parses arguments, runs the command, maps the outcome
//! to an exit code. The only crate that prints.

mod ab;
mod args;
mod doctor;
mod environment;
mod run;
mod scenario;
mod signals;

use clap::Parser;
use std::process::ExitCode;

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

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let result = match cli.command {
        args::Command::Run(a) => run::run(*a),
        args::Command::Ab(a) => ab::run(*a),
        args::Command::Serve(a) => serve(a),
        args::Command::Doctor(a) => doctor::run(a),
        args::Command::Report(a) => render_report(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            for line in f.message.lines() {
                eprintln!("error: {line}");
            }
            ExitCode::from(f.code)
        }
    }
}

/// `yace report`: a saved result rendered again, from the JSON alone.
fn render_report(a: args::ReportArgs) -> Result<u8, Failure> {
    let shown = a.file.display();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| Failure::usage(format!("{shown}: cannot read: {e}")))?;
    let r = report::json::read(&text).map_err(|e| {
        Failure::usage(format!(
            "{shown}: {e}\n(yace report reads the file `yace run --json FILE` writes)"
        ))
    })?;
    let mut out: Vec<u8> = Vec::new();
    let written = match a.format {
        args::ReportFormat::Text => report::text::summary(&r, &mut out),
        args::ReportFormat::Markdown => report::markdown::report(&r, &mut out),
        args::ReportFormat::Csv => report::csv::series(&r, &mut out),
        args::ReportFormat::Json => report::json::write(&r, &mut out),
    };
    written.map_err(|e| Failure::runtime(format!("rendering {shown}: {e}")))?;
    match &a.output {
        Some(path) => std::fs::write(path, &out)
            .map_err(|e| Failure::runtime(format!("-o {}: cannot write: {e}", path.display())))?,
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(&out).and_then(|()| stdout.flush());
        }
    }
    Ok(exit::OK)
}

fn serve(a: args::ServeArgs) -> Result<u8, Failure> {
    let ip: std::net::IpAddr = a.bind.parse().map_err(|_| {
        Failure::usage(format!(
            "--bind: '{}' is not an IP address (e.g. 127.0.0.1 or ::1)",
            a.bind
        ))
    })?;
    let at_least_one = |flag: &str, value: &Option<String>, max: u64| {
        let Some(s) = value.as_deref() else {
            return Ok(None);
        };
        match plan::parse_count(flag, s) {
            Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
            Ok(_) => Err(Failure::usage(format!(
                "{flag}: '{s}' is out of range: use a whole number from 1 to {max}"
            ))),
            Err(e) => Err(Failure::usage(e.to_string())),
        }
    };
    let h2_max_streams = at_least_one("--h2-max-streams", &a.h2_max_streams, u32::MAX.into())?
        .map_or(target::H2_MAX_STREAMS, |n| n as u32);
    let config = target::Config {
        addr: std::net::SocketAddr::new(ip, a.port),
        threads: a.threads,
        h2_max_streams,
        h2_max_requests: at_least_one("--h2-max-requests", &a.h2_max_requests, u64::MAX)?,
    };
    let idle_close = match a.idle_close.as_deref() {
        None => None,
        Some(t) => Some(
            plan::parse_duration("--idle-close", t).map_err(|e| Failure::usage(e.to_string()))?,
        ),
    };
    let on_accept = match a.on_accept.as_deref() {
        None => None,
        Some("close") => Some(target::OnAccept::Close),
        Some("reset") => Some(target::OnAccept::Reset),
        Some(other) => {
            return Err(Failure::usage(format!(
                "--on-accept: '{other}' is not close or reset"
            )));
        }
    };
    let hostile = target::Hostile {
        on_accept,
        idle_close,
    };
    let tls = if a.tls {
        let id = target::TlsIdentity::self_signed()
            .map_err(|e| Failure::runtime(format!("--tls: cannot make a certificate: {e}")))?;
        if let Some(path) = &a.tls_cert_out {
            std::fs::write(path, &id.cert_pem).map_err(|e| {
                Failure::usage(format!(
                    "--tls-cert-out {}: cannot write: {e}",
                    path.display()
                ))
            })?;
        }
        Some(id)
    } else {
        None
    };
    target::serve_foreground_full(config, hostile, tls.as_ref()).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            " (another process listens there: pick another --port, or --port 0 for any free one)"
        } else {
            ""
        };
        Failure::runtime(format!("cannot listen on {ip}:{}: {e}{hint}", a.port))
    })?;
    Ok(exit::OK)
}
