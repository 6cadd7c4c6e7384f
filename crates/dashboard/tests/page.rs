//! The page's server over real sockets on loopback, fed rows as a run's
//! observer feeds them: what a reader gets (the page, the charts whole,
//! then each new second, then the report), who is let in (the token, the
//! Host), and that no reader — too many, stuck, or stalled at the end —
//! holds up the feeding or the end. (The real run with a browser:
//! tests/browser/dashboard.py; with yace's own flags: the CLI's tests.)

use report::lang::Lang;
use serde_json::Value;
use stats::{RunResult, SecondRow};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use yace_dashboard::{Limits, Options, Page, Run, LIMITS};

/// A committed result of a real open-model run, with `seconds` rows made
/// from its first.
fn result(seconds: u64) -> RunResult {
    let mut r: RunResult =
        serde_json::from_str(include_str!("../../report/tests/render/fixtures/open.json"))
            .expect("the fixture reads");
    let row = r.series[0].clone();
    r.series = (0..seconds)
        .map(|s| SecondRow {
            second: s,
            responses: 300 + s,
            ..row.clone()
        })
        .collect();
    r
}

fn run(r: &RunResult) -> Run {
    Run {
        plan: r.plan.clone(),
        threads: r.client.threads,
        cpus_allowed: 2,
        planned_s: Some(r.series.len() as f64),
        planned_requests: None,
    }
}

fn start(addr: &str, token: Option<&str>, limits: Limits, r: &RunResult) -> Page {
    let o = Options::from_flags(addr, token, Lang::En).expect("valid flags");
    Page::start_with(o, run(r), limits).expect("listens")
}

fn connect(page: &Page) -> TcpStream {
    let s = TcpStream::connect(page.addr()).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// `GET target` with `host` (None: the page's address): status and body.
fn get(page: &Page, target: &str, host: Option<&str>) -> (u16, String) {
    let mut s = connect(page);
    let host = host.map_or_else(|| page.addr().to_string(), str::to_string);
    write!(s, "GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out)
        .expect("an answer, then the close");
    let status = out[9..12].parse().expect("a status line");
    let body = out
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// A reader of the stream.
struct Reader(BufReader<TcpStream>);

impl Reader {
    fn open(page: &Page, query: &str) -> Reader {
        let mut s = connect(page);
        write!(
            s,
            "GET /events{query} HTTP/1.1\r\nHost: {}\r\n\r\n",
            page.addr()
        )
        .unwrap();
        let mut r = BufReader::new(s);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line);
        }
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(head.contains("Content-Type: text/event-stream"), "{head}");
        Reader(r)
    }

    /// The next event: its name and data.
    fn next(&mut self) -> (String, Value) {
        let (mut name, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            let n = self.0.read_line(&mut line).expect("an event in time");
            assert!(n > 0, "the stream ended");
            match line.trim_end_matches('\n') {
                "" if !name.is_empty() => break,
                l => {
                    if let Some(v) = l.strip_prefix("event: ") {
                        name = v.into();
                    } else if let Some(v) = l.strip_prefix("data: ") {
                        data = v.into();
                    }
                }
            }
        }
        (name, serde_json::from_str(&data).expect("JSON data"))
    }
}

/// What the page's script does with a tail (assets/live.js).
fn apply(charts: &mut [Value], tail: &Value) {
    for t in tail["tails"].as_array().unwrap() {
        let c = &mut charts[t["chart"].as_u64().unwrap() as usize];
        let at = t["at"].as_u64().unwrap() as usize;
        let splice = |to: &mut Value, from: &Value| {
            let a = to.as_array_mut().unwrap();
            a.truncate(at);
            a.extend(from.as_array().unwrap().iter().cloned());
        };
        splice(&mut c["x"], &t["x"]);
        for (k, s) in t["series"].as_array().unwrap().iter().enumerate() {
            for key in ["values", "lo", "hi"] {
                if let Some(v) = s.get(key) {
                    splice(&mut c["series"][k][key], v);
                }
            }
        }
    }
}

#[test]
fn a_reader_gets_the_charts_then_each_new_second_then_the_report() {
    let r = result(6);
    let mut page = start("", None, LIMITS, &r);
    let (status, html) = get(&page, "/", None);
    assert_eq!(status, 200);
    assert!(html.contains("id=\"yace-live-status\"") && html.contains("connect-src 'self'"));
    assert!(
        html.contains("new EventSource"),
        "the page follows its stream"
    );

    let mut reader = Reader::open(&page, "");
    let (name, first) = reader.next();
    assert_eq!(
        (name.as_str(), first["charts"].as_array().unwrap().len()),
        ("full", 0)
    );
    assert!(first["status"]
        .as_str()
        .unwrap()
        .starts_with("Running: 0:00"));

    page.observe(&r.series[..3]);
    let (name, full) = reader.next();
    assert_eq!(name, "full", "the charts appeared: the whole of them");
    let mut charts = full["charts"].as_array().unwrap().clone();
    let ids: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["throughput", "latency", "statuses", "inflight", "client"]
    );
    assert_eq!(charts[0]["x"].as_array().unwrap().len(), 3);
    assert!(full["figures"]["throughput"]
        .as_str()
        .unwrap()
        .contains("data-chart=\"throughput\""));

    // One more second: only what changed, which makes the same charts as a
    // reader who connects now gets whole.
    page.observe(&r.series[..4]);
    let (name, tail) = reader.next();
    assert_eq!(name, "tail");
    assert_eq!(tail["from"], full["v"]);
    let bytes = tail.to_string().len();
    assert!(
        bytes < full.to_string().len() / 3,
        "a tail is small: {bytes} bytes"
    );
    apply(&mut charts, &tail);
    let (_, now) = Reader::open(&page, "").next();
    assert_eq!(Value::from(charts.clone()), now["charts"]);
    assert_eq!(charts[0]["series"][0]["values"][3], 303.0);
    assert_eq!(tail["status"], now["status"]);

    // The end: the result's charts, then its report, then the close.
    let ended = std::thread::spawn({
        let r = r.clone();
        move || {
            let t = Instant::now();
            page.finish(&r);
            t.elapsed()
        }
    });
    let (name, last) = reader.next();
    assert_eq!(name, "tail");
    apply(&mut charts, &last);
    assert_eq!(charts[0]["x"].as_array().unwrap().len(), 6);
    let (name, end) = reader.next();
    assert_eq!(name, "end");
    let mut want = Vec::new();
    report::html::report_in(&r, &mut want, Lang::En).unwrap();
    assert_eq!(end["report"].as_str().unwrap().as_bytes(), &want[..]);
    assert!(end["file"].as_str().unwrap().ends_with(".html"));
    assert!(end["status"].as_str().unwrap().starts_with("Ended after"));
    let mut rest = Vec::new();
    reader.0.read_to_end(&mut rest).expect("the stream closes");
    assert!(rest.is_empty());
    // The other reader never read its report: it is left behind promptly.
    let took = ended.join().unwrap();
    assert!(took < Duration::from_secs(2), "finish took {took:?}");
}

