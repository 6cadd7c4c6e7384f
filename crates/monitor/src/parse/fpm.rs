//! php-fpm's pool status page (`pm.status_path`), as JSON (`?json`) or as
//! its default plain text (`key:   value` lines; with `?full` a section per
//! process follows a line of `*`: [`parse_full`] reads each one's state
//! and request URI, and [`net_of_own_request`] takes the status request's
//! own child out of the pool's figures).
//!
//! Gauges (`count`): `listen_queue`, `max_listen_queue`, `listen_queue_len`,
//! `idle_processes`, `active_processes`, `total_processes`,
//! `max_active_processes`. Counters (`count`): `accepted_conn`,
//! `max_children_reached`, `slow_requests`. The `max_*` gauges are highs
//! since the pool started, as php-fpm reports them. A key this php-fpm does
//! not print leaves its field out; the four that every version prints are
//! required.

use serde_json::Value;

use crate::reading::Reading;

use super::{excerpt, looks_like_markup};

/// (key on the page, field, counter?) in the Reading's order.
const FIELDS: [(&str, &str, bool); 10] = [
    ("listen queue", "listen_queue", false),
    ("max listen queue", "max_listen_queue", false),
    ("listen queue len", "listen_queue_len", false),
    ("idle processes", "idle_processes", false),
    ("active processes", "active_processes", false),
    ("total processes", "total_processes", false),
    ("max active processes", "max_active_processes", false),
    ("accepted conn", "accepted_conn", true),
    ("max children reached", "max_children_reached", true),
    ("slow requests", "slow_requests", true),
];

/// Keys every php-fpm since 5.3 prints: a page without them is cut short or
/// not php-fpm's.
const REQUIRED: [&str; 4] = [
    "accepted conn",
    "idle processes",
    "active processes",
    "total processes",
];

const HINT: &str = "the URL should be the pool's pm.status_path with ?json (e.g. /status?json)";

/// Parses a php-fpm status page, JSON or plain text.
pub fn parse(body: &str) -> Result<Reading, String> {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return Err(format!(
            "the response is empty, not a php-fpm status page: {HINT}"
        ));
    }
    if trimmed.starts_with("<?xml") {
        return Err("got php-fpm's XML status (?xml): ask for ?json instead".to_string());
    }
    if looks_like_markup(body) {
        return Err(format!(
            "got an HTML page, not php-fpm's status: {HINT}, not ?html"
        ));
    }
    if trimmed.starts_with("# HELP phpfpm_") || trimmed.starts_with("# TYPE phpfpm_") {
        return Err(
            "got php-fpm's ?openmetrics output: ask for ?json instead (or read this URL as a \
             prom: source)"
                .to_string(),
        );
    }
    if trimmed == "File not found." || trimmed == "Primary script unknown" {
        return Err(format!(
            "php-fpm answered «{trimmed}»: the path is not the pool's pm.status_path \
             (set `pm.status_path = /status` in the pool, pass that path to php-fpm \
             unchanged, and ask for it with ?json)"
        ));
    }
    let values = if trimmed.starts_with('{') {
        from_json(trimmed)?
    } else {
        from_text(body)?
    };

    if values.iter().all(Option::is_none) {
        return Err(format!(
            "none of php-fpm's status keys ('accepted conn', 'active processes', …) is in the \
             response, so it is not a php-fpm status page (it starts «{}»): {HINT}",
            excerpt(body, 60)
        ));
    }
    for key in REQUIRED {
        let i = FIELDS.iter().position(|(k, _, _)| *k == key).unwrap_or(0);
        if values[i].is_none() {
            return Err(format!(
                "the php-fpm status has no '{key}' (the response was cut short?)"
            ));
        }
    }

    let mut r = Reading::new();
    for ((_, field, counter), value) in FIELDS.iter().zip(values) {
        let Some(v) = value else { continue };
        if *counter {
            r.counter(*field, "count", v);
        } else {
            r.gauge(*field, "count", v);
        }
    }
    Ok(r)
}

/// One process of a `?full` status: what php-fpm says its child is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    /// `Idle`, `Running`, `Reading headers`, `Finishing`, …
    pub state: String,
    /// The request it serves or last served, with its query.
    pub request_uri: String,
}

/// [`parse`], and the process list when the page has one (`?full`).
pub fn parse_full(body: &str) -> Result<(Reading, Option<Vec<Process>>), String> {
    let r = parse(body)?;
    let trimmed = body.trim();
    let procs = if trimmed.starts_with('{') {
        let doc: Value = serde_json::from_str(trimmed).map_err(|e| e.to_string())?;
        doc.get("processes").and_then(Value::as_array).map(|list| {
            list.iter()
                .map(|p| Process {
                    pid: p.get("pid").and_then(Value::as_u64).unwrap_or(0) as u32,
                    state: p
                        .get("state")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    request_uri: p
                        .get("request uri")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                })
                .collect()
        })
    } else {
        processes_of_text(body)
    };
    Ok((r, procs))
}

