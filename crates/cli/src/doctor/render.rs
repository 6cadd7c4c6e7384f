//! The two outputs of `yace doctor`: the checklist for people, one JSON
//! document (`yace.doctor.v1`) for scripts. Pure: they write what
//! [`Findings`] holds.

use super::exit_code;
use ::run::doctor::Findings;
use ::run::probe::{self, Framing};
use host::Level;
use serde_json::{json, Value};
use std::io::Write;
use std::time::Duration;

pub fn text(f: &Findings, w: &mut impl Write) -> std::io::Result<()> {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    writeln!(
        w,
        "yace doctor: {} {}, {}, {}{}{}",
        report::count(f.connections),
        if f.connections == 1 {
            "connection"
        } else {
            "connections"
        },
        plural(f.threads, "thread", "threads"),
        if f.keepalive {
            "keep-alive"
        } else {
            "new connection per request"
        },
        f.rate
            .map(|r| format!(", {} new connections/s", report::count(r.round() as u64)))
            .unwrap_or_default(),
        match f.sources.len() {
            0 => String::new(),
            1 => format!(", from {}", f.sources[0]),
            n => format!(", from {} source addresses", report::count(n as u64)),
        }
    )?;
    if let Some(u) = &f.url {
        writeln!(w, "  target {u}")?;
    }
    writeln!(w)?;
    for c in &f.checks {
        writeln!(w, "{:<4}  {:<10}  {}", c.level.as_str(), c.name, c.finding)?;
        for d in &c.details {
            writeln!(w, "      {d}")?;
        }
        for (i, fix) in c.fix.iter().enumerate() {
            let label = if i == 0 { "fix:" } else { "    " };
            writeln!(w, "      {label} {fix}")?;
        }
    }
    let (warn, fail) = (f.count(Level::Warn), f.count(Level::Fail));
    writeln!(w)?;
    writeln!(
        w,
        "{} ok, {}, {}{}",
        f.count(Level::Ok),
        plural(warn, "warning", "warnings"),
        plural(fail, "failure", "failures"),
        if fail > 0 {
            ": fix the failures before a big run (exit 1)"
        } else {
            ""
        }
    )
}

fn phases_json(p: &probe::Phases) -> Value {
    let m = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    json!({
        "dns": m(p.dns),
        "connect": m(p.connect),
        "tls": m(p.tls),
        "wait": m(p.wait),
        "receive": m(p.receive),
        "total": m(p.total()),
    })
}

pub fn json(f: &Findings) -> Value {
    let probe = f.probe.as_ref().map(|r| match r {
        Ok(p) => json!({
            "ok": true,
            "status": p.head.status,
            "status_line": p.head.status_line,
            "server": p.head.server,
            "framing": match p.head.framing {
                Framing::ContentLength(_) => "content-length",
                Framing::Chunked => "chunked",
                Framing::UntilClose => "until-close",
                Framing::NoBody => "none",
            },
            "content_length": match p.head.framing {
                Framing::ContentLength(n) => Some(n),
                _ => None,
            },
            "body_bytes": p.body_len,
            "keep_alive": p.keep_alive,
            "location": p.head.location,
            "phases_ms": phases_json(&p.phases),
        }),
        Err(e) => json!({
            "ok": false,
            "outcome": e.outcome.name(),
            "explanation": e.outcome.explain(),
            "detail": e.detail,
            "phases_ms": phases_json(&e.phases),
        }),
    });
    json!({
        "schema": "yace.doctor.v1",
        "plan": {
            "url": f.url,
            "connections": f.connections,
            "threads": f.threads,
            "keepalive": f.keepalive,
            "rate": f.rate,
            "source_addrs": f.sources.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        },
        "target": f.target.map(|(addr, local)| json!({
            "address": addr.to_string(),
            "local": local.is_some(),
            "why_local": local,
        })),
        "probe": probe,
        "checks": f.checks.iter().map(|c| json!({
            "name": c.name,
            "level": c.level.as_str(),
            "finding": c.finding,
            "details": c.details,
            "fix": c.fix,
        })).collect::<Vec<_>>(),
        "summary": {
            "ok": f.count(Level::Ok),
            "warn": f.count(Level::Warn),
            "fail": f.count(Level::Fail),
        },
        "exit_code": exit_code(f),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::findings;
    use super::*;
    use host::Check;

    #[test]
    fn checklist_layout() {
        let f = findings(vec![
            Check::new("open_files", Level::Ok, "fine".into()),
            Check::new("ports", Level::Fail, "too few".into())
                .fix("sysctl -w a=b".into())
                .fix("# or this".into()),
        ]);
        let mut out = Vec::new();
        text(&f, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\nok    open_files  fine\n"), "{text}");
        assert!(
            text.contains(
                "\nfail  ports       too few\n      fix: sysctl -w a=b\n           # or this\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "1 ok, 0 warnings, 1 failure: fix the failures before a big run (exit 1)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn json_document() {
        let f = findings(vec![
            Check::new("ports", Level::Warn, "few".into()).fix("x".into())
        ]);
        let v = json(&f);
        assert_eq!(v["schema"], "yace.doctor.v1");
        assert_eq!(v["checks"][0]["level"], "warn");
        assert_eq!(v["checks"][0]["fix"][0], "x");
        assert_eq!(v["summary"]["warn"], 1);
        assert_eq!(v["exit_code"], 0);
        assert!(v["probe"].is_null() && v["target"].is_null());
    }
}
