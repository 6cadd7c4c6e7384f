use super::format::{Line, LogFormat};
use super::tally::{Mix, Seconds};
use super::target::{origin_form, MAX_TARGET};
use super::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Two nginx combined lines, a second apart (times are +02:00).
const NGINX: &str = r#"127.0.0.1 - - [14/May/2024:11:30:00 +0200] "GET /index.html?page=2 HTTP/1.1" 200 612 "-" "curl/8.5.0"
127.0.0.1 - alice [14/May/2024:11:30:01 +0200] "HEAD /a%20b HTTP/1.1" 404 0 "http://x/\x22q\x22" "Mozilla/5.0 (X11)" "-"
"#;

fn fmt(spec: &str) -> LogFormat {
    LogFormat::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn record(f: &LogFormat, line: &str) -> super::format::Record {
    match f.line(line.as_bytes()) {
        Line::Request(r) => r,
        other => panic!("{line}: {other:?}"),
    }
}

fn opts(format: &str) -> AccessLogOptions {
    let mut o = AccessLogOptions::new(fmt(format));
    o.source = "access.log".to_owned();
    o
}

fn run(log: &str, o: &AccessLogOptions) -> Output {
    import(&mut log.as_bytes(), o).unwrap_or_else(|e| panic!("{e}"))
}

/// The scenario crate reads the output as `yace run -f` would.
fn validate(out: &Output, format: Format) -> scenario::Scenario {
    let f = match format {
        Format::Toml => scenario::Format::Toml,
        Format::Yaml => scenario::Format::Yaml,
    };
    scenario::parse(&out.text, f, "plan", Path::new("."), &BTreeMap::new())
        .unwrap_or_else(|d| panic!("{}\n{d}", out.text))
}

/// Journeys as (name, weight), and the step's (method, url).
fn journeys(s: &scenario::Scenario) -> Vec<(String, u64, String, String)> {
    let v: Value = s.to_json();
    v["journeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let step = &j["steps"][0];
            (
                j["name"].as_str().unwrap().to_owned(),
                j["weight"].as_f64().unwrap() as u64,
                step["method"].as_str().unwrap().to_owned(),
                step["url"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn combined_from_nginx_and_apache() {
    let f = fmt("combined");
    let r = record(&f, NGINX.lines().next().unwrap());
    assert_eq!(r.method, "GET");
    assert_eq!(r.target, b"/index.html?page=2");
    assert_eq!(r.status, Some(200));
    assert_eq!(r.time_ms, 1_715_679_000_000);
    assert!(!r.fine);
    // nginx's extras after the user agent ("main"), an escaped quote.
    let r = record(&f, NGINX.lines().nth(1).unwrap());
    assert_eq!((r.method.as_str(), r.status), ("HEAD", Some(404)));
    assert_eq!(r.time_ms, 1_715_679_001_000);
    // Apache escapes a quote in the request as \" and %b writes "-".
    let apache =
        r#"::1 - - [01/Jan/2025:00:00:00 +0000] "GET /q?x=\"y\" HTTP/1.0" 304 - "-" "ab/2.3""#;
    let r = record(&f, apache);
    assert_eq!(r.target, b"/q?x=\"y\"");
    assert_eq!(r.status, Some(304));
    // common reads the prefix of both.
    let c = fmt("common");
    assert_eq!(record(&c, apache).target, b"/q?x=\"y\"");
    let common =
        r#"10.1.2.3 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326"#;
    assert_eq!(record(&c, common).time_ms, 971_211_336_000);
}

#[test]
fn lines_without_a_request_are_not_bad() {
    let f = fmt("combined");
    for line in [
        r#"1.2.3.4 - - [14/May/2024:11:30:00 +0200] "-" 400 0 "-" "-""#,
        r#"1.2.3.4 - - [14/May/2024:11:30:00 +0200] "" 400 0 "-" "-""#,
        r#"1.2.3.4 - - [14/May/2024:11:30:00 +0200] "\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03" 400 157 "-" "-""#,
    ] {
        assert_eq!(f.line(line.as_bytes()), Line::NoRequest, "{line}");
    }
    for (line, why) in [
        (
            "garbage",
            "$remote_addr from column 1 has no ' ' (white space) after it",
        ),
        (
            r#"1.2.3.4 - - [14/May/2024 11:30:00] "GET / HTTP/1.1" 200 1 "-" "-""#,
            "$time_local '14/May/2024 11:30:00' is not a time",
        ),
        (
            r#"1.2.3.4 - - [14/May/2024:11:30:00 +0200] "GET / HTTP/1.1" OK 1 "-" "-""#,
            "status 'OK' is not a status code",
        ),
        (
            r#"1.2.3.4 - - [14/May/2024:11:30:00 +0200] "GET / HTTP/1.1"#,
            "$request from column 43 has no '\" ' after it",
        ),
    ] {
        match f.line(line.as_bytes()) {
            Line::Bad(w) => assert!(w.contains(why), "{line}: {w}"),
            other => panic!("{line}: {other:?}"),
        }
    }
}

#[test]
fn nginx_json_lines() {
    let f = fmt("nginx-json");
    let r = record(
        &f,
        r#"{"msec":"1715679000.250","request":"GET /a?b=1 HTTP/1.1","status":"200","request_time":"0.100"}"#,
    );
    assert_eq!(r.time_ms, 1_715_679_000_250);
    assert!(r.fine);
    assert_eq!(r.request_time_ms, Some(100));
    assert_eq!(r.target, b"/a?b=1");
    // Numbers, split method and URI, ISO time, a \u escape.
    let r = record(
        &f,
        r#"{"time_iso8601":"2024-05-14T11:30:00+02:00","request_method":"POST","uri":"/s\u0020p","args":"q=1","status":201}"#,
    );
    assert_eq!(r.method, "POST");
    assert_eq!(r.target, b"/s p?q=1");
    assert_eq!(r.status, Some(201));
    assert_eq!(r.time_ms, 1_715_679_000_000);
    assert!(matches!(f.line(b"{\"request\":\"GET / HTTP/1.1\"}"), Line::Bad(w) if w == "no time"));
    assert!(matches!(f.line(b"{\"msec\":"), Line::Bad(w) if w.starts_with("not JSON")));
}

#[test]
fn custom_log_formats() {
    // As pasted from nginx.conf: escape=, pieces in quotes, the semicolon.
    let f = fmt(
        r#"escape=json '{"t":"$msec","m":"$request_method",' '"u":"$request_uri","s":$status}';"#,
    );
    let r = record(
        &f,
        r#"{"t":"1715679000.005","m":"GET","u":"/x?\"y\"","s":200}"#,
    );
    assert_eq!(r.target, b"/x?\"y\"");
    assert_eq!(r.time_ms, 1_715_679_000_005);
    // $time_local holds a space, yet is followed by one.
    let f = fmt("$remote_addr $time_local $request_method $request_uri $status ${request_time}s");
    let r = record(&f, "10.0.0.1 14/May/2024:11:30:00 +0200 GET /p 200 0.250s");
    assert_eq!(
        (r.time_ms, r.request_time_ms),
        (1_715_679_000_000, Some(250))
    );
    assert!(matches!(
        f.line(b"10.0.0.1 14/May/2024:11:30:00 +0200 GET /p 200 0.250s trailing"),
        Line::Bad(w) if w.contains("text after the format's end")
    ));
    let f = fmt("[$time_iso8601] \"$request\" $status $http_x_anything");
    let r = record(
        &f,
        "[2024-05-14T09:30:00.500Z] \"GET http://h:8/abs?q HTTP/1.1\" 200 -",
    );
    assert_eq!(r.target, b"http://h:8/abs?q");
    assert!(r.fine);

    for (spec, why) in [
        ("apache", "not a format yace knows"),
        ("$remote_addr$request $msec", "have nothing between them"),
        ("[$time_local] $status", "names no request"),
        ("\"$request\" $status", "has no time"),
        ("${request", "never closed"),
    ] {
        let e = LogFormat::parse(spec).unwrap_err();
        assert!(e.message.contains(why), "{spec}: {e}");
    }
}

#[test]
fn the_mix_weights_each_url_by_its_count() {
    let mut log = String::new();
    for (n, target) in [(6, "/"), (3, "/b?x=1"), (1, "/c")] {
        for i in 0..n {
            log.push_str(&format!(
                "1.1.1.1 - - [14/May/2024:09:30:0{} +0000] \"GET {target} HTTP/1.1\" 200 5 \"-\" \"t\"\n",
                i % 4
            ));
        }
    }
    log.push_str(
        "1.1.1.1 - - [14/May/2024:09:30:03 +0000] \"POST /login HTTP/1.1\" 302 0 \"-\" \"t\"\n",
    );
    let out = run(&log, &opts("combined"));
    let s = validate(&out, Format::Toml);
    assert_eq!(
        journeys(&s),
        vec![
            ("GET /".into(), 6, "GET".into(), "/".into()),
            ("GET /b?x=1".into(), 3, "GET".into(), "/b?x=1".into()),
            ("GET /c".into(), 1, "GET".into(), "/c".into()),
        ]
    );
    // 10 requests over 4 seconds: 2.5/s for 4 s.
    let load = s.load_spec();
    assert_eq!(load.rate.len(), 1, "{}", out.text);
    assert_eq!((load.rate[0].from, load.rate[0].to), (2.5, 2.5));
    assert_eq!(load.rate[0].duration, std::time::Duration::from_secs(4));
    let notes = out.notes.join("\n");
    assert!(notes.contains("10 requests to replay"), "{notes}");
    assert!(
        notes.contains("1 of other methods (POST 1; --methods adds them)"),
        "{notes}"
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert!(out.text.contains("# 60.0%"), "{}", out.text);

    // --methods adds POST (without a body); --top 2 keeps two URLs;
    // --speed 2 doubles the rate and halves the length.
    let mut o = opts("combined");
    o.methods = None;
    o.top = 2;
    o.speed = 2.0;
    let out = run(&log, &o);
    let s = validate(&out, Format::Toml);
    let j = journeys(&s);
    assert_eq!(j.len(), 2);
    assert_eq!((j[0].1, j[1].1), (6, 3));
    let load = s.load_spec();
    assert_eq!(load.rate[0].from, 5.5);
    assert_eq!(load.rate[0].duration, std::time::Duration::from_secs(2));
    let notes = out.notes.join("\n");
    assert!(
        notes.contains("keeps the 2 most requested of 4 URLs (81.8% of the requests)"),
        "{notes}"
    );
    assert!(
        notes.contains("POST requests are replayed without a body"),
        "{notes}"
    );
    assert!(
        out.text
            .contains("Not in the mix: 2 more URLs, 2 requests (18.2%)"),
        "{}",
        out.text
    );

    // --duration holds it that long; YAML reads the same.
    let mut o = opts("combined");
    o.duration_ms = Some(90_000);
    o.output = Format::Yaml;
    o.base = Some("http://127.0.0.1:8080/app".into());
    let out = run(&log, &o);
    let s = validate(&out, Format::Yaml);
    assert_eq!(journeys(&s).len(), 3);
    assert_eq!(
        s.load_spec().rate[0].duration,
        std::time::Duration::from_secs(90)
    );
    assert_eq!(s.to_json()["base"], "http://127.0.0.1:8080/app");
}

#[test]
fn timed_stages_hold_each_seconds_count() {
    // Seconds 0..6 of the log: 3, 3, 0, 0, 5, 1 (as msec, request_time 0).
    let counts = [3u32, 3, 0, 0, 5, 1];
    let mut log = String::new();
    for (s, n) in counts.iter().enumerate() {
        for k in 0..*n {
            log.push_str(&format!(
                "{{\"msec\":\"{}.{:03}\",\"request\":\"GET /s{s} HTTP/1.1\",\"status\":\"200\"}}\n",
                1_715_679_000 + s,
                k * 100
            ));
        }
    }
    for speed in [1.0, 2.0, 3.0] {
        let mut o = opts("nginx-json");
        o.replay = Replay::Timed;
        o.speed = speed;
        let out = run(&log, &o);
        let s = validate(&out, Format::Toml);
        let stages = &s.load_spec().rate;
        // Equal seconds merged: 3×2, 0×2, 5, 1.
        assert_eq!(stages.len(), 4, "{}", out.text);
        let sent: Vec<f64> = stages
            .iter()
            .map(|st| st.from * st.duration.as_secs_f64())
            .collect();
        for (got, want) in sent.iter().zip([6.0, 0.0, 5.0, 1.0]) {
            assert!((got - want).abs() < 1e-9, "speed {speed}: {sent:?}");
        }
        let total: f64 = stages.iter().map(|st| st.duration.as_secs_f64()).sum();
        assert!(
            (total - 6.0 / speed).abs() < 0.002,
            "speed {speed}: {total}"
        );
        assert!(
            out.text
                .contains("2024-05-14 09:30:00 UTC +2s: 3/s in the log"),
            "{}",
            out.text
        );
        assert!(out
            .notes
            .iter()
            .any(|n| n.contains("the order of URLs within a second is the mix's")));
    }
    // --duration cuts the timetable.
    let mut o = opts("nginx-json");
    o.replay = Replay::Timed;
    o.duration_ms = Some(2_500);
    let out = run(&log, &o);
    let s = validate(&out, Format::Toml);
    let stages = &s.load_spec().rate;
    assert_eq!(stages.len(), 2, "{}", out.text);
    assert_eq!(stages[1].duration, std::time::Duration::from_millis(500));
    assert!(
        out.text.contains("Cut at --duration 2s 500ms."),
        "{}",
        out.text
    );
}

#[test]
fn request_time_moves_an_arrival_back() {
    // Ends at .900 of second 1 after 1.2 s: it came in second 0.
    let log = "{\"msec\":\"1715679001.900\",\"request\":\"GET / HTTP/1.1\",\"request_time\":\"1.200\"}\n\
               {\"msec\":\"1715679001.000\",\"request\":\"GET / HTTP/1.1\",\"request_time\":\"0.000\"}\n";
    let mut o = opts("nginx-json");
    o.replay = Replay::Timed;
    let out = run(log, &o);
    let s = validate(&out, Format::Toml);
    let rates: Vec<f64> = s.load_spec().rate.iter().map(|st| st.from).collect();
    assert_eq!(rates, vec![1.0], "{}", out.text);
    assert_eq!(
        s.load_spec().rate[0].duration,
        std::time::Duration::from_secs(2)
    );
    assert!(out.notes.iter().any(|n| n.contains("less $request_time")));
}

#[test]
fn secret_query_values_become_variables() {
    let log = "1.1.1.1 - - [14/May/2024:09:30:00 +0000] \"GET /api?access_token=abc123&page=2 HTTP/1.1\" 200 5 \"-\" \"t\"\n\
               1.1.1.1 - - [14/May/2024:09:30:00 +0000] \"GET /api?access_token=zzz999&page=2 HTTP/1.1\" 200 5 \"-\" \"t\"\n\
               1.1.1.1 - - [14/May/2024:09:30:01 +0000] \"GET /dl?X-Amz-Signature=f00d&sig=beef&q={{x}} HTTP/1.1\" 200 5 \"-\" \"t\"\n\
               1.1.1.1 - - [14/May/2024:09:30:01 +0000] \"GET /bad?token=leak1234 HTTP/1.1 oops\n";
    let out = run(log, &opts("combined"));
    let s = validate(&out, Format::Toml);
    let j = journeys(&s);
    // Two tokens, one URL; {{ in a logged URL is no template.
    assert_eq!(j[0].3, "/api?access_token={{access_token}}&page=2");
    assert_eq!(j[0].1, 2);
    assert_eq!(
        j[1].3,
        "/dl?X-Amz-Signature={{x_amz_signature}}&sig={{sig}}&q=%7B%7Bx%7D%7D"
    );
    let all = format!("{}{:?}{:?}", out.text, out.notes, out.warnings);
    for secret in ["abc123", "zzz999", "f00d", "beef", "leak1234"] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    assert!(
        out.text.contains("access_token = \"REPLACE_ME\""),
        "{}",
        out.text
    );
    assert!(all.contains("{{access_token}} (2)"), "{all}");
    // The bad line is sampled, its token masked.
    assert!(all.contains("access.log:4: "), "{all}");
    assert!(all.contains("token=***"), "{all}");
}

#[test]
fn bad_lines_are_counted_and_the_first_sampled() {
    let good = "1.1.1.1 - - [14/May/2024:09:30:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"t\"\n";
    let mut log = String::new();
    for i in 0..20 {
        if i % 3 == 1 {
            log.push_str(&format!("broken line {i}\n"));
        } else {
            log.push_str(good);
        }
    }
    log.push_str("\n\r\n");
    log.push_str(&format!("{}\n", "x".repeat(MAX_LINE + 10)));
    let out = run(&log, &opts("combined"));
    let w = out.warnings.join("\n");
    assert!(
        w.starts_with("8 of 21 lines did not read as combined (the first 5 below):"),
        "{w}"
    );
    for n in [2, 5, 8, 11, 14] {
        assert!(
            w.contains(&format!("access.log:{n}: $remote_user from column")),
            "{w}"
        );
    }
    assert!(!w.contains("access.log:17:"), "{w}");
    assert!(
        out.notes[0].contains("13 requests to replay"),
        "{:?}",
        out.notes
    );
    assert!(out.notes[0].contains("8 bad lines"), "{:?}", out.notes);
    assert!(!w.contains("is --format right"), "{w}");

    // Nothing good: an error, with the samples and the hint.
    let e = import(&mut "a\nb\n".as_bytes(), &opts("nginx-json")).unwrap_err();
    assert!(
        e.message
            .starts_with("nothing to replay in access.log: 2 lines read as nginx-json"),
        "{e}"
    );
    assert!(e.message.contains("access.log:2: not JSON"), "{e}");
    assert!(e.message.contains("is --format right?"), "{e}");
}

#[test]
fn long_lines_are_cut_not_kept() {
    let text = format!("{}\r\nnext\n{}", "a".repeat(MAX_LINE * 3), "last");
    let mut input = std::io::BufReader::with_capacity(1000, text.as_bytes());
    let mut buf = Vec::new();
    assert_eq!(read_line(&mut input, &mut buf).unwrap(), Some(true));
    assert_eq!(buf.len(), MAX_LINE);
    assert!(buf.capacity() < MAX_LINE * 2);
    assert_eq!(read_line(&mut input, &mut buf).unwrap(), Some(false));
    assert_eq!(buf, b"next");
    assert_eq!(read_line(&mut input, &mut buf).unwrap(), Some(false));
    assert_eq!(buf, b"last");
    assert_eq!(read_line(&mut input, &mut buf).unwrap(), None);
}

#[test]
fn targets_in_origin_form() {
    let t = |raw: &str| origin_form(raw.as_bytes()).ok();
    assert_eq!(t("/a b\"{c}#"), Some("/a%20b%22%7Bc%7D%23".into()));
    assert_eq!(t("http://h:8080/x?y=1"), Some("/x?y=1".into()));
    assert_eq!(t("HTTPS://h"), Some("/".into()));
    assert_eq!(t("/é"), Some("/%C3%A9".into()));
    assert_eq!(t("*"), None);
    assert_eq!(t("h:443"), None);
    assert_eq!(t(&format!("/{}", "a".repeat(MAX_TARGET))), None);
}

#[test]
fn the_mix_stays_bounded_and_keeps_the_frequent() {
    let mut m = Mix::with_cap(100);
    let mut total = 0;
    for i in 0..10_000u64 {
        m.add(&format!("GET /rare/{i}"));
        total += 1;
        if i % 10 == 0 {
            m.add("GET /hot");
            m.add("GET /warm");
            total += 2;
        }
        if i % 50 == 0 {
            m.add("GET /warm");
            total += 1;
        }
    }
    let ranked = m.ranked();
    assert!(ranked.len() <= 100);
    assert_eq!(ranked[0], ("GET /warm", 1200));
    assert_eq!(ranked[1], ("GET /hot", 1000));
    let kept: u64 = ranked.iter().map(|(_, c)| c).sum();
    assert_eq!(kept + m.folded, total);
    assert!(m.folds > 0);
}

#[test]
fn seconds_take_late_lines_and_refuse_a_runaway_span() {
    let mut s = Seconds::default();
    for t in [100, 101, 101, 99, 103, 99] {
        s.add(t).unwrap();
    }
    assert_eq!(s.span(), Some((99, 103)));
    assert_eq!(s.counts(), &[2, 1, 2, 0, 1]);
    assert!(s.add(103 + tally::MAX_SPAN_S).is_err());
    assert!(s.add(99 - tally::MAX_SPAN_S + 4).is_ok());
    assert_eq!(s.counts().len() as i64, tally::MAX_SPAN_S + 1);
}

#[test]
fn times_in_utc() {
    assert_eq!(utc(0), "1970-01-01 00:00:00");
    assert_eq!(utc(1_715_679_000), "2024-05-14 09:30:00");
    assert_eq!(utc(951_827_696), "2000-02-29 12:34:56");
}

/// `text` compressed by gzip, as one member.
fn gz(text: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

/// A combined log of `n` lines over ten URLs and `n / 10` seconds, with a
/// bad line every 97th.
fn many_lines(n: usize) -> String {
    let mut log = String::new();
    for i in 0..n {
        if i % 97 == 50 {
            log.push_str("not a log line\n");
            continue;
        }
        log.push_str(&format!(
            "10.0.0.{} - - [14/May/2024:09:{:02}:{:02} +0000] \"GET /p/{} HTTP/1.1\" 200 5 \"-\" \"t\"\n",
            i % 200,
            i / 10 / 60,
            i / 10 % 60,
            i % 10
        ));
    }
    log
}

/// A reader that hands out one byte at a time (a slow pipe).
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn a_gzip_log_reads_as_the_plain_one() {
    let log = many_lines(3000);
    for replay in [Replay::Mix, Replay::Timed] {
        let mut o = opts("combined");
        o.replay = replay;
        let plain = run(&log, &o);
        assert_eq!(plain.warnings.len(), 6, "{:?}", plain.warnings);
        assert!(
            plain.warnings[0].starts_with("31 of 3000 lines"),
            "{:?}",
            plain.warnings
        );
        let packed = gz(log.as_bytes());
        let out = import(&mut &packed[..], &o).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, plain);
        // Two members, as `cat a.gz b.gz` or logrotate's copies make: read whole.
        let (a, b) = log.split_at(log.len() / 3);
        let mut two = gz(a.as_bytes());
        two.extend(gz(b.as_bytes()));
        let out = import(&mut &two[..], &o).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, plain);
        // A pipe that gives a byte at a time: the magic is still seen.
        let mut slow = std::io::BufReader::with_capacity(1, Trickle(&packed));
        let out = import(&mut slow, &o).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, plain);
    }
}

#[test]
fn several_logs_read_in_turn_as_one() {
    let log = many_lines(800);
    let o = opts("combined");
    let whole = run(&log, &o);
    // Cut at a line's end: the older part gzipped, the newer plain.
    let cut = log[..log.len() / 2].rfind('\n').unwrap() + 1;
    let (old, new) = log.split_at(cut);
    let old_lines = old.lines().count() as u64;
    let packed = gz(old.as_bytes());
    let files = vec![
        LogFile {
            name: "access.log.1.gz".to_owned(),
            reader: Box::new(&packed[..]),
        },
        LogFile {
            name: "access.log".to_owned(),
            reader: Box::new(new.as_bytes()),
        },
    ];
    let out = import_files(files, &o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.text, whole.text);
    assert_eq!(out.notes, whole.notes);
    // Bad lines by file, and line of that file.
    let bad: Vec<u64> = (0..800u64)
        .filter(|i| i % 97 == 50)
        .map(|i| i + 1)
        .collect();
    let mut want = Vec::new();
    for n in &bad[..5] {
        if *n <= old_lines {
            want.push(format!("access.log.1.gz:{n}: "));
        } else {
            want.push(format!("access.log:{}: ", n - old_lines));
        }
    }
    assert!(
        want.iter().any(|w| w.starts_with("access.log:")),
        "{want:?}"
    );
    for (w, got) in want.iter().zip(&out.warnings[1..]) {
        assert!(got.starts_with(w), "{w} {got}");
    }
}

#[test]
fn a_damaged_gzip_log_is_an_error_with_its_byte() {
    let log = many_lines(20_000);
    let o = opts("combined");
    let packed = gz(log.as_bytes());
    // Cut short: the error says where the data ended.
    let cut = packed.len() / 2;
    let e = import(&mut &packed[..cut], &o).unwrap_err().message;
    assert!(e.starts_with("access.log: cannot read line "), "{e}");
    assert!(
        e.contains(&format!(
            "the gzip data ends early, at byte {cut} of the file"
        )),
        "{e}"
    );
    // A damaged block: the byte is where the decoder was, near the damage.
    let mut bad = packed.clone();
    for b in &mut bad[cut..cut + 64] {
        *b = !*b;
    }
    let e = import(&mut &bad[..], &o).unwrap_err().message;
    let at: u64 = e
        .split("damaged at byte ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(at as usize >= cut && at as usize <= cut + (64 << 10), "{e}");
    assert!(e.contains("`gzip -t FILE` checks a file"), "{e}");
    // The header only.
    let e = import(&mut &packed[..5], &o).unwrap_err().message;
    assert!(e.contains("the gzip data ends early, at byte"), "{e}");
    // Other compressions are named, with the command that reads them.
    for (magic, name) in [
        (&b"\x28\xb5\x2f\xfd\x00"[..], "zstd"),
        (b"\xfd7zXZ\x00\x00", "xz"),
        (b"BZh91AY&SY", "bzip2"),
    ] {
        let e = import(&mut &magic[..], &o).unwrap_err().message;
        assert!(
            e.starts_with(&format!("access.log: compressed with {name}")),
            "{e}"
        );
    }
    // A log whose first line starts "BZh" is text.
    let mut text = "BZh".to_owned();
    text.push_str(&many_lines(3));
    let out = import(&mut text.as_bytes(), &o).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.notes[0].contains("3 requests to replay"),
        "{:?}",
        out.notes
    );
}
