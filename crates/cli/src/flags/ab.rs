//! `yace ab`'s flags as a plan: ab's own checks, then the shared ones.

use super::parts::{assemble, closed, parse_target, request, Settings};
use super::spelling::AbFlags;
use crate::args::AbArgs;
use crate::Failure;
use plan::{Diagnostics, Field, Plan, PlanBuilder, Proxy, TlsOptions};
use std::time::Duration;

/// `Basic base64(user:pass)` (RFC 7617), for ab's `-A` and `-P`.
fn basic_auth(userpass: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = userpass.as_bytes();
    let mut out = String::from("Basic ");
    for chunk in b.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Seconds as ab gives them, as a duration; `None` (and an error keyed to
/// `field`) when they do not fit one.
fn seconds(b: &mut PlanBuilder, field: Field, s: f64) -> Option<Duration> {
    match Duration::try_from_secs_f64(s) {
        Ok(d) => Some(d),
        Err(_) => {
            b.error(
                field,
                format!("'{s}' is not a duration"),
                Some("use a number with a unit: 500ms, 30s, 2m, 1h"),
            );
            None
        }
    }
}

/// `yace ab`'s flags as a plan: ab's own checks first, then the shared ones,
/// every problem reported at once in ab's flag names.
pub fn ab_plan(a: &AbArgs, url: &str) -> Result<Plan, Failure> {
    ab_plan_keyed(a, url).map_err(|e| Failure::usage(e.render(&AbFlags)))
}

fn ab_plan_keyed(a: &AbArgs, url: &str) -> Result<Plan, Diagnostics> {
    let mut ab = PlanBuilder::new();
    if let Some(p) = a
        .ssl_protocol
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case("ALL"))
    {
        ab.error(
            "-f",
            format!("'{p}' cannot be forced: yace negotiates TLS 1.2 or 1.3 (SSL2/3, TLS 1.0/1.1 are unsafe and unsupported)"),
            Some("drop -f, or use -f ALL"),
        );
    }
    if a.ssl_cipher.is_some() {
        ab.error(
            "-Z",
            "cipher suites cannot be chosen: yace uses rustls's safe defaults",
            Some("drop -Z"),
        );
    }
    if a.verbosity.is_some_and(|v| v >= 4) {
        ab.error(
            "-v",
            "printing response headers (-v 4) is not supported",
            Some("use curl -v URL to see them"),
        );
    }
    if a.postfile.is_some() && a.putfile.is_some() {
        ab.error(
            "-p/-u",
            "give either a POST file or a PUT file, not both",
            None,
        );
    }
    let timeout_ok = a.timeout > 0.0 && a.timeout.is_finite();
    if !timeout_ok {
        ab.error(
            "-s",
            format!("'{}' is not a positive number of seconds", a.timeout),
            Some("e.g. -s 30"),
        );
    }
    let timelimit_ok = a.timelimit.is_none_or(|t| t > 0.0 && t.is_finite());
    if !timelimit_ok {
        ab.error(
            "-t",
            "the time limit must be a positive number of seconds",
            Some("e.g. -t 60"),
        );
    }
    let proxy = a.proxy.as_deref().and_then(|p| {
        let parsed = p
            .rsplit_once(':')
            .and_then(|(h, port)| Some((h, port.parse::<u16>().ok()?)));
        match parsed {
            Some((h, port)) if !h.is_empty() => Some(Proxy {
                host: h.trim_matches(['[', ']']).to_owned(),
                port,
            }),
            _ => {
                ab.error(
                    "-X",
                    format!("'{p}' is not proxy:port"),
                    Some("e.g. -X 127.0.0.1:3128"),
                );
                None
            }
        }
    });
    let body_file = a.postfile.as_deref().or(a.putfile.as_deref());
    let method = match (&a.method, a.head, &a.postfile, &a.putfile) {
        (Some(m), _, _, _) => m.as_str(),
        (None, true, _, _) => "HEAD",
        (None, _, Some(_), _) => "POST",
        (None, _, _, Some(_)) => "PUT",
        _ => "GET",
    };
    let mut headers = a.headers.clone();
    if !a.cookies.is_empty() {
        headers.push(format!("Cookie: {}", a.cookies.join("; ")));
    }
    if let Some(up) = &a.auth {
        headers.push(format!("Authorization: {}", basic_auth(up)));
    }
    if let Some(up) = &a.proxy_auth {
        headers.push(format!("Proxy-Authorization: {}", basic_auth(up)));
    }
    if body_file.is_some() || a.content_type.is_some() {
        let has_ct = headers
            .iter()
            .any(|h| h.to_ascii_lowercase().starts_with("content-type:"));
        if !has_ct {
            headers.push(format!(
                "Content-Type: {}",
                a.content_type.as_deref().unwrap_or("text/plain")
            ));
        }
    }
    // -n defaults to 1, unless -t gives the run a time limit instead.
    let requests = match (a.requests, a.timelimit) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(1),
    };

    // The checks every front end shares, collected on their own so ab's
    // problems above and these are all reported.
    let mut b = PlanBuilder::new();
    let target = parse_target(&mut b, url);
    let duration = a
        .timelimit
        .filter(|_| timelimit_ok)
        .and_then(|t| seconds(&mut b, Field::Duration, t));
    // ab's -s bounds both the connect and the whole request (at least 1 ms).
    let timeout = timeout_ok
        .then(|| seconds(&mut b, Field::Timeout, a.timeout.max(0.001)))
        .flatten();
    let request = request(&mut b, method, &headers, None, body_file);
    let shared = match target {
        // A bad -s or -t is reported above; no plan is checked without it.
        Some(target) if !b.has_errors() && timeout_ok && timelimit_ok => {
            let settings = Settings {
                threads: a.threads.map(|t| t as u64),
                keepalive: a.keepalive,
                timeout,
                connect_timeout: timeout,
                tls: TlsOptions {
                    cert: a.ssl_cert.clone().or_else(|| a.tls.cert.clone()),
                    key: a.ssl_cert.clone().or_else(|| a.tls.key.clone()),
                    ..a.tls.options()
                },
                streams: None,
                secrets: a.secrets.secrets(),
                limits: Default::default(),
                timer_slack: None,
            };
            let load = closed(a.concurrency, requests, duration);
            b.finish(
                Some(assemble(target, request, load, requests, settings)),
                &AbFlags,
            )
        }
        _ => b.finish(None, &AbFlags),
    };
    match (shared, ab.has_errors()) {
        (Ok(mut p), false) => {
            p.socket.bind = a.bind;
            p.socket.buffer = a.window;
            p.socket.proxy = proxy;
            Ok(p)
        }
        (Ok(_), true) => ab.finish(None, &AbFlags),
        (Err(e), _) => {
            let mut all = ab
                .finish(None, &AbFlags)
                .err()
                .map(|x| x.0)
                .unwrap_or_default();
            all.extend(e.0);
            Err(Diagnostics(all))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_rfc_7617() {
        assert_eq!(
            basic_auth("Aladdin:open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(basic_auth("a:b"), "Basic YTpi");
        assert_eq!(basic_auth("ab:c"), "Basic YWI6Yw==");
    }
}
