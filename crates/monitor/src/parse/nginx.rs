//! nginx's `stub_status` page (ngx_http_stub_status_module):
//!
//! ```text
//! Active connections: 1
//! server accepts handled requests
//!  4 4 4
//! Reading: 0 Writing: 1 Waiting: 0
//! ```
//!
//! Gauges (`count`): `active`, `reading`, `writing`, `waiting`. Counters
//! (`count`): `accepts`, `handled`, `requests`. `accepts` above `handled`
//! means nginx dropped connections (worker_connections or a resource limit).

use crate::reading::Reading;

use super::{excerpt, looks_like_markup};

const HINT: &str =
    "point the URL at an nginx location with `stub_status;` (e.g. `location = /nginx_status { stub_status; }`)";

/// Parses a `stub_status` body.
pub fn parse(body: &str) -> Result<Reading, String> {
    if looks_like_markup(body) {
        return Err(format!(
            "got an HTML page, not nginx stub_status output: {HINT}"
        ));
    }
    let lines: Vec<&str> = body.lines().map(str::trim).collect();

    let active = lines
        .iter()
        .find_map(|l| l.strip_prefix("Active connections:"))
        .ok_or_else(|| {
            if body.trim().is_empty() {
                format!("the response is empty, not nginx stub_status output: {HINT}")
            } else {
                format!(
                    "no 'Active connections:' line, so this is not nginx stub_status output \
                     (it starts «{}»): {HINT}",
                    excerpt(body, 60)
                )
            }
        })?;
    let active = number("Active connections", active.trim())?;

    // "server accepts handled requests" then a line of as many numbers.
    let header_at = lines
        .iter()
        .position(|l| l.split_whitespace().next() == Some("server"))
        .ok_or_else(|| {
            "no 'server accepts handled requests' line after 'Active connections:' \
             (the response was cut short?)"
                .to_string()
        })?;
    let names: Vec<&str> = lines[header_at].split_whitespace().skip(1).collect();
    let counts_line = lines[header_at + 1..]
        .iter()
        .find(|l| !l.is_empty())
        .ok_or_else(|| {
            format!(
                "the line of counts after '{}' is missing (the response was cut short?)",
                lines[header_at]
            )
        })?;
    let counts: Vec<&str> = counts_line.split_whitespace().collect();
    if counts.len() != names.len() {
        return Err(format!(
            "'{}' names {} counts but the next line «{}» has {}",
            lines[header_at],
            names.len(),
            excerpt(counts_line, 60),
            counts.len()
        ));
    }
    let count = |name: &str| -> Result<f64, String> {
        let i = names.iter().position(|n| *n == name).ok_or_else(|| {
            format!(
                "'{}' has no '{name}' column, so this is not nginx stub_status output: {HINT}",
                lines[header_at]
            )
        })?;
        number(name, counts[i])
    };
    let accepts = count("accepts")?;
    let handled = count("handled")?;
    let requests = count("requests")?;

    // "Reading: 0 Writing: 1 Waiting: 0"
    let states = lines
        .iter()
        .find(|l| l.starts_with("Reading:"))
        .ok_or_else(|| {
            "no 'Reading: … Writing: … Waiting: …' line (the response was cut short?)".to_string()
        })?;
    let tokens: Vec<&str> = states.split_whitespace().collect();
    let state = |key: &str| -> Result<f64, String> {
        let i = tokens
            .iter()
            .position(|t| *t == key)
            .ok_or_else(|| format!("'{states}' has no '{key}' (the response was cut short?)"))?;
        let value = tokens
            .get(i + 1)
            .ok_or_else(|| format!("'{states}' has no value after '{key}'"))?;
        number(key.trim_end_matches(':'), value)
    };
    let reading = state("Reading:")?;
    let writing = state("Writing:")?;
    let waiting = state("Waiting:")?;

    let mut r = Reading::new();
    r.gauge("active", "count", active);
    r.gauge("reading", "count", reading);
    r.gauge("writing", "count", writing);
    r.gauge("waiting", "count", waiting);
    r.counter("accepts", "count", accepts);
    r.counter("handled", "count", handled);
    r.counter("requests", "count", requests);
    Ok(r)
}

