//! Steering from the page (`--dashboard-control`) over real sockets on
//! loopback: who may send a control request (the token in its header,
//! the page's own Host, no other site's Origin), what it is answered, what
//! the callback is handed, and what the page shows: buttons, the reason it
//! has none, or nothing at all when read-only. (The real run, the
//! result's timeline and the server's count: the CLI's tests; a browser
//! clicking: tests/browser/dashboard.py.)

use report::lang::Lang;
use stats::RunResult;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use yace_dashboard::{Action, Control, Options, Page, Run};

fn run() -> Run {
    let r: RunResult =
        serde_json::from_str(include_str!("../../report/tests/render/fixtures/open.json"))
            .expect("the fixture reads");
    Run {
        plan: r.plan.clone(),
        threads: r.client.threads,
        cpus_allowed: 2,
        planned_s: Some(10.0),
        planned_requests: None,
    }
}

/// A page with control on: the actions its callback was handed.
fn steered(token: Option<&str>) -> (Page, Arc<Mutex<Vec<Action>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let control = Control::On {
        act: Arc::new(move |a| {
            log.lock().unwrap().push(a);
            format!("did {a:?}")
        }),
        now: Arc::new(|| "×1.10 · 110/s".to_string()),
        users: false,
    };
    let o = Options::from_flags("", token, Lang::En)
        .unwrap()
        .with_control(control)
        .unwrap();
    (Page::start(o, run()).expect("listens"), seen)
}

/// Sends `head` (a request's lines, without the blank line) and `body`:
/// the status and the answer's body.
fn send(page: &Page, head: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(page.addr()).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "{head}\r\n\r\n{body}").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out)
        .expect("an answer, then the close");
    let status = out[9..12].parse().expect("a status line");
    (
        status,
        out.split_once("\r\n\r\n").map_or("", |x| x.1).into(),
    )
}

/// `POST /control` the way the page's script sends it, with `extra`
/// header lines.
fn post(page: &Page, extra: &str, body: &str) -> (u16, String) {
    let host = page.addr();
    let mut head = format!(
        "POST /control HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}",
        body.len()
    );
    if !extra.is_empty() {
        head.push_str("\r\n");
        head.push_str(extra);
    }
    send(page, &head, body)
}

fn token_of(page: &Page) -> String {
    let url = page.url(true);
    url.split_once("?token=").expect("a token").1.to_string()
}