/// The `?full` blocks of a plain-text status, each after a line of `*`.
fn processes_of_text(body: &str) -> Option<Vec<Process>> {
    let mut procs: Vec<Process> = Vec::new();
    let mut seen_block = false;
    for line in body.lines() {
        if line.starts_with('*') {
            seen_block = true;
            procs.push(Process {
                pid: 0,
                state: String::new(),
                request_uri: String::new(),
            });
            continue;
        }
        let (Some(p), Some((key, value))) = (procs.last_mut(), line.split_once(':')) else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "pid" => p.pid = value.parse().unwrap_or(0),
            "state" => p.state = value.to_string(),
            "request URI" => p.request_uri = value.to_string(),
            _ => {}
        }
    }
    seen_block.then_some(procs)
}

/// Takes the status request's own child out of the pool's figures.
///
/// A status page served by the pool it describes (`pm.status_path`, read
/// through the web server or over FastCGI from the pool's own socket)
/// occupies one of the pool's children while php-fpm counts: `active
/// processes` includes it and `idle processes` misses it. The child whose
/// state is `Running` and whose request URI carries `marker` (a token the
/// reader put in the query) is that request. Sets `active_processes` and
/// `idle_processes` net of it, keeps php-fpm's own count as
/// `active_processes_raw`, and `status_through_pool` (1: a child of the
/// pool answered; 0: none did, the status came through `pm.status_listen`'s
/// own listener). Returns whether the pool answered.
pub fn net_of_own_request(r: &mut Reading, procs: &[Process], marker: &str) -> bool {
    let own = procs
        .iter()
        .filter(|p| p.state == "Running" && p.request_uri.contains(marker))
        .count() as f64;
    let raw = r.get("active_processes");
    let mut set = |name: &str, delta: f64| {
        if let Some(f) = r.fields.iter_mut().find(|f| f.name == name) {
            f.value = (f.value + delta).max(0.0);
        }
    };
    set("active_processes", -own);
    set("idle_processes", own);
    if let Some(raw) = raw {
        r.gauge("active_processes_raw", "count", raw);
    }
    r.gauge(
        "status_through_pool",
        "count",
        if own > 0.0 { 1.0 } else { 0.0 },
    );
    own > 0.0
}

/// The values of [`FIELDS`] in a `?json` body.
fn from_json(body: &str) -> Result<[Option<f64>; 10], String> {
    let doc: Value = serde_json::from_str(body).map_err(|e| {
        let cut = if e.is_eof() {
            " (the response was cut short?)"
        } else {
            ""
        };
        format!("the php-fpm status is not valid JSON: {e}{cut}")
    })?;
    let Value::Object(map) = doc else {
        return Err(format!(
            "the php-fpm status should be a JSON object, got «{}»: {HINT}",
            excerpt(body, 40)
        ));
    };
    let mut values = [None; 10];
    for (slot, (key, _, _)) in values.iter_mut().zip(FIELDS) {
        let Some(v) = map.get(key) else { continue };
        // php-fpm prints numbers; a string holding one is taken too.
        let n = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n.is_finite() => *slot = Some(n),
            _ => {
                return Err(format!(
                    "the php-fpm status's '{key}' is {}, not a number",
                    excerpt(&v.to_string(), 30)
                ))
            }
        }
    }
    Ok(values)
}

