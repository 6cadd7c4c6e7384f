//! Running scenarios: request bytes, templating, extraction, checks,
//! cookies, choices and data rows, as the engine would drive them.

use crate::toml;
use crate::wire;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use yace_scenario::{parse, Action, Capture, CheckCount, Format, Runner, Scenario, Source, User};

const MS: Duration = Duration::from_millis(1);

/// Drives one user: the next request's bytes and action.
fn next(r: &mut Runner, u: &mut User) -> (Action, String) {
    let mut out = Vec::new();
    let a = r.next(u, &mut out);
    (a, String::from_utf8(out).unwrap())
}

fn step_of(a: Action) -> u16 {
    match a {
        Action::Request { step, .. } => step,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// Sends the next request and answers it with `resp`; returns the request.
fn exchange(r: &mut Runner, u: &mut User, resp: &str) -> String {
    let (a, req) = loop {
        let (a, req) = next(r, u);
        if !matches!(a, Action::Think(_)) {
            break (a, req);
        }
    };
    let step = step_of(a);
    let status = resp[9..12].parse().unwrap();
    r.response(u, step, status, Some(&wire(resp.as_bytes(), status)), MS);
    req
}

fn counts(r: &Runner) -> Vec<(String, u64, u64)> {
    r.counters()
        .into_iter()
        .map(
            |CheckCount {
                 name,
                 passed,
                 failed,
                 ..
             }| (name, passed, failed),
        )
        .collect()
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

const UA: &str = concat!("User-Agent: yace/", env!("CARGO_PKG_VERSION"), "\r\n");

#[test]
fn request_bytes_get_form_json() {
    let s = toml(
        r#"base = "http://127.0.0.1:8080"
[vars]
tenant = "acme corp"
[[step]]
name = "get"
url = "/a b?x={{tenant}}"
headers = { "X-Tenant" = "{{tenant}}" }
[[step]]
name = "form"
method = "post"
url = "/login"
form = { user = "al ice", pass = "p&w=1" }
[[step]]
name = "json"
method = "PUT"
url = "/j"
json = { name = "say \"{{tenant}}\"", n = 1.5, ok = true, list = [1, "x"], none = {} }
[[step]]
name = "head"
method = "HEAD"
url = "/h"
headers = { "User-Agent" = "mine", Accept = "text/html" }
"#,
    )
    .unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let get = exchange(&mut r, &mut u, &ok(""));
    assert_eq!(
        get,
        format!(
            "GET /a%20b?x=acme%20corp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Accept: */*\r\n\
             X-Tenant: acme corp\r\n\r\n"
        )
    );
    let form = exchange(&mut r, &mut u, &ok(""));
    assert_eq!(
        form,
        format!(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Accept: */*\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 26\r\n\r\n\
             user=al+ice&pass=p%26w%3D1"
        )
    );
    let body = r#"{"name":"say \"acme corp\"","n":1.5,"ok":true,"list":[1,"x"],"none":{}}"#;
    let json = exchange(&mut r, &mut u, &ok(""));
    assert_eq!(
        json,
        format!(
            "PUT /j HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Accept: */*\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    );
    serde_json::from_str::<serde_json::Value>(body).unwrap();
    let (a, head) = next(&mut r, &mut u);
    assert_eq!(
        a,
        Action::Request {
            step: 3,
            capture: Capture::Head,
            head: true,
            idempotent: true
        }
    );
    assert_eq!(
        head,
        "HEAD /h HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: mine\r\nAccept: text/html\r\n\r\n"
    );
}

#[test]
fn post_without_body_sends_zero_length_and_base_path_prefixes() {
    let s = toml("base = 'http://h/api/'\n[[step]]\nmethod = 'POST'\nurl = '/x'\n[[step]]\nurl = 'http://h/abs?q=1'\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let post = exchange(&mut r, &mut u, &ok(""));
    assert!(
        post.starts_with("POST /api/x HTTP/1.1\r\nHost: h\r\n"),
        "{post}"
    );
    assert!(post.ends_with("Content-Length: 0\r\n\r\n"), "{post}");
    let abs = exchange(&mut r, &mut u, &ok(""));
    assert!(abs.starts_with("GET /abs?q=1 HTTP/1.1\r\n"), "{abs}");
}

const LOGIN: &str = r#"base = "http://127.0.0.1:8080"
[load]
think = "1s"
[[data]]
name = "accounts"
file = "accounts.csv"
[[step]]
name = "login"
method = "POST"
url = "/login"
json = { user = "{{accounts.user}}" }
extract = [
  { var = "token", json = "$.data.token" },
  { var = "id", regex = "id=(\\d+)" },
  { var = "next", header = "Location" },
  { var = "sid", cookie = "SID" },
  { var = "missing", json = "$.nope" },
]
check = [
  { status = 200 },
  { status_in = [200, 201] },
  { body_contains = "token" },
  { json = "$.data.ok", equals = 1 },
  { header = "X-Ok", equals = "yes" },
  { max_latency = "1ms" },
]
think = "0"
[[step]]
name = "next"
url = "{{next}}"
headers = { Authorization = "Bearer {{token}}", "X-Id" = "{{id}}", "X-Missing" = "[{{missing}}]" }
"#;

#[test]
fn extract_then_template_with_cookies_and_chunked_json() {
    let s = toml(LOGIN).unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(1);
    let (a, req) = next(&mut r, &mut u);
    assert_eq!(
        a,
        Action::Request {
            step: 0,
            capture: Capture::HeadAndBody,
            head: false,
            idempotent: false
        }
    );
    assert!(req.ends_with("\r\n\r\n{\"user\":\"bob\"}"), "{req}");
    // A chunked JSON body, split mid-token.
    let body = r#"{"data":{"token":"t-1","ok":1.0},"x":"id=42"}"#;
    let (b1, b2) = body.split_at(20);
    let resp = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nLocation: http://127.0.0.1:8080/home?a=1\r\n\
         Set-Cookie: SID=s1; Path=/; HttpOnly\r\nX-Ok: yes\r\n\r\n{:x}\r\n{b1}\r\n{:x}\r\n{b2}\r\n0\r\n\r\n",
        b1.len(),
        b2.len()
    );
    r.response(
        &mut u,
        0,
        200,
        Some(&wire(resp.as_bytes(), 200)),
        Duration::from_millis(2),
    );
    // Step think is "0": no pause before the next request.
    let (_, req) = next(&mut r, &mut u);
    assert_eq!(
        req,
        format!(
            "GET /home?a=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Accept: */*\r\n\
             Authorization: Bearer t-1\r\nX-Id: 42\r\nX-Missing: []\r\nCookie: SID=s1\r\n\r\n"
        )
    );
    assert_eq!(
        counts(&r),
        [
            ("extract token".into(), 1, 0),
            ("extract id".into(), 1, 0),
            ("extract next".into(), 1, 0),
            ("extract sid".into(), 1, 0),
            ("extract missing".into(), 0, 1),
            ("status == 200".into(), 1, 0),
            ("status in [200, 201]".into(), 1, 0),
            ("body contains \"token\"".into(), 1, 0),
            ("json $.data.ok == 1".into(), 1, 0),
            ("header X-Ok == \"yes\"".into(), 1, 0),
            ("latency <= 1ms".into(), 0, 1),
        ]
    );
    r.response(&mut u, 1, 200, Some(&wire(ok("").as_bytes(), 200)), MS);
    // The default think time comes after the last step, then the end.
    assert_eq!(
        next(&mut r, &mut u).0,
        Action::Think(Duration::from_secs(1))
    );
    assert_eq!(next(&mut r, &mut u).0, Action::EndIteration);
    assert_eq!(u.iterations(), 1);
    // A failing response: every extract fails (empty values), checks count.
    let (_, req) = next(&mut r, &mut u);
    assert!(
        req.contains("Cookie: SID=s1\r\n"),
        "the jar outlives the iteration"
    );
    let bad = "HTTP/1.1 500 Oops\r\nContent-Length: 4\r\nSet-Cookie: SID=; Max-Age=0\r\n\r\nnope";
    r.response(&mut u, 0, 500, Some(&wire(bad.as_bytes(), 500)), MS);
    let (_, req) = next(&mut r, &mut u);
    assert!(
        req.starts_with("GET / HTTP/1.1\r\n"),
        "empty next: base path; {req}"
    );
    assert!(
        req.contains("Authorization: Bearer \r\nX-Id: \r\n"),
        "{req}"
    );
    assert!(!req.contains("Cookie:"), "deleted by Max-Age=0: {req}");
    let c = counts(&r);
    assert_eq!(c[0], ("extract token".into(), 1, 1));
    assert_eq!(c[5], ("status == 200".into(), 1, 1));
    assert_eq!(c[10], ("latency <= 1ms".into(), 1, 1));
}

#[test]
fn cookie_jar_sets_overwrites_and_deletes_across_steps() {
    let s = toml("base = 'http://h'\n[[step]]\nurl = '/1'\n[[step]]\nurl = '/2'\n[[step]]\nurl = '/3'\n[[step]]\nurl = '/4'\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let with = |cookies: &str| format!("HTTP/1.1 200 OK\r\n{cookies}Content-Length: 0\r\n\r\n");
    let req = exchange(
        &mut r,
        &mut u,
        &with("Set-Cookie: a=1\r\nSet-Cookie: b=2; Path=/x\r\n"),
    );
    assert!(!req.contains("Cookie"));
    let req = exchange(&mut r, &mut u, &with("Set-Cookie: a=9\r\n"));
    assert!(req.contains("\r\nCookie: a=1; b=2\r\n"), "{req}");
    let req = exchange(
        &mut r,
        &mut u,
        &with("Date: Sun, 22 Nov 2026 10:00:00 GMT\r\nSet-Cookie: b=x; Expires=Sun, 22 Nov 2026 09:59:59 GMT\r\n"),
    );
    assert!(req.contains("\r\nCookie: a=9; b=2\r\n"), "{req}");
    let req = exchange(&mut r, &mut u, &with(""));
    assert!(req.contains("\r\nCookie: a=9\r\n"), "{req}");
    // Users do not share jars.
    let mut other = r.new_user(1);
    let (_, req) = next(&mut r, &mut other);
    assert!(!req.contains("Cookie"));
}

#[test]
fn cookies_off_and_explicit_cookie_header() {
    let s = toml("base = 'http://h'\n[load]\ncookies = false\n[[step]]\nurl = '/1'\nextract = [{ var = 's', cookie = 'S' }]\ncheck = [{ status = 200 }]\n[[step]]\nurl = '/2'\nheaders = { Cookie = 'x={{s}}' }\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let (a, _) = next(&mut r, &mut u);
    assert!(matches!(
        a,
        Action::Request {
            capture: Capture::Head,
            ..
        }
    ));
    r.response(
        &mut u,
        0,
        200,
        Some(&wire(b"HTTP/1.1 200 OK\r\nSet-Cookie: S=v\r\n\r\n", 200)),
        MS,
    );
    let (_, req) = next(&mut r, &mut u);
    assert!(
        req.ends_with("Cookie: x=v\r\n\r\n"),
        "no jar, but the extract works: {req}"
    );
    let s = toml("base = 'http://h'\n[load]\ncookies = false\n[[step]]\nurl = '/'\ncheck = [{ status = 200 }]\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    assert!(matches!(
        next(&mut r, &mut u).0,
        Action::Request {
            capture: Capture::None,
            ..
        }
    ));
}

#[test]
fn header_values_cannot_inject_lines() {
    let s = toml("base = 'http://h'\n[[step]]\nurl = '/1'\nextract = [{ var = 'v', regex = '(?s)v=(.*)' }]\n[[step]]\nurl = '/2?v={{v}}'\nheaders = { X = '{{v}}' }\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    exchange(&mut r, &mut u, &ok("v=a\r\nEvil: 1 b"));
    let (_, req) = next(&mut r, &mut u);
    assert!(
        req.starts_with("GET /2?v=a%0D%0AEvil:%201%20b HTTP/1.1\r\n"),
        "{req}"
    );
    assert!(req.contains("\r\nX: a  Evil: 1 b\r\n"), "{req}");
}

#[test]
fn builtins_render_per_user_and_iteration() {
    let s = toml(
        "base = 'http://h'\n[[step]]\nurl = '/{{user}}/{{iteration}}/{{random(5, 7)}}/{{uuid}}'\n",
    )
    .unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(42);
    let mut seen = std::collections::BTreeSet::new();
    for it in 0..50 {
        let req = exchange(&mut r, &mut u, &ok(""));
        let path = req.split(' ').nth(1).unwrap().to_owned();
        let parts: Vec<&str> = path.split('/').collect();
        assert_eq!(parts[1], "42");
        assert_eq!(parts[2], it.to_string());
        let n: i64 = parts[3].parse().unwrap();
        assert!((5..=7).contains(&n));
        seen.insert(n);
        assert_eq!(parts[4].len(), 36);
        assert_eq!(next(&mut r, &mut u).0, Action::EndIteration);
    }
    assert_eq!(seen.len(), 3);
    // Reproducible: the same user index draws the same values.
    let first = |idx| {
        let mut r = s.runner();
        let mut u = r.new_user(idx);
        next(&mut r, &mut u).1
    };
    assert_eq!(first(7), first(7));
    assert_ne!(first(7), first(8));
}

#[test]
fn weighted_journeys_and_choices_follow_their_weights() {
    let s = toml(
        "base = 'http://h'\n\
         [[journey]]\nname = 'a'\nweight = 3\n[[journey.step]]\nurl = '/a'\n\
         [[journey.step]]\nname = 'pick'\nchoice = [{ url = '/x', weight = 1 }, { url = '/y', weight = 4 }]\n\
         [[journey]]\nname = 'b'\nweight = 1\n[[journey.step]]\nurl = '/b'\n",
    )
    .unwrap();
    let infos = s.steps();
    assert_eq!(infos.len(), 4);
    assert_eq!(infos[1].group.as_deref(), Some("pick"));
    assert_eq!(infos[1].name, "GET /x");
    assert_eq!(infos[3].journey, "b");
    let mut r = s.runner();
    let mut hits = [0u32; 4];
    let mut iterations = 0;
    for user in 0..200 {
        let mut u = r.new_user(user);
        for _ in 0..100 {
            loop {
                match next(&mut r, &mut u).0 {
                    Action::Request { step, .. } => {
                        hits[usize::from(step)] += 1;
                        r.response(
                            &mut u,
                            step,
                            200,
                            Some(&wire(b"HTTP/1.1 200 OK\r\n\r\n", 200)),
                            MS,
                        );
                    }
                    Action::Think(_) => {}
                    Action::EndIteration => break,
                }
            }
            iterations += 1;
        }
    }
    let share = |n: u32, of: u32| f64::from(n) / f64::from(of);
    assert_eq!(hits[0] + hits[3], iterations);
    assert!((share(hits[0], iterations) - 0.75).abs() < 0.01, "{hits:?}");
    assert_eq!(hits[1] + hits[2], hits[0]);
    assert!((share(hits[2], hits[0]) - 0.8).abs() < 0.01, "{hits:?}");
}

const DATA: &str = "base = 'http://h'\n[[data]]\nname = 'acc'\nfile = 'accounts.csv'\nmode = 'MODE'\n[[step]]\nurl = '/{{acc.user}}'\n";

fn rows(mode: &str, user: u64, iterations: usize) -> Vec<String> {
    let s = toml(&DATA.replace("MODE", mode)).unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(user);
    (0..iterations)
        .map(|_| {
            let req = exchange(&mut r, &mut u, &ok(""));
            assert_eq!(next(&mut r, &mut u).0, Action::EndIteration);
            req.split(' ').nth(1).unwrap()[1..].to_owned()
        })
        .collect()
}

#[test]
fn data_modes() {
    assert_eq!(rows("per_user", 0, 3), ["alice", "alice", "alice"]);
    assert_eq!(
        rows("per_user", 4, 2),
        ["bob", "bob"],
        "wraps around the rows"
    );
    assert_eq!(
        rows("round_robin", 0, 4),
        ["alice", "bob", "carol", "alice"]
    );
    assert_eq!(rows("round_robin", 2, 3), ["carol", "alice", "bob"]);
    let random = rows("random", 0, 60);
    for name in ["alice", "bob", "carol"] {
        assert!(
            random.iter().filter(|r| *r == name).count() > 10,
            "{random:?}"
        );
    }
    // The CSV's quoted field arrives whole (and percent-encoded in a url).
    let s = toml("base = 'http://h'\n[[data]]\nname = 'acc'\nfile = 'accounts.csv'\n[[step]]\nurl = '/'\nbody = '{{acc.pass}}'\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(2);
    assert!(next(&mut r, &mut u).1.ends_with("\r\n\r\np,w with a comma"));
}

#[test]
fn failures_end_the_iteration_and_abort_on_fail() {
    let s = toml("base = 'http://h'\n[load]\nthink = '2s'\n[[step]]\nurl = '/1'\ncheck = [{ status = 200 }]\nabort_on_fail = true\n[[step]]\nurl = '/2'\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let a = next(&mut r, &mut u).0;
    r.failed(&mut u, step_of(a));
    assert_eq!(
        next(&mut r, &mut u).0,
        Action::EndIteration,
        "no think after a failure"
    );
    let a = next(&mut r, &mut u).0;
    assert_eq!(step_of(a), 0, "a new iteration starts over");
    r.response(
        &mut u,
        0,
        503,
        Some(&wire(b"HTTP/1.1 503 No\r\n\r\n", 503)),
        MS,
    );
    assert_eq!(
        next(&mut r, &mut u).0,
        Action::EndIteration,
        "abort_on_fail"
    );
    let a = next(&mut r, &mut u).0;
    r.response(
        &mut u,
        step_of(a),
        200,
        Some(&wire(b"HTTP/1.1 200 OK\r\n\r\n", 200)),
        MS,
    );
    assert_eq!(
        next(&mut r, &mut u).0,
        Action::Think(Duration::from_secs(2))
    );
    assert_eq!(step_of(next(&mut r, &mut u).0), 1);
    // Asked again without an outcome: the request is given up.
    assert_eq!(next(&mut r, &mut u).0, Action::EndIteration);
    assert_eq!(counts(&r), [("status == 200".into(), 1, 1)]);
}

#[test]
fn runners_merge_counts() {
    let s = toml("base = 'http://h'\n[[step]]\nurl = '/'\ncheck = [{ status = 200 }]\n").unwrap();
    let (mut a, mut b) = (s.runner(), s.runner());
    let mut ua = a.new_user(0);
    let mut ub = b.new_user(1);
    exchange(&mut a, &mut ua, "HTTP/1.1 200 OK\r\n\r\n");
    exchange(&mut b, &mut ub, "HTTP/1.1 404 No\r\n\r\n");
    a.merge(&b);
    assert_eq!(
        a.counters(),
        [CheckCount {
            step: 0,
            name: "status == 200".into(),
            passed: 1,
            failed: 1
        }]
    );
}

#[test]
fn runner_and_user_can_move_between_threads() {
    fn send<T: Send + Clone>(_: &T) {}
    let s = toml("base = 'http://h'\n[[step]]\nurl = '/'\n").unwrap();
    let mut r = s.runner();
    let u = r.new_user(0);
    send(&r);
    send(&u);
    std::thread::spawn(move || {
        let mut r = r;
        let mut u = u;
        assert!(matches!(next(&mut r, &mut u).0, Action::Request { .. }));
    })
    .join()
    .unwrap();
}

fn with_env(text: &str, env: &[(&str, &str)]) -> Scenario {
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    parse(text, Format::Toml, "s.toml", Path::new("."), &env).unwrap()
}

#[test]
fn load_resolution_and_environment_overrides() {
    let secs = Duration::from_secs;
    // Defaults: one user for 10 s.
    let s = toml("base = 'http://h'\n[[step]]\nurl = '/'\n").unwrap();
    let l = s.load_spec();
    assert_eq!(
        (l.users.len(), l.users[0].to, l.length()),
        (1, 1.0, secs(10))
    );
    assert_eq!(l.sources["users"], Source::Default);
    assert!(l.cookies);
    assert_eq!(l.timeout, secs(30));
    assert_eq!(l.threads, None);
    // Ramps around a hold.
    let file = "base = 'http://h'\n[load]\nusers = 10\nramp_up = '5s'\nhold = '20s'\nramp_down = '3s'\nthreads = 2\n[[step]]\nurl = '/'\n";
    let l = toml(file).unwrap().load_spec().clone();
    let st: Vec<(Duration, f64, f64)> =
        l.users.iter().map(|s| (s.duration, s.from, s.to)).collect();
    assert_eq!(
        st,
        [
            (secs(5), 0.0, 10.0),
            (secs(20), 10.0, 10.0),
            (secs(3), 10.0, 0.0)
        ]
    );
    assert_eq!(l.threads, Some(2));
    // The environment wins over the file.
    let s = with_env(
        file,
        &[
            ("YACE_USERS", "2k"),
            ("YACE_HOLD", "1m"),
            ("YACE_COOKIES", "off"),
            ("YACE_UNRELATED", "x"),
        ],
    );
    let l = s.load_spec();
    assert_eq!(l.users[1].to, 2000.0);
    assert_eq!(l.users[1].duration, secs(60));
    assert!(!l.cookies);
    assert_eq!(l.sources["users"], Source::Env);
    assert_eq!(l.sources["ramp_up"], Source::File);
    assert_eq!(l.sources["cookies"], Source::Env);
    // YACE_RATE switches the file's users to the open model.
    let l = with_env(file, &[("YACE_RATE", "50")]).load_spec().clone();
    assert!(l.users.is_empty() && l.is_open());
    assert_eq!(l.rate[1].to, 50.0);
    // An open model from the file.
    let l = toml("base = 'http://h'\n[load]\nrate_stages = [{ duration = '30s', rate = '0-1000' }, { duration = '1m', rate = 1000 }]\nmax_users = 300\n[[step]]\nurl = '/'\n")
        .unwrap()
        .load_spec()
        .clone();
    assert_eq!(l.rate.len(), 2);
    assert_eq!((l.rate[0].from, l.rate[0].to), (0.0, 1000.0));
    assert_eq!(l.max_users, Some(300));
    let stage: plan::RateStage = l.rate[0].into();
    assert_eq!(stage.duration, secs(30));
}

#[test]
fn extracted_variables_start_empty_each_iteration() {
    let s = toml(
        "base = 'http://h'\n[[step]]\nname = 'pick'\n\
         choice = [{ url = '/a', extract = [{ var = 't', regex = 't=(\\w+)' }] }, { url = '/b' }]\n\
         [[step]]\nurl = '/c?t={{t}}'\n",
    )
    .unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let (mut set, mut reset) = (0, 0);
    let mut had_value = false;
    for _ in 0..200 {
        let first = exchange(&mut r, &mut u, &ok("t=abc"));
        let c = exchange(&mut r, &mut u, &ok(""));
        assert_eq!(next(&mut r, &mut u).0, Action::EndIteration);
        if first.starts_with("GET /a ") {
            assert!(c.starts_with("GET /c?t=abc "), "{c}");
            set += 1;
            had_value = true;
        } else {
            assert!(c.starts_with("GET /c?t= "), "{c}");
            if had_value {
                reset += 1;
            }
        }
    }
    assert!(set > 50 && reset > 20, "{set} {reset}");
}

#[test]
fn stray_outcomes_are_ignored() {
    let s = toml("base = 'http://h'\n[[step]]\nurl = '/1'\ncheck = [{ status = 200 }]\n[[step]]\nurl = '/2'\n").unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    // Before any request, and for a step that is not out.
    r.response(
        &mut u,
        0,
        200,
        Some(&wire(b"HTTP/1.1 200 OK\r\n\r\n", 200)),
        MS,
    );
    r.failed(&mut u, 0);
    assert_eq!(step_of(next(&mut r, &mut u).0), 0);
    r.response(
        &mut u,
        1,
        200,
        Some(&wire(b"HTTP/1.1 200 OK\r\n\r\n", 200)),
        MS,
    );
    r.failed(&mut u, 1);
    r.response(
        &mut u,
        0,
        200,
        Some(&wire(b"HTTP/1.1 200 OK\r\n\r\n", 200)),
        MS,
    );
    r.response(
        &mut u,
        0,
        500,
        Some(&wire(b"HTTP/1.1 500 No\r\n\r\n", 500)),
        MS,
    );
    assert_eq!(step_of(next(&mut r, &mut u).0), 1);
    assert_eq!(counts(&r), [("status == 200".into(), 1, 0)]);
}
