//! Apache's mod_status page in its machine-readable form,
//! `/server-status?auto`: `Key: value` lines (the first line is the server's
//! name, without a colon) ending in the scoreboard, one character per worker
//! slot.
//!
//! Gauges (`count`): `busy_workers`, `idle_workers`; where the MPM reports
//! them (event and worker: `Processes`; event: `ConnsTotal`,
//! `ConnsAsync*`) `processes`, `conns_total`, `conns_async_writing`,
//! `conns_async_keep_alive`, `conns_async_closing`; and, with a scoreboard,
//! the slots in each state (`sb_waiting` … `sb_open`) and `sb_slots`, the
//! scoreboard's length. Counters, with `ExtendedStatus On` (the default
//! since 2.4): `total_accesses` (`count`) and `total_bytes` (`bytes`, from
//! `Total kBytes`). Other lines are ignored.

use std::collections::HashMap;

use crate::reading::Reading;

use super::{excerpt, looks_like_markup};

/// Scoreboard characters and the gauge counting them, in mod_status's order.
const SCOREBOARD: [(char, &str); 11] = [
    ('_', "sb_waiting"),
    ('S', "sb_starting"),
    ('R', "sb_reading"),
    ('W', "sb_writing"),
    ('K', "sb_keepalive"),
    ('D', "sb_dns"),
    ('C', "sb_closing"),
    ('L', "sb_logging"),
    ('G', "sb_finishing"),
    ('I', "sb_idle_cleanup"),
    ('.', "sb_open"),
];

/// Gauges read as they are when present: (line key, field).
const OPTIONAL_GAUGES: [(&str, &str); 5] = [
    ("Processes", "processes"),
    ("ConnsTotal", "conns_total"),
    ("ConnsAsyncWriting", "conns_async_writing"),
    ("ConnsAsyncKeepAlive", "conns_async_keep_alive"),
    ("ConnsAsyncClosing", "conns_async_closing"),
];

/// Parses a `server-status?auto` body.
pub fn parse(body: &str) -> Result<Reading, String> {
    if looks_like_markup(body) {
        return Err(
            "got an HTML page, not Apache mod_status ?auto output: add ?auto to the URL \
             (e.g. http://host/server-status?auto)"
                .to_string(),
        );
    }
    let mut lines: HashMap<&str, &str> = HashMap::new();
    for line in body.lines() {
        if let Some((key, value)) = line.split_once(':') {
            // The first of a repeated key counts.
            lines.entry(key.trim()).or_insert(value.trim());
        }
    }

    let (busy, idle) =
        match (lines.get("BusyWorkers"), lines.get("IdleWorkers")) {
            (Some(b), Some(i)) => (number("BusyWorkers", b)?, number("IdleWorkers", i)?),
            (None, None) if body.trim().is_empty() => {
                return Err(
                    "the response is empty, not Apache mod_status ?auto output: \
                 the URL should end in /server-status?auto"
                        .to_string(),
                )
            }
            (None, None) => {
                return Err(format!(
                    "no BusyWorkers or IdleWorkers line, so this is not Apache mod_status ?auto \
                 output (it starts «{}»): the URL should end in /server-status?auto",
                    excerpt(body, 60)
                ))
            }
            (None, Some(_)) => {
                return Err("a BusyWorkers line is missing (the response was cut short?)".into())
            }
            (Some(_), None) => return Err(
                "an IdleWorkers line is missing after BusyWorkers (the response was cut short?)"
                    .into(),
            ),
        };

    let mut r = Reading::new();
    r.gauge("busy_workers", "count", busy);
    r.gauge("idle_workers", "count", idle);
    for (key, field) in OPTIONAL_GAUGES {
        if let Some(v) = lines.get(key) {
            r.gauge(field, "count", number(key, v)?);
        }
    }
    if let Some(board) = lines.get("Scoreboard") {
        for (c, field) in SCOREBOARD {
            let n = board.chars().filter(|&x| x == c).count();
            r.gauge(field, "count", n as f64);
        }
        r.gauge("sb_slots", "count", board.chars().count() as f64);
    }
    if let Some(v) = lines.get("Total Accesses") {
        r.counter("total_accesses", "count", number("Total Accesses", v)?);
    }
    if let Some(v) = lines.get("Total kBytes") {
        r.counter("total_bytes", "bytes", number("Total kBytes", v)? * 1024.0);
    }
    Ok(r)
}