/// The values of [`FIELDS`] in a plain-text body.
fn from_text(body: &str) -> Result<[Option<f64>; 10], String> {
    let mut values = [None; 10];
    for line in body.lines() {
        // `?full` appends a block per process after a line of stars; its
        // keys (`start since`, `requests`, …) are the process's, not the
        // pool's.
        if line.starts_with('*') {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let Some(i) = FIELDS.iter().position(|(k, _, _)| *k == key) else {
            continue;
        };
        if values[i].is_some() {
            continue;
        }
        let value = value.trim();
        match value.parse::<f64>() {
            Ok(n) if n.is_finite() => values[i] = Some(n),
            _ => {
                return Err(format!(
                    "the php-fpm status's '{key}' is «{}», not a number",
                    excerpt(value, 30)
                ))
            }
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::Kind;

    const JSON: &str = include_str!("fixtures/fpm_status.json");
    const JSON_FULL: &str = include_str!("fixtures/fpm_status_full.json");
    const JSON_BUSY: &str = include_str!("fixtures/fpm_status_busy.json");
    const TEXT: &str = include_str!("fixtures/fpm_status.txt");
    const TEXT_FULL: &str = include_str!("fixtures/fpm_status_full.txt");
    const TEXT_BUSY: &str = include_str!("fixtures/fpm_status_busy.txt");
    const HTML: &str = include_str!("fixtures/fpm_status.html");
    const OPENMETRICS: &str = include_str!("fixtures/fpm_status_openmetrics.txt");

    fn names(r: &Reading) -> Vec<&str> {
        r.fields.iter().map(|f| f.name.as_str()).collect()
    }

    const ALL: [&str; 10] = [
        "listen_queue",
        "max_listen_queue",
        "listen_queue_len",
        "idle_processes",
        "active_processes",
        "total_processes",
        "max_active_processes",
        "accepted_conn",
        "max_children_reached",
        "slow_requests",
    ];

    #[test]
    fn real_json() {
        let r = parse(JSON).unwrap();
        assert_eq!(names(&r), ALL);
        assert_eq!(r.get("accepted_conn"), Some(5.0));
        assert_eq!(r.get("listen_queue_len"), Some(4096.0));
        assert_eq!(r.get("idle_processes"), Some(1.0));
        assert_eq!(r.get("active_processes"), Some(1.0));
        assert_eq!(r.get("total_processes"), Some(2.0));
        assert_eq!(r.get("max_children_reached"), Some(0.0));
        for f in &r.fields {
            assert_eq!(f.unit, "count");
            let counter = ["accepted_conn", "max_children_reached", "slow_requests"]
                .contains(&f.name.as_str());
            let want = if counter { Kind::Counter } else { Kind::Gauge };
            assert_eq!(f.kind, want, "{}", f.name);
        }
    }

    #[test]
    fn full_process_lists_json_and_text() {
        let (r, procs) = parse_full(JSON_FULL).unwrap();
        assert_eq!(r, parse(JSON_FULL).unwrap());
        let procs = procs.unwrap();
        assert_eq!(procs.len(), 2);
        assert_eq!(
            procs[1],
            Process {
                pid: 22668,
                state: "Running".into(),
                request_uri: "/fpm-status?json&full".into()
            }
        );
        let (_, text) = parse_full(TEXT_FULL).unwrap();
        let text = text.unwrap();
        assert_eq!(text.len(), 2);
        assert_eq!((text[0].pid, text[0].state.as_str()), (22667, "Idle"));
        assert_eq!(text[1].request_uri, "/fpm-status?full");
        // Without ?full there is no list (not an empty one).
        assert_eq!(parse_full(JSON).unwrap().1, None);
        assert_eq!(parse_full(TEXT).unwrap().1, None);
    }

    #[test]
    fn the_status_requests_own_child_is_subtracted() {
        // php-fpm 8.2, 2 children, read through nginx: ours is Running.
        let (mut r, procs) = parse_full(JSON_FULL).unwrap();
        assert!(net_of_own_request(&mut r, &procs.unwrap(), "json&full"));
        assert_eq!(r.get("active_processes"), Some(0.0));
        assert_eq!(r.get("idle_processes"), Some(2.0));
        assert_eq!(r.get("active_processes_raw"), Some(1.0));
        assert_eq!(r.get("total_processes"), Some(2.0));
        assert_eq!(r.get("status_through_pool"), Some(1.0));
        // Another reader's request (another token), or an idle child that
        // last served ours: not subtracted.
        let (mut r, procs) = parse_full(JSON_FULL).unwrap();
        let mut procs = procs.unwrap();
        assert!(!net_of_own_request(&mut r, &procs, "yace=1.7"));
        assert_eq!(r.get("active_processes"), Some(1.0));
        assert_eq!(r.get("status_through_pool"), Some(0.0));
        procs[1].state = "Idle".into();
        procs[0].request_uri = "/fpm-status?json&full&yace=1.7".into();
        let (mut r, _) = parse_full(JSON_FULL).unwrap();
        assert!(!net_of_own_request(&mut r, &procs, "yace=1.7"));
        assert_eq!(r.get("active_processes_raw"), Some(1.0));
    }

    #[test]
    fn real_json_full_ignores_processes() {
        let r = parse(JSON_FULL).unwrap();
        assert_eq!(names(&r), ALL);
        assert_eq!(r.get("accepted_conn"), Some(6.0));
    }

    #[test]
    fn real_busy_pool() {
        for body in [JSON_BUSY, TEXT_BUSY] {
            let r = parse(body).unwrap();
            assert_eq!(r.get("listen_queue"), Some(4.0));
            assert_eq!(r.get("max_listen_queue"), Some(8.0));
            assert_eq!(r.get("idle_processes"), Some(0.0));
            assert_eq!(r.get("active_processes"), Some(4.0));
            assert_eq!(r.get("max_active_processes"), Some(4.0));
        }
    }

    #[test]
    fn real_text() {
        let r = parse(TEXT).unwrap();
        assert_eq!(names(&r), ALL);
        assert_eq!(r.get("accepted_conn"), Some(4.0));
        assert_eq!(r.get("listen_queue_len"), Some(4096.0));
        assert_eq!(r.get("total_processes"), Some(2.0));
    }

    #[test]
    fn real_text_full_stops_at_the_processes() {
        let r = parse(TEXT_FULL).unwrap();
        assert_eq!(names(&r), ALL);
        assert_eq!(r.get("accepted_conn"), Some(8.0));
        assert_eq!(r.get("active_processes"), Some(1.0));
    }

    #[test]
    fn json_and_text_agree() {
        let json = "{\"pool\":\"www\",\"accepted conn\":12,\"listen queue\":3,\
                    \"idle processes\":0,\"active processes\":5,\"total processes\":5,\
                    \"max children reached\":2}";
        let text = "pool:                 www\naccepted conn:        12\n\
                    listen queue:         3\nidle processes:       0\n\
                    active processes:     5\ntotal processes:      5\n\
                    max children reached: 2\n";
        let a = parse(json).unwrap();
        assert_eq!(a, parse(text).unwrap());
        // Keys an older php-fpm lacks are left out, not zero.
        assert_eq!(a.get("slow_requests"), None);
        assert_eq!(a.get("max_children_reached"), Some(2.0));
        assert_eq!(a.fields.len(), 6);
    }

    #[test]
    fn crlf_text() {
        let r = parse(&TEXT.replace('\n', "\r\n")).unwrap();
        assert_eq!(r, parse(TEXT).unwrap());
    }

    #[test]
    fn other_formats_are_named() {
        let e = parse(HTML).unwrap_err();
        assert!(e.contains("HTML") && e.contains("?json"), "{e}");
        let e = parse(OPENMETRICS).unwrap_err();
        assert!(e.contains("?openmetrics") && e.contains("?json"), "{e}");
        let e = parse("<?xml version=\"1.0\" ?>\n<status>\n<pool>www</pool>").unwrap_err();
        assert!(e.contains("XML") && e.contains("?json"), "{e}");
        let e = parse("File not found.\n").unwrap_err();
        assert!(e.contains("pm.status_path"), "{e}");
    }

    #[test]
    fn garbage_is_refused() {
        let e = parse("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = parse("Active connections: 1 \n").unwrap_err();
        assert!(e.contains("not a php-fpm status page"), "{e}");
        assert!(e.contains("«Active connections: 1»"), "{e}");
        let e = parse("{\"status\": \"ok\"}").unwrap_err();
        assert!(e.contains("not a php-fpm status page"), "{e}");
        let e = parse("[1, 2]").unwrap_err();
        assert!(e.contains("not a php-fpm status page"), "{e}");
        let e = parse("{]").unwrap_err();
        assert!(e.starts_with("the php-fpm status is not valid JSON"), "{e}");
        assert!(!e.contains("cut short"), "{e}");
    }

    #[test]
    fn truncated_bodies() {
        let e = parse(&JSON[..JSON.len() / 2]).unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
        assert!(e.contains("cut short"), "{e}");

        let cut = &TEXT[..TEXT.find("total processes").unwrap()];
        let e = parse(cut).unwrap_err();
        assert_eq!(
            e,
            "the php-fpm status has no 'total processes' (the response was cut short?)"
        );

        let cut = &TEXT[..TEXT.find("max active").unwrap() - 4];
        let e = parse(cut).unwrap_err();
        assert!(e.contains("'total processes' is «»"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let e = parse(&JSON.replace("\"listen queue\":0", "\"listen queue\":null")).unwrap_err();
        assert_eq!(
            e,
            "the php-fpm status's 'listen queue' is null, not a number"
        );
        let e = parse(&TEXT.replace("slow requests:        0", "slow requests:        lots"))
            .unwrap_err();
        assert_eq!(
            e,
            "the php-fpm status's 'slow requests' is «lots», not a number"
        );
        // A number in a string is read.
        let r = parse(&JSON.replace("\"listen queue\":0", "\"listen queue\":\"7\"")).unwrap();
        assert_eq!(r.get("listen_queue"), Some(7.0));
    }
}