#[test]
fn control_needs_the_token_in_a_header_the_pages_host_and_origin() {
    let (page, seen) = steered(None);
    // Even on 127.0.0.1, a token is made, and said with the address.
    let token = token_of(&page);
    assert_eq!(token.len(), 32);
    let said = page.announcement();
    assert!(
        said.contains(&format!("?token={token}")) && said.contains("steer"),
        "{said}"
    );
    let auth = format!("X-Yace-Token: {token}");
    let addr = page.addr();

    let refused = [
        (post(&page, "", "faster"), "no token"),
        (post(&page, "X-Yace-Token: 0123", "faster"), "a wrong token"),
        (
            post(&page, &format!("X-Yace-Token: {}x", &token[1..]), "faster"),
            "a token one byte off",
        ),
        (
            send(
                &page,
                &format!(
                    "POST /control?token={token} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 6"
                ),
                "faster",
            ),
            "the token in the query",
        ),
        (
            send(
                &page,
                &format!(
                    "POST /control HTTP/1.1\r\nHost: rebound.example:{}\r\n{auth}\r\n\
                     Content-Length: 6",
                    addr.port()
                ),
                "faster",
            ),
            "a rebound DNS name",
        ),
        (
            post(
                &page,
                &format!("{auth}\r\nOrigin: http://evil.example"),
                "faster",
            ),
            "another site's origin",
        ),
        (
            post(
                &page,
                &format!("{auth}\r\nSec-Fetch-Site: cross-site"),
                "faster",
            ),
            "a cross-site fetch",
        ),
    ];
    for ((status, body), what) in refused {
        assert_eq!(status, 403, "{what}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .starts_with("yace --dashboard:"),
            "{what}: {v}"
        );
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing refused was carried out"
    );

    // The page's own request: carried out, answered with what it did.
    let own = format!("{auth}\r\nOrigin: http://{addr}\r\nSec-Fetch-Site: same-origin");
    let (status, body) = post(&page, &own, "faster");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["message"], "did Faster");
    assert_eq!(v["now"], "×1.10 · 110/s");
    // Without an Origin (curl): the token is enough.
    assert_eq!(post(&page, &auth, "rate=250").0, 200);
    assert_eq!(post(&page, &auth, "pause").0, 200);
    assert_eq!(
        *seen.lock().unwrap(),
        [Action::Faster, Action::Rate(250.0), Action::Pause]
    );

    // Bad bodies, a body too long, no length, not a POST.
    let (status, body) = post(&page, &auth, "faster!");
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("send faster, slower, pause or rate=N"),
        "{body}"
    );
    assert_eq!(post(&page, &auth, "rate=-3").0, 400);
    assert_eq!(post(&page, &auth, &"x".repeat(65)).0, 413);
    let chunked =
        format!("POST /control HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\nTransfer-Encoding: chunked");
    assert_eq!(send(&page, &chunked, "6\r\nfaster\r\n0\r\n\r\n").0, 411);
    let get = format!("GET /control HTTP/1.1\r\nHost: {addr}\r\n{auth}");
    assert_eq!(send(&page, &get, "").0, 405);
    assert_eq!(
        seen.lock().unwrap().len(),
        3,
        "none of them was carried out"
    );

    // The page (with the token: reading needs it now) has the buttons and
    // their script, and says where the steering stands.
    let (status, html) = send(
        &page,
        &format!("GET /?token={token} HTTP/1.1\r\nHost: {addr}"),
        "",
    );
    assert_eq!(status, 200);
    assert!(html.contains("data-control=\"faster\"") && html.contains("id=\"yace-live-rate\""));
    assert!(html.contains("X-Yace-Token") && html.contains("fetch(\"control\""));
    assert!(html.contains("×1.10 · 110/s"));
    assert!(!html.contains(&token), "the page holds no token of its own");
    assert_eq!(
        send(&page, &format!("GET / HTTP/1.1\r\nHost: {addr}"), "").0,
        403
    );
}

#[test]
fn a_body_sent_after_the_head_is_waited_for() {
    let (page, seen) = steered(Some("my-own-token-1234"));
    let mut s = TcpStream::connect(page.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /control HTTP/1.1\r\nHost: {}\r\nX-Yace-Token: my-own-token-1234\r\n\
         Content-Length: 6\r\n\r\n",
        page.addr()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    s.write_all(b"slower").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert_eq!(*seen.lock().unwrap(), [Action::Slower]);
    // A token of one's own is not said.
    assert!(!page.announcement().contains("my-own"));
}

#[test]
fn read_only_or_not_steerable_pages_refuse_control_and_say_so() {
    // Without --dashboard-control: 403, and no control on the page, nor
    // any script that could send one.
    let o = Options::from_flags("", None, Lang::En).unwrap();
    let page = Page::start(o, run()).unwrap();
    let addr = page.addr();
    let (status, body) = post(&page, "X-Yace-Token: x", "faster");
    assert_eq!(status, 403);
    assert!(body.contains("--dashboard-control"), "{body}");
    let (_, html) = send(&page, &format!("GET / HTTP/1.1\r\nHost: {addr}"), "");
    assert!(!html.contains("id=\"yace-live-control\"") && !html.contains("fetch("));
    assert!(page.announcement().contains("read-only"));
    drop(page);

    // Control asked for, on a run that cannot be steered: 409 with why,
    // and the page says it instead of buttons.
    let why = "a shard's load is not steered";
    let o = Options::from_flags("", None, Lang::En)
        .unwrap()
        .with_control(Control::Unavailable(why.into()))
        .unwrap();
    let page = Page::start(o, run()).unwrap();
    let token = token_of(&page);
    let (status, body) = post(&page, &format!("X-Yace-Token: {token}"), "faster");
    assert_eq!(status, 409, "{body}");
    assert!(body.contains(why), "{body}");
    let (_, html) = send(
        &page,
        &format!("GET /?token={token} HTTP/1.1\r\nHost: {}", page.addr()),
        "",
    );
    assert!(html.contains("This run cannot be steered from the page: a shard"));
    assert!(!html.contains("data-control=") && !html.contains("fetch("));
}
