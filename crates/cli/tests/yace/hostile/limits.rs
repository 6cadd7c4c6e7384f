//! Every variable-length element of a response has a limit, with its own
//! detail in the result; a body with no end cannot hold the run past its
//! clock; and what yace reads leniently it says, and does not trust the
//! connection after.

use crate::hostile::{run, server, url};
use std::time::Duration;

const N20: &[&str] = &["-n", "20", "-c", "2", "--timeout", "5s"];

fn tls_server() -> serve::Server {
    serve::Server::start(serve::Config {
        threads: 1,
        tls: Some(serve::TlsIdentity::self_signed().unwrap()),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn endless_chunk_lines_and_trailers_are_refused_at_their_limit_not_the_timeout() {
    // Before the limits, both were read until --timeout; now each fails as
    // soon as its element passes its limit, and says which element.
    let s = server();
    let tls = tls_server();
    for (base, extra) in [(&s, None), (&tls, Some("--insecure"))] {
        for (path, detail) in [
            ("/bad/endless-chunk-ext", "chunk_line_too_long"),
            ("/bad/endless-trailers", "too_many_trailers"),
        ] {
            let mut args = N20.to_vec();
            args.extend(extra);
            let r = run(&url(base, path), &args);
            r.expect(&[("header_too_large", 20)]);
            assert_eq!(r.u(&format!("error_details.{detail}")), 20, "{path}");
            r.ended_within(Duration::from_secs(4));
            let text = &r.stdout;
            assert!(text.contains(detail), "{text}");
        }
    }
}

#[test]
fn a_body_without_end_cannot_keep_the_run_going() {
    // A 1 GiB body sent as fast as yace reads: the read loop yields to the
    // worker's clock (its read budget), so --timeout fails each request
    // and -d ends the run on time, over HTTP/1.1 and HTTPS alike.
    let s = server();
    let tls = tls_server();
    for (base, extra) in [(&s, None), (&tls, Some("--insecure"))] {
        let mut args = vec!["-d", "2s", "-c", "2", "--timeout", "500ms"];
        args.extend(extra);
        let r = run(&url(base, "/bytes/1073741824"), &args);
        r.ended_within(Duration::from_millis(3500));
        assert_eq!(r.json["end"]["reason"], "duration");
        assert!(r.u("outcomes.timeout") >= 2, "{:?}", r.outcomes());
        assert_eq!(r.u("summary.responses"), 0);
    }
}

#[test]
fn a_thousand_set_cookie_fields_are_a_response() {
    let s = server();
    let r = run(&url(&s, "/bad/many-cookies"), N20);
    r.expect(&[("response", 20)]);
    assert_eq!(r.u("summary.connections_opened"), 2, "kept alive");
    assert!(r.u("summary.bytes_in") > 20 * 50_000);
    r.counted_once(&s);
    // A limit below that head refuses it, and names the limit.
    let mut args = N20.to_vec();
    args.extend(["--max-fields", "500"]);
    let r = run(&url(&s, "/bad/many-cookies"), &args);
    r.expect(&[("header_too_large", 20)]);
    assert_eq!(r.u("error_details.too_many_fields"), 20);
    let mut args = N20.to_vec();
    args.extend(["--max-head", "32k"]);
    let r = run(&url(&s, "/bad/many-cookies"), &args);
    r.expect(&[("header_too_large", 20)]);
    assert_eq!(r.u("error_details.head_too_large"), 20);
}

#[test]
fn ambiguous_framing_is_read_strictly_and_the_connection_not_reused() {
    let s = server();
    for (path, lenient, body) in [
        // Chunked wins over the (wrong) Content-Length; then close.
        ("/bad/te-and-cl", "transfer_and_length", 12),
        // A final coding that is not chunked: read to the close.
        ("/bad/te-identity", "transfer_not_chunked", 27),
        ("/bad/bare-lf", "bare_lf", 8),
    ] {
        s.reset_stats();
        let r = run(&url(&s, path), N20);
        r.expect(&[("response", 20)]);
        assert_eq!(r.u("summary.body_length.first"), body, "{path}");
        assert_eq!(r.u(&format!("lenient.{lenient}")), 20, "{path}");
        assert_eq!(r.u("summary.connections_opened"), 20, "{path}: not reused");
        assert_eq!(r.u("summary.retries"), 0, "{path}");
        let warned = r.json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("out of spec"));
        assert!(warned, "{path}: {}", r.json["warnings"]);
        let text = &r.stdout;
        assert!(text.contains("Lenient"), "{text}");
        r.counted_once(&s);
    }
}

#[test]
fn bad_limits_are_flag_errors() {
    let s = server();
    let out = crate::hostile::yace()
        .args([
            "run",
            &s.url(),
            "-n",
            "1",
            "--max-head",
            "12",
            "--max-fields",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-head: '12' is out of range"), "{err}");
    assert!(err.contains("--max-fields: 'x'"), "{err}");
}

#[test]
fn an_early_answer_is_the_result_when_the_upload_fails() {
    // The server answers 413 as soon as it has the head, leaves the 8 MB
    // body unread and resets: yace's write fails with the answer waiting
    // in its socket. The answer is the result, not `reset`.
    let s = server();
    let tls = tls_server();
    let body = crate::hostile::write_temp("upload-8mb.bin", &vec![b'x'; 8 << 20]);
    for (base, extra) in [(&s, None), (&tls, Some("--insecure"))] {
        let mut args = vec!["-n", "20", "-c", "2", "-m", "POST", "--body-file", &body];
        args.extend(extra);
        let r = run(&url(base, "/bad/early-413"), &args);
        r.expect(&[("response", 20)]);
        assert_eq!(r.json["statuses"]["413"], 20);
        assert_eq!(r.u("summary.connections_opened"), 20, "never reused");
        r.counted_once(base);
    }
}

#[test]
fn a_full_cookie_jar_keeps_what_a_browser_keeps_and_says_what_it_dropped() {
    // 1,000 Set-Cookie fields per response: each user's jar keeps 180, as
    // a browser does for one site, and the result counts the rest.
    let s = server();
    let r = run(
        &url(&s, "/bad/many-cookies"),
        &["-u", "2", "--pacing", "200ms", "-d", "1s"],
    );
    assert_eq!(r.u("summary.errors"), 0, "{:?}", r.outcomes());
    let responses = r.u("summary.responses");
    assert!(responses >= 4, "{responses}");
    assert!(
        r.u("cookies_dropped") >= 2 * (1000 - 180),
        "{}",
        r.json["cookies_dropped"]
    );
    assert!(r.stdout.contains("cookies were not kept"), "{}", r.stdout);
}

#[test]
fn sigterm_ends_a_run_under_a_flood_within_a_second() {
    // Two connections each receiving a 1 GiB body as fast as yace reads,
    // requests allowed a minute: SIGTERM still ends the run within a
    // second, with the partial result written.
    let s = server();
    let path = crate::support::temp_path("flood.json");
    let child = crate::hostile::yace()
        .args(["run", &url(&s, "/bytes/1073741824"), "-c", "2", "-d", "60s"])
        .args(["--timeout", "60s", "-t", "1", "-q", "--json"])
        .arg(&path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t = std::time::Instant::now();
    // SAFETY: signalling the child we spawned, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert_eq!(out.status.code(), Some(143));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(r["end"]["reason"], "terminated");
    assert_eq!(r["end"]["partial"], true);
    assert!(r["summary"]["bytes_in"].as_u64().unwrap() > 10 << 20);
    let _ = std::fs::remove_file(&path);
}

/// A raw h2c server that answers every stream 1 with a header block that
/// never ends: HEADERS without END_HEADERS, then CONTINUATION frames until
/// the client goes away (at most 10,000 of 16 KiB). Returns its URL.
fn endless_h2_header_server() -> String {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in l.incoming().take(50) {
            let Ok(mut c) = conn else { return };
            std::thread::spawn(move || {
                let frame = |ty: u8, flags: u8, stream: u32, payload: &[u8]| {
                    let n = payload.len() as u32;
                    let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, ty, flags];
                    f.extend_from_slice(&stream.to_be_bytes());
                    f.extend_from_slice(payload);
                    f
                };
                let mut buf = [0u8; 4096];
                // The client's preface, SETTINGS and first request.
                let _ = c.set_read_timeout(Some(Duration::from_millis(300)));
                let _ = c.read(&mut buf);
                let _ = c.write_all(&frame(4, 0, 0, &[]));
                let _ = c.write_all(&frame(4, 1, 0, &[]));
                let _ = c.read(&mut buf);
                // :status 200, then literal fields "a: b" for ever.
                if c.write_all(&frame(1, 0, 1, &[0x88])).is_err() {
                    return;
                }
                let junk = [0x40, 0x01, b'a', 0x01, b'b'].repeat(16 * 1024 / 5);
                let cont = frame(9, 0, 1, &junk);
                for _ in 0..10_000 {
                    if c.write_all(&cont).is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

#[test]
fn an_http2_header_block_without_end_is_refused_at_its_limit() {
    let url = endless_h2_header_server();
    let r = run(&url, &["--http2", "-n", "5", "-c", "1", "--timeout", "10s"]);
    r.ended_within(Duration::from_secs(5));
    assert_eq!(r.u("summary.responses"), 0);
    assert_eq!(r.u("outcomes.timeout"), 0, "{:?}", r.outcomes());
    assert_eq!(r.u("outcomes.protocol_error"), 5, "{:?}", r.outcomes());
}

#[test]
fn an_http2_body_without_end_cannot_keep_the_run_going() {
    let s = server();
    let r = run(
        &url(&s, "/bytes/1073741824"),
        &["--http2", "-d", "2s", "-c", "2", "--timeout", "500ms"],
    );
    r.ended_within(Duration::from_millis(3500));
    assert_eq!(r.json["end"]["reason"], "duration");
    assert!(r.u("outcomes.timeout") >= 2, "{:?}", r.outcomes());
    assert_eq!(r.u("summary.responses"), 0);
}
