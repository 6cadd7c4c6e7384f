//! The codec against an external, respected corpus: llhttp's response
//! tests (strict mode), extracted once by `tests/llhttp/extract.py` into
//! `tests/llhttp/responses.json` with llhttp's verdict for each. Where yace
//! decides otherwise it is on purpose, and listed below with why.

use crate::engine::codec::{Progress, ResponseParser};

/// Cases where yace's verdict differs from llhttp's strict mode, by name,
/// with the reason. Anything else that differs fails the test.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "HTTP/1.1 with keep-alive disabled and 204 status",
        "the 204 is complete and counts; the bytes after it answer no request \
         of ours, so the worker closes the connection instead of reading them \
         (llhttp calls them an error of the stream)",
    ),
    (
        "RTSP response",
        "yace speaks HTTP: another protocol's status line is a protocol_error \
         (status_line), which is what a user pointing yace at an RTSP port needs",
    ),
    (
        "ICE response",
        "as RTSP: not HTTP, so a protocol_error (status_line)",
    ),
    (
        "HTTP version 0.9",
        "HTTP/0.9 has no status line at all; a server claiming 0.9 in one is \
         out of spec, and yace reads HTTP/1.x only (status_line)",
    ),
];

#[derive(Debug, PartialEq)]
enum Verdict {
    /// Every byte framed into this many complete responses (the last may
    /// be unfinished, as llhttp's cases end without end of file).
    Ok(usize),
    /// Refused after this many complete responses.
    Error(usize),
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Frames `wire` as consecutive responses, as llhttp does with pipelined
/// input; returns the verdict and the lenient bits seen.
fn frame(wire: &[u8]) -> (Verdict, u8) {
    let mut rest = wire;
    let mut done = 0;
    let mut lenient = 0;
    loop {
        let mut p = ResponseParser::default();
        p.reset(false, false);
        match p.feed(rest) {
            Err(_) => return (Verdict::Error(done), lenient),
            Ok(Progress::NeedMore) => return (Verdict::Ok(done), lenient | p.lenient),
            Ok(Progress::Done { consumed }) => {
                done += 1;
                lenient |= p.lenient;
                rest = &rest[consumed..];
                if rest.is_empty() {
                    return (Verdict::Ok(done), lenient);
                }
            }
        }
    }
}

#[test]
fn yace_frames_llhttps_responses_as_llhttp_does_or_says_why_not() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/llhttp/responses.json"
    ))
    .unwrap();
    let corpus: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 60, "{}", corpus["source"]);
    let mut unexplained = Vec::new();
    let mut explained = 0;
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let wire = hex(c["input"].as_str().unwrap());
        let llhttp_error = c["error"].as_str();
        let (ours, lenient) = frame(&wire);
        let agree = match (&ours, llhttp_error) {
            (Verdict::Error(_), Some(_)) => true,
            (Verdict::Ok(_), None) => true,
            // Read, but counted as lenient and the connection closed: the
            // server is told it is out of spec, as llhttp would refuse.
            (Verdict::Ok(_), Some(_)) => lenient != 0,
            (Verdict::Error(_), None) => false,
        };
        if agree {
            continue;
        }
        if DIFFERENCES.iter().any(|(n, _)| *n == name) {
            explained += 1;
            continue;
        }
        unexplained.push(format!(
            "{} ({}): llhttp {:?}, yace {ours:?} lenient {lenient:#x}; input {:?}",
            name,
            c["at"],
            llhttp_error,
            String::from_utf8_lossy(&wire)
        ));
    }
    assert!(
        unexplained.is_empty(),
        "{} of {} cases differ from llhttp without a reason in DIFFERENCES:\n{}",
        unexplained.len(),
        cases.len(),
        unexplained.join("\n")
    );
    assert_eq!(
        explained,
        DIFFERENCES.len(),
        "a listed difference no longer differs"
    );
}
