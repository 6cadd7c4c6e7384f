//! Fuzzes the parsers of user-supplied plan text: URLs, durations, counts,
//! think times and thresholds. Any UTF-8 string must give `Ok` or `Err`,
//! never a panic (these run on command-line flags and scenario values).
//!
//! The input is split on the first NUL (if any): the part before goes to
//! every parser, the part after is a second argument (a threshold's step).
#![no_main]

use libfuzzer_sys::fuzz_target;
use yace_plan::{parse_count, parse_duration, Target, Think};
use yace_stats::threshold::Threshold;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (s, step) = match text.split_once('\0') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };

    if let Ok(t) = Target::parse(s) {
        // What the engine relies on: a host, and a path that starts the request target.
        assert!(!t.host.is_empty(), "{s:?} parsed with an empty host");
        assert!(t.path.starts_with('/'), "{s:?} parsed to path {:?}", t.path);
    }
    let _ = parse_duration("fuzz", s);
    let _ = parse_count("fuzz", s);
    let _ = Think::parse(s);
    let _ = Threshold::parse(s, step);
});
