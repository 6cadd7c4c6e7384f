//! Pure parsers of what monitored servers publish: nginx's `stub_status`,
//! Apache's `mod_status?auto`, php-fpm's status page, Prometheus and
//! OpenMetrics text, and a node_exporter scrape mapped to the names the
//! local /proc reader uses.
//!
//! Each takes the body as fetched and returns a [`Reading`](crate::reading::Reading)
//! (or, for Prometheus text, its samples) or an error that says what was
//! wrong, where, and how to fix it. Nothing here does I/O; the fixtures the
//! tests read are real outputs captured from the Debian packages (nginx
//! 1.22, Apache 2.4 with the event, prefork and worker MPMs, php-fpm 8.2,
//! prometheus-node-exporter 1.5 and Python's prometheus_client).

pub mod apache;
pub mod fpm;
pub mod nginx;
pub mod node;
pub mod prom;

/// The first `max` characters of `s` (whole characters), with `…` when cut:
/// for quoting a bad input in an error without flooding it.
pub(crate) fn excerpt(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Whether a body looks like an HTML (or XML) page rather than the plain
/// text asked for: the usual sign of a status URL without its `?auto` or
/// `?json`, or of a login or error page in front of it.
pub(crate) fn looks_like_markup(body: &str) -> bool {
    let head: String = body.trim_start().chars().take(200).collect();
    let lower = head.to_ascii_lowercase();
    lower.starts_with("<!doctype")
        || lower.starts_with("<html")
        || lower.starts_with("<?xml")
        || (lower.starts_with('<') && lower.contains("<html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_cuts_on_characters() {
        assert_eq!(excerpt("  abc  ", 5), "abc");
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("ééééé", 2), "éé…");
    }

    #[test]
    fn markup_is_recognized() {
        assert!(looks_like_markup("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD\">"));
        assert!(looks_like_markup("\n<html><body>"));
        assert!(looks_like_markup("<?xml version=\"1.0\" ?>"));
        assert!(looks_like_markup("<head><title>x</title></head><html>"));
        assert!(!looks_like_markup("Active connections: 1"));
        assert!(!looks_like_markup(""));
        assert!(!looks_like_markup(&"é".repeat(300)));
    }
}
