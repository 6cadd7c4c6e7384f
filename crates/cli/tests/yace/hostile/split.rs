//! The same responses delivered 1, 3, 7 and 64 bytes at a time
//! (`?split=N`: each piece its own write, ~1 ms apart) must give yace
//! exactly the figures that whole delivery gives.

use crate::hostile::{run, server, url, Run};
use serde_json::Value;

/// What must not depend on how the bytes were cut.
fn figures(r: &Run) -> Value {
    serde_json::json!({
        "outcomes": r.json["outcomes"],
        "statuses": r.json["statuses"],
        "requests": r.json["summary"]["requests"],
        "body_length": r.json["summary"]["body_length"],
        "body_bytes": r.json["summary"]["body_bytes"],
        "retries": r.json["summary"]["retries"],
        "lenient": r.json["lenient"],
        "error_details": r.json["error_details"],
    })
}

/// Runs `path` whole and then split, and compares. Returns the whole run.
fn same_when_split(path: &str) -> Run {
    let s = server();
    let args = ["-n", "3", "-c", "3", "--timeout", "3s"];
    let whole = run(&url(&s, path), &args);
    whole.counted_once(&s);
    let sep = if path.contains('?') { '&' } else { '?' };
    for piece in [1, 3, 7, 64] {
        s.reset_stats();
        let split = run(&url(&s, &format!("{path}{sep}split={piece}")), &args);
        assert_eq!(
            figures(&split),
            figures(&whole),
            "{path} delivered {piece} bytes at a time"
        );
        split.counted_once(&s);
    }
    whole
}

#[test]
fn root_split_anywhere_is_the_same() {
    let r = same_when_split("/");
    r.expect(&[("response", 3)]);
    assert_eq!(r.u("summary.body_length.first"), 12);
}

#[test]
fn chunked_split_anywhere_is_the_same() {
    let r = same_when_split("/chunked");
    r.expect(&[("response", 3)]);
    assert_eq!(r.u("summary.body_length.first"), 128);
}

#[test]
fn chunk_extensions_and_trailers_split_anywhere_are_the_same() {
    let r = same_when_split("/bad/chunk-ext");
    r.expect(&[("response", 3)]);
    assert_eq!(r.u("summary.body_length.first"), 11);
}

#[test]
fn interim_responses_split_anywhere_are_the_same() {
    let r = same_when_split("/bad/continue");
    r.expect(&[("response", 3)]);
    assert_eq!(r.u("summary.body_length.first"), 13);
}

#[test]
fn short_body_split_anywhere_is_the_same() {
    let r = same_when_split("/bad/cl-short");
    r.expect(&[("incomplete_body", 3)]);
}

#[test]
fn lenient_framing_split_anywhere_is_the_same() {
    // What yace overlooks, and so distrusts, does not depend on the cuts.
    for (path, lenient, body) in [
        ("/bad/te-and-cl", "transfer_and_length", 12),
        ("/bad/bare-lf", "bare_lf", 8),
    ] {
        let r = same_when_split(path);
        r.expect(&[("response", 3)]);
        assert_eq!(r.u("summary.body_length.first"), body, "{path}");
        assert_eq!(r.u(&format!("lenient.{lenient}")), 3, "{path}");
    }
}