/// A value of a `Key: value` line: a finite number.
fn number(key: &str, text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{key} is «{}», not a number", excerpt(text, 30))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::Kind;

    const EVENT: &str = include_str!("fixtures/apache_auto_event.txt");
    const PREFORK: &str = include_str!("fixtures/apache_auto_prefork.txt");
    const WORKER_NO_EXTENDED: &str = include_str!("fixtures/apache_auto_worker_noext.txt");
    const HTML: &str = include_str!("fixtures/apache_status.html");

    fn names(r: &Reading) -> Vec<&str> {
        r.fields.iter().map(|f| f.name.as_str()).collect()
    }

    fn field<'a>(r: &'a Reading, name: &str) -> &'a crate::reading::Field {
        r.fields.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn real_event_mpm() {
        let r = parse(EVENT).unwrap();
        assert_eq!(r.get("busy_workers"), Some(4.0));
        assert_eq!(r.get("idle_workers"), Some(28.0));
        assert_eq!(r.get("processes"), Some(4.0));
        assert_eq!(r.get("conns_total"), Some(3.0));
        assert_eq!(r.get("conns_async_writing"), Some(0.0));
        assert_eq!(r.get("conns_async_keep_alive"), Some(2.0));
        assert_eq!(r.get("conns_async_closing"), Some(0.0));
        // Scoreboard: ____R___________R_________RW____
        assert_eq!(r.get("sb_slots"), Some(32.0));
        assert_eq!(r.get("sb_waiting"), Some(28.0));
        assert_eq!(r.get("sb_reading"), Some(3.0));
        assert_eq!(r.get("sb_writing"), Some(1.0));
        assert_eq!(r.get("sb_keepalive"), Some(0.0));
        assert_eq!(r.get("sb_open"), Some(0.0));
        assert_eq!(r.get("total_accesses"), Some(57.0));
        assert_eq!(r.get("total_bytes"), Some(26.0 * 1024.0));
        assert_eq!(
            names(&r),
            [
                "busy_workers",
                "idle_workers",
                "processes",
                "conns_total",
                "conns_async_writing",
                "conns_async_keep_alive",
                "conns_async_closing",
                "sb_waiting",
                "sb_starting",
                "sb_reading",
                "sb_writing",
                "sb_keepalive",
                "sb_dns",
                "sb_closing",
                "sb_logging",
                "sb_finishing",
                "sb_idle_cleanup",
                "sb_open",
                "sb_slots",
                "total_accesses",
                "total_bytes",
            ]
        );
        assert_eq!(field(&r, "total_accesses").kind, Kind::Counter);
        assert_eq!(field(&r, "total_accesses").unit, "count");
        assert_eq!(field(&r, "total_bytes").kind, Kind::Counter);
        assert_eq!(field(&r, "total_bytes").unit, "bytes");
        assert_eq!(field(&r, "busy_workers").kind, Kind::Gauge);
        assert_eq!(field(&r, "sb_waiting").kind, Kind::Gauge);
        // Every scoreboard slot is counted in exactly one state here.
        let states: f64 = SCOREBOARD.iter().map(|(_, f)| r.get(f).unwrap()).sum();
        assert_eq!(states, 32.0);
    }

    #[test]
    fn real_prefork_has_no_processes_or_async_connections() {
        let r = parse(PREFORK).unwrap();
        assert_eq!(r.get("busy_workers"), Some(8.0));
        assert_eq!(r.get("idle_workers"), Some(0.0));
        for absent in ["processes", "conns_total", "conns_async_writing"] {
            assert_eq!(r.get(absent), None, "{absent}");
        }
        // Scoreboard: WCRCCRCR
        assert_eq!(r.get("sb_slots"), Some(8.0));
        assert_eq!(r.get("sb_writing"), Some(1.0));
        assert_eq!(r.get("sb_closing"), Some(4.0));
        assert_eq!(r.get("sb_reading"), Some(3.0));
        assert_eq!(r.get("total_accesses"), Some(26.0));
        assert_eq!(r.get("total_bytes"), Some(11.0 * 1024.0));
    }

    #[test]
    fn real_worker_without_extended_status_has_no_totals() {
        let r = parse(WORKER_NO_EXTENDED).unwrap();
        assert_eq!(r.get("busy_workers"), Some(10.0));
        assert_eq!(r.get("idle_workers"), Some(22.0));
        assert_eq!(r.get("total_accesses"), None);
        assert_eq!(r.get("total_bytes"), None);
        assert_eq!(r.get("processes"), None);
        // Scoreboard: KKRW____KR_____KKR_____K________
        assert_eq!(r.get("sb_keepalive"), Some(6.0));
        assert_eq!(r.get("sb_reading"), Some(3.0));
        assert_eq!(r.get("sb_writing"), Some(1.0));
        assert_eq!(r.get("sb_waiting"), Some(22.0));
        assert_eq!(r.get("sb_slots"), Some(32.0));
    }

    #[test]
    fn every_scoreboard_state_is_counted() {
        let body = "BusyWorkers: 1\nIdleWorkers: 2\nScoreboard: _SRWKDCLGI.._?\n";
        let r = parse(body).unwrap();
        for (c, field) in SCOREBOARD {
            let want = if c == '_' || c == '.' { 2.0 } else { 1.0 };
            assert_eq!(r.get(field), Some(want), "{field}");
        }
        // An unknown state character still takes a slot.
        assert_eq!(r.get("sb_slots"), Some(14.0));
    }

    #[test]
    fn apache_2_2_output_and_crlf() {
        // 2.2's ?auto: no server-name line, no Processes, a CPULoad line.
        let body = "Total Accesses: 2000\r\nTotal kBytes: 1.5\r\nCPULoad: .0123\r\n\
                    Uptime: 600\r\nReqPerSec: 3.33\r\nBusyWorkers: 5\r\nIdleWorkers: 7\r\n\
                    Scoreboard: W____W___.\r\n";
        let r = parse(body).unwrap();
        assert_eq!(r.get("busy_workers"), Some(5.0));
        assert_eq!(r.get("total_bytes"), Some(1536.0));
        assert_eq!(r.get("sb_slots"), Some(10.0));
        assert_eq!(r.get("sb_open"), Some(1.0));
    }

    #[test]
    fn html_page_asks_for_auto() {
        let e = parse(HTML).unwrap_err();
        assert!(e.contains("HTML"), "{e}");
        assert!(e.contains("add ?auto to the URL"), "{e}");
    }

    #[test]
    fn garbage_and_other_pages_are_refused() {
        let e = parse("Active connections: 1 \nserver accepts handled requests\n").unwrap_err();
        assert!(e.contains("no BusyWorkers or IdleWorkers line"), "{e}");
        assert!(e.contains("/server-status?auto"), "{e}");
        assert!(e.contains("«Active connections: 1"), "{e}");
        let e = parse("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = parse("\u{0}\u{1}binary").unwrap_err();
        assert!(e.contains("not Apache mod_status"), "{e}");
    }

    #[test]
    fn truncated_bodies() {
        let cut = &EVENT[..EVENT.find("IdleWorkers").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.contains("IdleWorkers line is missing"), "{e}");
        assert!(e.contains("cut short"), "{e}");

        let cut = &EVENT[..EVENT.find("BusyWorkers").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.contains("no BusyWorkers or IdleWorkers"), "{e}");

        // Cut after the workers: what is there is read, the rest is absent.
        let cut = &EVENT[..EVENT.find("Processes").unwrap()];
        let r = parse(cut).unwrap();
        assert_eq!(r.get("idle_workers"), Some(28.0));
        assert_eq!(r.get("sb_slots"), None);

        // A line cut inside its value.
        let e = parse("BusyWorkers: 4\nIdleWorkers: \n").unwrap_err();
        assert_eq!(e, "IdleWorkers is «», not a number");
    }

    #[test]
    fn bad_numbers_are_named() {
        let e = parse(&EVENT.replace("ConnsTotal: 3", "ConnsTotal: many")).unwrap_err();
        assert_eq!(e, "ConnsTotal is «many», not a number");
        let e = parse(&EVENT.replace("Total kBytes: 26", "Total kBytes: NaN")).unwrap_err();
        assert_eq!(e, "Total kBytes is «NaN», not a number");
    }

    #[test]
    fn repeated_keys_keep_the_first() {
        let r = parse("BusyWorkers: 1\nIdleWorkers: 2\nBusyWorkers: 9\n").unwrap();
        assert_eq!(r.get("busy_workers"), Some(1.0));
    }
}
