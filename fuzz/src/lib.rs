//! Shared by the fuzz targets (see fuzz_targets/ and README.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use yace_scenario::{Action, Format};

/// The folder scenario files are read relative to: a few small data files
/// (`accounts.csv`, `ids.csv`, `order.json`) so `[[data]]` and body files
/// can resolve.
pub fn scenario_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenario-files"))
}

/// Input: scenario text, optionally followed by a NUL and the raw bytes of a
/// response that every request of the scenario gets back.
///
/// Invariants: `parse` never panics; every diagnostic about the scenario
/// text points into it (line ≥ 1 and column ≥ 1, line at most one past the
/// last, counting a lone CR as a break as YAML does); a valid scenario's
/// runner, driven for two users over a few dozen actions with that
/// response, never panics.
pub fn check_scenario(data: &[u8], format: Format) {
    let (text, response) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"[..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let origin = "fuzz.scenario";
    let env = BTreeMap::new();
    match yace_scenario::parse(text, format, origin, scenario_dir(), &env) {
        Err(d) => {
            assert!(!d.0.is_empty(), "Err with no diagnostics");
            let lines = line_count(text);
            for e in &d.0 {
                // Data files named by the scenario get their own file name
                // and positions; only the scenario text is checked here.
                if e.file() != Some(origin) {
                    continue;
                }
                assert!(
                    e.line() >= 1 && e.column() >= 1,
                    "diagnostic without a place: {e}"
                );
                assert!(
                    e.line() <= lines + 1,
                    "diagnostic at line {} of a {lines}-line text: {e}",
                    e.line()
                );
            }
        }
        Ok(s) => {
            let _ = s.to_json();
            let _ = s.steps();
            let _ = s.load_spec();
            let mut r = s.runner();
            let mut out = Vec::new();
            for index in 0..2 {
                let mut u = r.new_user(index);
                for _ in 0..40 {
                    match r.next(&mut u, &mut out) {
                        Action::Request { step, .. } => {
                            assert!(!out.is_empty(), "a request with no bytes");
                            let status = status_of(response);
                            let typed =
                                yace_scenario::Captured::from_http1(response, false, status);
                            r.response(
                                &mut u,
                                step,
                                status,
                                Some(&typed),
                                Duration::from_millis(1),
                            );
                        }
                        Action::Think(_) | Action::EndIteration => {}
                    }
                }
            }
            let _ = r.counters();
        }
    }
}

/// Lines in `text`, counting every break a parser may count: LF, CR LF, a
/// lone CR (a YAML line break), NEL, LS and PS.
fn line_count(text: &str) -> usize {
    let mut n = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                n += 1;
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => n += 1,
            _ => {}
        }
    }
    n
}

/// The status code a response's first line claims (0 if none).
fn status_of(raw: &[u8]) -> u16 {
    raw.get(9..12)
        .and_then(|d| std::str::from_utf8(d).ok())
        .and_then(|d| d.parse().ok())
        .unwrap_or(0)
}
