//! `yace serve`: the embedded reference target in the foreground.

use crate::args::ServeArgs;
use crate::{exit, Failure};
use std::io::Write;

/// Serves until a signal; returns the exit code.
pub fn run(a: ServeArgs) -> Result<u8, Failure> {
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
        .map_or(serve::H2_MAX_STREAMS, |n| n as u32);
    let h2_max_requests = at_least_one("--h2-max-requests", &a.h2_max_requests, u64::MAX)?;
    let idle_close = match a.idle_close.as_deref() {
        None => None,
        Some(t) => Some(
            plan::parse_duration("--idle-close", t).map_err(|e| Failure::usage(e.to_string()))?,
        ),
    };
    let on_accept = match a.on_accept.as_deref() {
        None => None,
        Some("close") => Some(serve::OnAccept::Close),
        Some("reset") => Some(serve::OnAccept::Reset),
        Some(other) => {
            return Err(Failure::usage(format!(
                "--on-accept: '{other}' is not close or reset"
            )));
        }
    };
    let hostile = serve::Hostile {
        on_accept,
        idle_close,
    };
    let tls = if a.tls {
        let id = serve::TlsIdentity::self_signed()
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
    let config = serve::Config {
        addr: std::net::SocketAddr::new(ip, a.port),
        threads: a.threads,
        h2_max_streams,
        h2_max_requests,
        hostile,
        tls,
        unix: a.unix.clone(),
    };
    // The announcement a supervisor waits for, once the socket is bound
    // and the signals are watched.
    let announce = |server: &serve::Server| {
        let mut out = std::io::stdout().lock();
        let fingerprint = server.tls_fingerprint();
        if let Some(fp) = &fingerprint {
            writeln!(out, "yace serve: TLS certificate SHA-256 {fp}")?;
        }
        let scheme = if fingerprint.is_some() {
            "https"
        } else {
            "http"
        };
        if a.unix.is_some() {
            writeln!(out, "yace serve: listening on {}", server.url())?;
        } else {
            writeln!(
                out,
                "yace serve: listening on {scheme}://{}/",
                server.local_addr()
            )?;
        }
        out.flush()
    };
    serve::serve_until_signal(config, announce).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            " (another process listens there: pick another --port, or --port 0 for any free one)"
        } else {
            ""
        };
        match &a.unix {
            Some(p) => Failure::runtime(format!("cannot listen on {}: {e}", p.display())),
            None => Failure::runtime(format!("cannot listen on {ip}:{}: {e}{hint}", a.port)),
        }
    })?;
    Ok(exit::OK)
}