#[test]
fn any_address_but_the_default_needs_the_token() {
    let r = result(2);
    // 127.0.0.2: loopback, but not the default: a token is made.
    let o = Options::from_flags("127.0.0.2", None, Lang::En).unwrap();
    assert!(o.made);
    let token = o.token.clone().expect("a token was made");
    let page = Page::start(o, run(&r)).unwrap();
    assert!(page.announcement().contains(&format!("?token={token}")));
    assert_eq!(get(&page, "/", None).0, 403);
    assert_eq!(get(&page, "/events", None).0, 403);
    assert_eq!(get(&page, "/?token=", None).0, 403);
    let wrong = format!("/?token={}", &token[..31]);
    assert_eq!(get(&page, &wrong, None).0, 403);
    let (status, body) = get(&page, &format!("/?token={token}"), None);
    assert_eq!(status, 200);
    assert!(
        !body.contains(&token),
        "the page itself does not hold its token"
    );
    // Any name for the host will do with the token.
    assert_eq!(
        get(&page, &format!("/?token={token}"), Some("box.example:80")).0,
        200
    );
    Reader::open(&page, &format!("?token={token}")).next();

    // A token of one's own: not said.
    let o = Options::from_flags("127.0.0.2", Some("s3cret-token"), Lang::En).unwrap();
    let page = Page::start(o, run(&r)).unwrap();
    assert!(!page.announcement().contains("s3cret"));
    assert_eq!(get(&page, "/?token=s3cret-tokem", None).0, 403);
    assert_eq!(get(&page, "/?token=s3cret%2Dtoken", None).0, 200);
}

#[test]
fn without_a_token_the_page_is_asked_for_by_address() {
    let r = result(2);
    let page = start("", None, LIMITS, &r);
    assert!(page.url(true).starts_with("http://127.0.0.1:"));
    assert_eq!(get(&page, "/", Some("localhost")).0, 200);
    // A DNS name rebound to 127.0.0.1 (another site's page in the browser).
    let (status, body) = get(&page, "/", Some("evil.example"));
    assert_eq!(status, 403, "{body}");
    assert_eq!(get(&page, "/events", Some("evil.example:80")).0, 403);
    assert_eq!(get(&page, "/nope", None).0, 404);
    assert_eq!(get(&page, "/favicon.ico", None).0, 204);
}

