//! HTTP/2 against real nginx: over TLS (ALPN h2) and h2c with prior
//! knowledge, many streams per connection, counts exact at the server, the
//! server's stream limit respected, GOAWAY after N requests per connection
//! handled with zero failed requests, and a clear outcome when the server
//! does not speak HTTP/2.

use super::{n, refused, run, served, with_nginx};
use crate::support;

#[test]
fn http2() {
    with_nginx(|ng| {
        let ca = ng.pki.path("ca.pem");
        let url = format!("https://localhost:{}/", ng.h2);

        // 1. Verification is on for HTTP/2 as well (the pre-flight's).
        refused(&[&url, "--http2", "-c", "1", "-n", "5"], "tls_unknown_ca");

        // 1b. --insecure skips it, loudly, over HTTP/2 too.
        let (_, r) = run(&[&url, "--http2", "-c", "1", "-n", "5", "--insecure"]);
        assert_eq!(n(&r, "summary.responses"), 5, "{}", r["outcomes"]);
        assert_eq!(r["tls"]["verified"], false);

        // 2. Multiplexed over TLS: 4 connections × 25 streams, exact at nginx.
        let before = served(ng);
        let (out, r) = run(&[
            &url,
            "--http2",
            "-c",
            "4",
            "--streams",
            "25",
            "-n",
            "3000",
            "-t",
            "2",
            "--cacert",
            &ca,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(n(&r, "summary.responses"), 3000, "{}", r["outcomes"]);
        assert_eq!(n(&r, "summary.errors"), 0);
        assert_eq!(r["statuses"]["200"], 3000);
        assert_eq!(served(ng) - before - 1, 3000);
        assert_eq!(n(&r, "summary.connections_opened"), 4);
        assert_eq!(n(&r, "summary.body_bytes"), 3000 * 9, "\"hello h2\\n\"");
        assert_eq!(n(&r, "http2.streams"), 25);
        assert_eq!(n(&r, "http2.server_max_streams"), 128, "nginx's default");
        assert!(
            r["server_software"].as_str().unwrap().starts_with("nginx"),
            "{}",
            r["server_software"]
        );
        let o = String::from_utf8_lossy(&out.stdout);
        assert!(
            o.contains("HTTP/2, 25 streams per connection (server allows 128)"),
            "{o}"
        );

        // 3. h2c with prior knowledge on plain TCP.
        let before = served(ng);
        let h2c = format!("http://127.0.0.1:{}/", ng.h2c);
        let (_, r) = run(&[&h2c, "--http2", "-c", "2", "--streams", "10", "-n", "1000"]);
        assert_eq!(n(&r, "summary.responses"), 1000, "{}", r["outcomes"]);
        assert_eq!(served(ng) - before - 1, 1000);

        // 4. Few streams allowed and GOAWAY every 50 requests: nothing fails,
        // nothing is counted twice at the server, and the limit is reported.
        let before = served(ng);
        let strict = format!("https://localhost:{}/", ng.h2_strict);
        let (out, r) = run(&[
            &strict,
            "--http2",
            "-c",
            "2",
            "--streams",
            "32",
            "-n",
            "2000",
            "--cacert",
            &ca,
        ]);
        assert!(out.status.success());
        assert_eq!(n(&r, "summary.responses"), 2000, "{}", r["outcomes"]);
        assert_eq!(n(&r, "summary.errors"), 0, "{}", r["outcomes"]);
        assert_eq!(served(ng) - before - 1, 2000, "each request served once");
        assert_eq!(n(&r, "http2.server_max_streams"), 8);
        assert!(n(&r, "http2.goaways") >= 30, "{}", r["http2"]);
        assert!(
            n(&r, "summary.connections_opened") >= 40,
            "{}",
            r["summary"]
        );
        assert!(
            r["warnings"]
                .to_string()
                .contains("allows 8 concurrent streams"),
            "{}",
            r["warnings"]
        );

        // 5. A 300 KB body: many DATA frames, flow control kept open.
        let big = format!("https://localhost:{}/big.txt", ng.h2);
        let (_, r) = run(&[
            &big,
            "--http2",
            "-c",
            "1",
            "--streams",
            "10",
            "-n",
            "50",
            "--cacert",
            &ca,
        ]);
        assert_eq!(n(&r, "summary.responses"), 50, "{}", r["outcomes"]);
        assert_eq!(n(&r, "summary.body_bytes"), 50 * 300_000);

        // 6. A server without HTTP/2: its own outcome, explained.
        let plain = format!("http://127.0.0.1:{}/", ng.plain);
        let out = refused(&[&plain, "--http2", "-c", "1", "-n", "3"], "no_http2");
        assert!(String::from_utf8_lossy(&out.stderr).contains("drop --http2"));
        let tls11 = format!("https://localhost:{}/", ng.tls);
        let out = refused(
            &[&tls11, "--http2", "-c", "1", "-n", "3", "--cacert", &ca],
            "no_http2",
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("drop --http2"));
    });
}

/// The embedded target, HTTP/2 limits as given.
fn target(max_streams: u32, max_requests: Option<u64>) -> serve::Server {
    serve::Server::start(serve::Config {
        threads: 1,
        h2_max_streams: max_streams,
        h2_max_requests: max_requests,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn streams_multiplex_requests_on_few_connections() {
    let s = target(128, None);
    let url = format!("{}sleep?ms=100", s.url());
    let t = std::time::Instant::now();
    let (out, r) = run(&[
        &url,
        "--http2",
        "-c",
        "2",
        "--streams",
        "50",
        "-n",
        "400",
        "-t",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(n(&r, "summary.responses"), 400, "{}", r["outcomes"]);
    // 100 in flight: four rounds of 100 ms. One request per connection
    // at a time would take 20 s.
    assert!(t.elapsed().as_secs_f64() < 4.0, "{:?}", t.elapsed());
    let seen = support::settled(&s);
    assert_eq!(seen.h2_requests, 400, "{seen:?}");
    // The run's two, and the pre-flight's (its preface, no request).
    assert_eq!(seen.h2_connections, 2 + 1, "{seen:?}");
    assert_eq!(n(&r, "summary.connections_opened"), 2);
}

#[test]
fn goaway_after_n_requests_loses_and_repeats_nothing() {
    let s = target(16, Some(20));
    let (out, r) = run(&[
        &s.url(),
        "--http2",
        "-c",
        "3",
        "--streams",
        "16",
        "-n",
        "1000",
        "-t",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(n(&r, "summary.responses"), 1000, "{}", r["outcomes"]);
    assert_eq!(n(&r, "summary.errors"), 0, "{}", r["outcomes"]);
    let seen = support::settled(&s);
    assert_eq!(seen.h2_requests, 1000, "served once each: {seen:?}");
    // The run's, and the pre-flight's (its preface, no request).
    assert_eq!(seen.h2_connections, n(&r, "summary.connections_opened") + 1);
    assert!(n(&r, "http2.goaways") >= 45, "{}", r["http2"]);
    assert_eq!(n(&r, "http2.server_max_streams"), 16);
}

#[test]
fn stream_resets_and_refusals_are_classified() {
    let s = target(128, None);
    let (out, r) = run(&[
        &format!("{}bad/rst", s.url()),
        "--http2",
        "-c",
        "1",
        "-n",
        "10",
    ]);
    assert_eq!(n(&r, "outcomes.stream_reset"), 10, "{}", r["outcomes"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("RST_STREAM"));
    let (_, r) = run(&[
        &format!("{}bad/refuse", s.url()),
        "--http2",
        "-c",
        "1",
        "-n",
        "5",
    ]);
    assert_eq!(n(&r, "outcomes.stream_refused"), 5, "{}", r["outcomes"]);
    assert_eq!(n(&r, "summary.retries"), 10, "two re-sends each");
    // The connection survives resets: one was enough.
    assert_eq!(n(&r, "summary.connections_opened"), 1);
}

#[test]
fn request_bodies_follow_the_servers_flow_control() {
    let s = target(128, None);
    let body = support::temp_path("h2-body.bin");
    // Larger than the server's 1 MiB stream window: sent as it opens.
    std::fs::write(&body, vec![b'x'; 3 << 20]).unwrap();
    let (out, r) = run(&[
        &format!("{}echo", s.url()),
        "--http2",
        "-m",
        "POST",
        "--body-file",
        body.to_str().unwrap(),
        "-c",
        "1",
        "--streams",
        "4",
        "-n",
        "8",
    ]);
    assert!(out.status.success());
    assert_eq!(n(&r, "summary.responses"), 8, "{}", r["outcomes"]);
    assert_eq!(n(&r, "summary.body_bytes"), 8 * (3 << 20), "echoed whole");
    assert_eq!(support::settled(&s).h2_requests, 8);
}

#[test]
fn open_model_and_https_over_http2_on_the_embedded_target() {
    let (s, ca, url) = super::embedded_https("h2-ca");
    let (out, r) = run(&[
        &url,
        "--http2",
        "--rate",
        "200",
        "-d",
        "1s",
        "-c",
        "2",
        "--streams",
        "10",
        "--cacert",
        &ca,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(n(&r, "summary.responses"), 200, "{}", r["outcomes"]);
    let seen = support::settled(&s);
    assert_eq!(seen.h2_requests, 200);
    assert_eq!(seen.h2_connections, 2, "both connections carry load");
}