/// A count as nginx prints it: a whole number, not negative.
fn number(what: &str, text: &str) -> Result<f64, String> {
    text.parse::<u64>()
        // Counts stay far below 2^53 in practice; f64 is the Reading's type.
        .map(|n| n as f64)
        .map_err(|_| format!("{what} is «{}», not a whole number", excerpt(text, 30)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::Kind;

    const IDLE: &str = include_str!("fixtures/nginx_stub_status.txt");
    const BUSY: &str = include_str!("fixtures/nginx_stub_status_busy.txt");

    fn kind(r: &Reading, name: &str) -> Kind {
        r.fields.iter().find(|f| f.name == name).unwrap().kind
    }

    #[test]
    fn real_idle_page() {
        let r = parse(IDLE).unwrap();
        assert_eq!(r.get("active"), Some(1.0));
        assert_eq!(r.get("accepts"), Some(8.0));
        assert_eq!(r.get("handled"), Some(8.0));
        assert_eq!(r.get("requests"), Some(8.0));
        assert_eq!(r.get("reading"), Some(0.0));
        assert_eq!(r.get("writing"), Some(1.0));
        assert_eq!(r.get("waiting"), Some(0.0));
        let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["active", "reading", "writing", "waiting", "accepts", "handled", "requests"]
        );
        assert!(r.fields.iter().all(|f| f.unit == "count"));
        assert_eq!(kind(&r, "active"), Kind::Gauge);
        assert_eq!(kind(&r, "waiting"), Kind::Gauge);
        assert_eq!(kind(&r, "accepts"), Kind::Counter);
        assert_eq!(kind(&r, "requests"), Kind::Counter);
    }

    #[test]
    fn real_busy_page() {
        let r = parse(BUSY).unwrap();
        assert_eq!(r.get("active"), Some(10.0));
        assert_eq!(r.get("reading"), Some(3.0));
        assert_eq!(r.get("writing"), Some(1.0));
        assert_eq!(r.get("waiting"), Some(6.0));
        assert_eq!(r.get("requests"), Some(39.0));
    }

    #[test]
    fn crlf_and_extra_columns_are_fine() {
        // Tengine adds a request_time column; CRLF from a proxy in between.
        let body = "Active connections: 291 \r\nserver accepts handled requests request_time\r\n \
                    16630948 16630948 31070465 9214 \r\nReading: 6 Writing: 179 Waiting: 106 \r\n";
        let r = parse(body).unwrap();
        assert_eq!(r.get("active"), Some(291.0));
        assert_eq!(r.get("requests"), Some(31_070_465.0));
        assert_eq!(r.get("writing"), Some(179.0));
        assert_eq!(r.fields.len(), 7);
    }

    #[test]
    fn html_is_refused_with_a_hint() {
        let e =
            parse("<html>\r\n<head><title>404 Not Found</title></head>\r\n</html>").unwrap_err();
        assert!(e.contains("HTML"), "{e}");
        assert!(e.contains("stub_status;"), "{e}");
    }

    #[test]
    fn garbage_is_refused() {
        let e = parse("hello world\n").unwrap_err();
        assert!(e.contains("no 'Active connections:' line"), "{e}");
        assert!(e.contains("«hello world»"), "{e}");
        let e = parse("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = parse("{\"connections\": {\"active\": 1}}").unwrap_err();
        assert!(e.contains("not nginx stub_status"), "{e}");
    }

    #[test]
    fn truncated_bodies_say_so() {
        let cut = &IDLE[..IDLE.find("Reading").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.contains("Reading"), "{e}");
        assert!(e.contains("cut short"), "{e}");

        let cut = "Active connections: 1 \nserver accepts handled requests\n";
        let e = parse(cut).unwrap_err();
        assert!(e.contains("line of counts"), "{e}");

        let e = parse("Active connections: 1 \n").unwrap_err();
        assert!(e.contains("server accepts handled requests"), "{e}");

        let cut = "Active connections: 1 \nserver accepts handled requests\n 4 4 4 \nReading: 0 Writing: 1 Wait";
        let e = parse(cut).unwrap_err();
        assert!(e.contains("'Waiting:'"), "{e}");

        let cut = "Active connections: 1 \nserver accepts handled requests\n 4 4 4 \nReading: 0 Writing: 1 Waiting:";
        let e = parse(cut).unwrap_err();
        assert!(e.contains("no value after 'Waiting:'"), "{e}");

        let cut = "Active connections: 1 \nserver accepts handled requests\n 4 4\n";
        let e = parse(cut).unwrap_err();
        assert!(e.contains("names 3 counts"), "{e}");
    }

    #[test]
    fn bad_numbers_are_named() {
        let e = parse(&IDLE.replace("Active connections: 1", "Active connections: x")).unwrap_err();
        assert_eq!(e, "Active connections is «x», not a whole number");
        let e = parse(&IDLE.replace(" 8 8 8", " 8 -8 8")).unwrap_err();
        assert_eq!(e, "handled is «-8», not a whole number");
        let e = parse(&IDLE.replace("Writing: 1", "Writing: 1.5")).unwrap_err();
        assert_eq!(e, "Writing is «1.5», not a whole number");
    }
}