#[test]
fn readers_past_the_limit_are_turned_away() {
    let r = result(2);
    let limits = Limits {
        clients: 2,
        ..LIMITS
    };
    let page = start("", None, limits, &r);
    let mut a = Reader::open(&page, "");
    let mut b = Reader::open(&page, "");
    a.next();
    b.next();
    let (status, body) = get(&page, "/", None);
    assert_eq!(status, 503, "{body}");
    drop(a);
    // Its place is free again once the server sees it gone.
    let deadline = Instant::now() + Duration::from_secs(5);
    while get(&page, "/", None).0 != 200 {
        assert!(Instant::now() < deadline, "the place was not freed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A connection with a small receive window that sends `request` and
/// then never reads: a browser tab that stopped (loopback's own buffers
/// would take tens of MB first).
fn stalled(page: &Page, request: &str) -> TcpStream {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&page.addr().into()).unwrap();
    let mut s: TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {request} HTTP/1.1\r\nHost: {}\r\n\r\n", page.addr()).unwrap();
    s
}

/// Everything a connection still gives, and whether it ended (false: it
/// is still open, with nothing more to say for `quiet`).
fn drain(s: &mut TcpStream, quiet: Duration) -> (Vec<u8>, bool) {
    s.set_read_timeout(Some(quiet)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (got, true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (got, true),
            Err(_) => return (got, false),
        }
    }
}

#[test]
fn stalled_readers_hold_up_neither_the_run_nor_the_others_and_a_stuck_one_is_dropped() {
    // Large charts (3,000 seconds: 1,500 points a line), fed as a run
    // feeds them, a few seconds at a time.
    let r = result(3040);
    let limits = Limits {
        stuck: Duration::from_millis(500),
        ..LIMITS
    };
    let mut page = start("", None, limits, &r);
    // A stream that is never read, and a page that is never read.
    let mut stream = stalled(&page, "/events");
    let mut healthy = Reader::open(&page, "");
    healthy.next();
    page.observe(&r.series[..3000]);
    healthy.next();
    let mut tab = stalled(&page, "/");
    let mut slowest = Duration::ZERO;
    for end in 3001..=3040 {
        let t = Instant::now();
        page.observe(&r.series[..end]);
        slowest = slowest.max(t.elapsed());
        // The healthy reader follows: it gets each second as it comes.
        let now = format!("Running: {}:{:02} of", end / 60, end % 60);
        let (_, e) = healthy.next();
        assert!(e["status"].as_str().unwrap().starts_with(&now), "{e}");
        std::thread::sleep(Duration::from_millis(25));
    }
    // Waiting on the stalled tab would take its grace (seconds); a busy
    // machine may take tens of milliseconds for the work itself.
    assert!(
        slowest < Duration::from_secs(1),
        "handing rows over never waits: slowest {slowest:?}"
    );
    // The page (a few hundred KB) did not fit the stalled tab's window:
    // it is dropped once it has owed it for `stuck`. Read now, it ends.
    let (got, ended) = drain(&mut tab, Duration::from_secs(10));
    assert!(
        ended,
        "the stuck tab was dropped, after {} bytes",
        got.len()
    );
    let page_bytes = get(&page, "/", None).1.len();
    assert!(
        page_bytes > 200_000 && got.len() < page_bytes,
        "{} of {page_bytes} bytes",
        got.len()
    );
    // The stalled stream is behind only by what its socket holds: once
    // read, it is caught up (the newest second), and still open.
    let (got, ended) = drain(&mut stream, Duration::from_millis(1500));
    let text = String::from_utf8_lossy(&got);
    assert!(
        !ended,
        "a stream whose socket still took its events is kept"
    );
    assert!(text.contains("Running: 50:40 of"), "it was caught up");
}

#[test]
fn the_end_does_not_wait_for_a_reader_that_stopped_reading() {
    let r = result(3000);
    let mut page = start("", None, LIMITS, &r);
    let mut stalled = stalled(&page, "/events");
    for end in (0..=3000).step_by(100) {
        page.observe(&r.series[..end]);
        std::thread::sleep(Duration::from_millis(5));
    }
    let t = Instant::now();
    page.finish(&r);
    let took = t.elapsed();
    // Left behind after `end_idle` (300 ms) without taking a byte, well
    // before the grace (3 s) is out; the report is made in the meantime.
    assert!(
        took < Duration::from_secs(2),
        "the end waited {took:?} for a reader that takes nothing"
    );
    // What its socket took of the stream, then the close.
    let (got, ended) = drain(&mut stalled, Duration::from_secs(10));
    assert!(ended, "it was closed after {} bytes", got.len());
}
