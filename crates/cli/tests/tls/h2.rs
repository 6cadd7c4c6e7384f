//! HTTP/2 against real nginx: over TLS (ALPN h2) and h2c with prior
//! knowledge, many streams per connection, counts exact at the server, the
//! server's stream limit respected, GOAWAY after N requests per connection
//! handled with zero failed requests, and a clear outcome when the server
//! does not speak HTTP/2.

use super::{n, run, served, with_nginx};

#[test]
fn http2() {
    with_nginx(|ng| {
        let ca = ng.pki.path("ca.pem");
        let url = format!("https://localhost:{}/", ng.h2);

        // 1. Verification is on for HTTP/2 as well.
        let (_, r) = run(&[&url, "--http2", "-c", "1", "-n", "5"]);
        assert_eq!(n(&r, "outcomes.tls_unknown_ca"), 5, "{}", r["outcomes"]);

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
        assert!(n(&r, "summary.connections_opened") >= 40, "{}", r["summary"]);
        assert!(
            r["warnings"].to_string().contains("allows 8 concurrent streams"),
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
        let (out, r) = run(&[&plain, "--http2", "-c", "1", "-n", "3"]);
        assert_eq!(n(&r, "outcomes.no_http2"), 3, "{}", r["outcomes"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("drop --http2"));
        let tls11 = format!("https://localhost:{}/", ng.tls);
        let (_, r) = run(&[&tls11, "--http2", "-c", "1", "-n", "3", "--cacert", &ca]);
        assert_eq!(n(&r, "outcomes.no_http2"), 3, "{}", r["outcomes"]);
    });
}
