//! Responses whose framing is wrong, odd or merely unusual: lengths,
//! chunking, interim responses, bodies where none belong, huge and endless
//! heads, HTTP/1.0.

use crate::hostile::{run, server, url};
use std::time::Duration;

/// The usual run: 20 requests on 2 connections, failures bounded by a
/// short timeout.
const N20: &[&str] = &["-n", "20", "-c", "2", "--timeout", "2s"];

#[test]
fn eof_delimited_body_is_a_response() {
    let s = server();
    let r = run(&url(&s, "/bad/eof-body"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.body_length.first"), 100);
    assert_eq!(r.u("summary.body_bytes"), 2000);
    r.counted_once(&s);
}

#[test]
fn content_length_short_is_incomplete_body() {
    let s = server();
    let r = run(&url(&s, "/bad/cl-short"), N20);
    r.expect(&[("incomplete_body", 20)]);
    r.counted_once(&s);
}

#[test]
fn content_length_long_is_a_response_of_the_stated_length() {
    let s = server();
    let r = run(&url(&s, "/bad/cl-long"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.body_length.first"), 10);
    assert_eq!(r.u("summary.body_bytes"), 200);
    // The bytes beyond the length answer nothing: that connection is not reused.
    assert_eq!(r.u("summary.connections_opened"), 20);
    assert_eq!(r.u("summary.retries"), 0);
    r.counted_once(&s);
}

#[test]
fn content_length_invalid_is_protocol_error() {
    let s = server();
    let r = run(&url(&s, "/bad/cl-invalid"), N20);
    r.expect(&[("protocol_error", 20)]);
    r.counted_once(&s);
}

#[test]
fn content_length_duplicated_and_different_is_protocol_error() {
    let s = server();
    let r = run(&url(&s, "/bad/cl-dup"), N20);
    r.expect(&[("protocol_error", 20)]);
    r.counted_once(&s);
}

#[test]
fn chunk_size_not_hex_is_protocol_error() {
    let s = server();
    let r = run(&url(&s, "/bad/chunk-bad"), N20);
    r.expect(&[("protocol_error", 20)]);
    r.counted_once(&s);
}

#[test]
fn chunk_extensions_and_trailers_are_a_response() {
    let s = server();
    let r = run(&url(&s, "/bad/chunk-ext"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.body_length.first"), 11);
    assert_eq!(r.u("summary.body_bytes"), 220);
    assert_eq!(r.u("summary.connections_opened"), 2, "kept alive");
    let seen = r.counted_once(&s);
    assert_eq!(seen.by_route["/bad/chunk-ext"], 20);
}

#[test]
fn chunked_body_cut_short_is_incomplete_body() {
    let s = server();
    let r = run(&url(&s, "/bad/chunk-trunc"), N20);
    r.expect(&[("incomplete_body", 20)]);
    r.counted_once(&s);
}

#[test]
fn interim_100_and_103_before_the_final_response_are_skipped() {
    let s = server();
    let r = run(&url(&s, "/bad/continue"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.json["statuses"]["200"], 20);
    assert_eq!(r.u("summary.body_length.first"), 13);
    assert_eq!(r.u("summary.connections_opened"), 2, "kept alive");
    r.counted_once(&s);
}

#[test]
fn stray_bytes_after_a_204_are_not_a_failure() {
    let s = server();
    let r = run(&url(&s, "/bad/204-body"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.json["statuses"]["204"], 20);
    assert_eq!(r.u("summary.body_bytes"), 0);
    assert_eq!(r.u("summary.connections_opened"), 20, "not reused");
    r.counted_once(&s);
}

#[test]
fn stray_bytes_after_a_304_are_not_a_failure() {
    let s = server();
    let r = run(&url(&s, "/bad/304-body"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.json["statuses"]["304"], 20);
    assert_eq!(r.u("summary.body_bytes"), 0);
    assert_eq!(r.u("summary.connections_opened"), 20, "not reused");
    r.counted_once(&s);
}

#[test]
fn head_without_a_body_keeps_the_connection() {
    let s = server();
    let r = run(&url(&s, "/"), &[N20, &["-m", "HEAD"]].concat());
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.body_bytes"), 0);
    assert_eq!(r.u("summary.connections_opened"), 2);
    r.counted_once(&s);
}

#[test]
fn head_answered_with_a_body_anyway_is_a_response() {
    let s = server();
    let r = run(&url(&s, "/bad/head-body"), &[N20, &["-m", "HEAD"]].concat());
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.body_bytes"), 0);
    assert_eq!(r.u("summary.connections_opened"), 20, "not reused");
    assert_eq!(r.u("summary.retries"), 0);
    r.counted_once(&s);
}

#[test]
fn http10_response_is_a_response_and_not_reused() {
    let s = server();
    let r = run(&url(&s, "/bad/http10"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.body_length.first"), 19);
    assert_eq!(r.u("summary.connections_opened"), 20);
    assert_eq!(r.u("summary.retries"), 0);
    r.counted_once(&s);
}

#[test]
fn huge_header_is_header_too_large_and_a_big_one_is_not() {
    let s = server();
    // Over the default limit (256 KiB): refused, the detail says why.
    let r = run(&url(&s, "/bad/huge-header?kb=300"), N20);
    r.expect(&[("header_too_large", 20)]);
    assert_eq!(r.u("error_details.head_too_large"), 20);
    r.counted_once(&s);
    s.reset_stats();
    let r = run(&url(&s, "/bad/huge-header?kb=100"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.connections_opened"), 2, "kept alive");
    r.counted_once(&s);
}

#[test]
fn endless_header_is_header_too_large_and_the_run_ends() {
    let s = server();
    let r = run(&url(&s, "/bad/endless-header"), &["-n", "10", "-c", "2"]);
    r.expect(&[("header_too_large", 10)]);
    r.counted_once(&s);
    let r = run(&url(&s, "/bad/endless-header"), &["-d", "1s", "-c", "2"]);
    r.ended_within(Duration::from_millis(2500));
    assert_eq!(r.json["end"]["reason"], "duration");
    let errors = r.u("outcomes.header_too_large");
    assert!(errors > 0);
    assert_eq!(r.u("summary.errors"), errors);
    assert_eq!(r.u("summary.responses"), 0);
}
