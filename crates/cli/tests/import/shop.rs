//! A small web shop on loopback, for replaying what `yace import`
//! produced: the login flow the HAR fixture recorded
//! (`crates/import/tests/fixtures/shop-login.har`), with fresh random
//! values each time, so a replay passes only if the scenario extracts
//! them; and an `/echo` that records every request it sees.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Default, Clone)]
struct Session {
    csrf_login: String,
    logged_in: bool,
    csrf_account: String,
    token: String,
    user_id: u64,
    cart: String,
}

#[derive(Debug, Default)]
pub struct State {
    sessions: HashMap<String, Session>,
    counter: u64,
    /// Requests to `/echo`.
    pub echoed: Vec<Seen>,
    /// Successful steps of the flow, by name.
    pub ok: HashMap<&'static str, u64>,
    /// Requests refused, and why.
    pub refused: Vec<String>,
}

impl State {
    /// A fresh random-looking value: `len` hex digits.
    fn fresh(&mut self, len: usize) -> String {
        let mut out = String::new();
        while out.len() < len {
            self.counter += 1;
            // splitmix64 of the counter, salted by the process.
            let mut z = self
                .counter
                .wrapping_add(u64::from(std::process::id()) << 32)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            out.push_str(&format!("{:016x}", z ^ (z >> 31)));
        }
        out.truncate(len);
        out
    }
}

#[derive(Debug)]
pub struct Shop {
    pub port: u16,
    pub state: Arc<Mutex<State>>,
}

impl Shop {
    pub fn start() -> Shop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let s = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let s = Arc::clone(&s);
                std::thread::spawn(move || serve(conn, &s));
            }
        });
        Shop { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn serve(conn: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut out = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return;
        };
        let (method, target) = (method.to_owned(), target.to_owned());
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((n, v)) = h.split_once(':') {
                headers.push((n.trim().to_owned(), v.trim().to_owned()));
            }
        }
        let seen = Seen {
            method,
            target,
            headers,
            body: Vec::new(),
        };
        let len: usize = seen
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let seen = Seen { body, ..seen };
        let close = seen
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        let (status, extra, body) = route(&seen, &mut state.lock().unwrap());
        let reason = match status {
            200 => "OK",
            201 => "Created",
            302 => "Found",
            _ => "Error",
        };
        let mut head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (n, v) in extra {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        if out.write_all(head.as_bytes()).is_err() || out.write_all(&body).is_err() || close {
            return;
        }
    }
}

type Response = (u16, Vec<(&'static str, String)>, Vec<u8>);

fn cookie(seen: &Seen, name: &str) -> Option<String> {
    seen.header("cookie")?.split(';').find_map(|c| {
        let (n, v) = c.trim().split_once('=')?;
        (n == name).then(|| v.to_owned())
    })
}

fn form(body: &[u8]) -> HashMap<String, String> {
    let text = String::from_utf8_lossy(body);
    text.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(b'?'));
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn html(text: String) -> Response {
    (
        200,
        vec![("Content-Type", "text/html; charset=utf-8".into())],
        text.into_bytes(),
    )
}

fn json(status: u16, v: serde_json::Value) -> Response {
    (
        status,
        vec![("Content-Type", "application/json".into())],
        v.to_string().into_bytes(),
    )
}

fn refuse(st: &mut State, status: u16, why: String) -> Response {
    st.refused.push(why.clone());
    (status, vec![], format!("{why}\n").into_bytes())
}

fn route(seen: &Seen, st: &mut State) -> Response {
    let path = seen.target.split('?').next().unwrap_or("");
    let sid = cookie(seen, "sid");
    let session = sid.as_ref().and_then(|s| st.sessions.get(s)).cloned();
    let bearer = seen
        .header("authorization")
        .and_then(|a| a.strip_prefix("Bearer "))
        .map(str::to_owned);
    let by_token = bearer.as_ref().and_then(|t| {
        st.sessions
            .values()
            .find(|s| s.logged_in && &s.token == t)
            .cloned()
    });
    let csrf = seen.header("x-csrf-token").map(str::to_owned);
    *st.ok.entry("requests").or_default() += 1;
    let ok = |st: &mut State, what: &'static str| *st.ok.entry(what).or_default() += 1;
    match (seen.method.as_str(), path) {
        (_, "/echo") => {
            st.echoed.push(seen.clone());
            (200, vec![], seen.body.clone())
        }
        ("GET", "/login") => {
            let sid = st.fresh(16);
            let csrf = st.fresh(24);
            st.sessions.insert(
                sid.clone(),
                Session {
                    csrf_login: csrf.clone(),
                    ..Default::default()
                },
            );
            ok(st, "login page");
            let (s, mut h, b) = html(format!(
                "<!doctype html><html><head><title>Sign in</title>\
                 <link rel=\"stylesheet\" href=\"/static/app.css\"></head><body>\
                 <form method=\"post\" action=\"/login\" class=\"login\">\n\
                 <input type=\"hidden\" name=\"csrf_token\" value=\"{csrf}\">\n\
                 <input type=\"email\" name=\"email\"><input type=\"password\" name=\"password\">\
                 </form></body></html>"
            ));
            h.push(("Set-Cookie", format!("sid={sid}; Path=/; HttpOnly")));
            (s, h, b)
        }
        ("POST", "/login") => {
            let f = form(&seen.body);
            let Some(s) = session else {
                return refuse(st, 403, format!("POST /login: no session (cookie {sid:?})"));
            };
            if f.get("csrf_token") != Some(&s.csrf_login) {
                return refuse(
                    st,
                    403,
                    format!(
                        "POST /login: csrf {:?}, expected {}",
                        f.get("csrf_token"),
                        s.csrf_login
                    ),
                );
            }
            if f.get("email").map(String::as_str) != Some("alice@example.test")
                || f.get("password").map(String::as_str) != Some("s3cret!pw")
            {
                return refuse(st, 403, format!("POST /login: credentials {f:?}"));
            }
            st.sessions.remove(sid.as_deref().unwrap_or(""));
            let new_sid = st.fresh(16);
            let n = st.fresh(8);
            let logged = Session {
                logged_in: true,
                csrf_account: st.fresh(24),
                token: format!("eyJ{}.{}.{}", st.fresh(20), st.fresh(12), st.fresh(16)),
                user_id: 10_000 + u64::from_str_radix(&n[..4], 16).unwrap_or(0),
                cart: format!("c-{}", st.fresh(10)),
                ..Default::default()
            };
            st.sessions.insert(new_sid.clone(), logged);
            ok(st, "login");
            (
                302,
                vec![
                    ("Location", "/account?welcome=1".into()),
                    ("Set-Cookie", format!("sid={new_sid}; Path=/; HttpOnly")),
                ],
                Vec::new(),
            )
        }
        ("GET", "/account") => match session {
            Some(s) if s.logged_in => {
                ok(st, "account");
                html(format!(
                    "<!doctype html><html><head><meta charset=\"utf-8\">\n\
                     <meta name=\"csrf-token\" content=\"{0}\">\n<title>Your account</title></head>\
                     <body><h1>Welcome back, Alice</h1><form method=\"post\" action=\"/logout\">\
                     <input type=\"hidden\" name=\"csrf_token\" value=\"{0}\"></form></body></html>",
                    s.csrf_account
                ))
            }
            _ => refuse(
                st,
                403,
                format!("GET /account: not logged in (cookie {sid:?})"),
            ),
        },
        ("POST", "/api/session") => match session {
            Some(s) if s.logged_in && csrf.as_ref() == Some(&s.csrf_account) => {
                ok(st, "api session");
                json(
                    200,
                    serde_json::json!({
                        "token": s.token, "expires_in": 3600,
                        "user": {"id": s.user_id, "name": "Alice"},
                    }),
                )
            }
            _ => refuse(
                st,
                403,
                format!("POST /api/session: csrf {csrf:?}, cookie {sid:?}"),
            ),
        },
        ("GET", "/api/me") => match by_token {
            Some(s) => {
                ok(st, "api me");
                json(
                    200,
                    serde_json::json!({
                        "id": s.user_id, "email": "alice@example.test", "name": "Alice",
                        "cart": s.cart,
                    }),
                )
            }
            None => refuse(st, 401, format!("GET /api/me: token {bearer:?}")),
        },
        ("GET", p) if p.starts_with("/api/orders/") => match by_token {
            Some(s) if p == format!("/api/orders/{}", s.user_id) => {
                ok(st, "api orders");
                json(200, serde_json::json!({"orders": [], "next": null}))
            }
            _ => refuse(st, 403, format!("GET {p}: token {bearer:?}")),
        },
        ("POST", "/api/cart") => {
            let body: serde_json::Value =
                serde_json::from_slice(&seen.body).unwrap_or(serde_json::Value::Null);
            match by_token {
                Some(s)
                    if csrf.as_ref() == Some(&s.csrf_account)
                        && body["cart"] == s.cart.as_str()
                        && body["user_id"] == s.user_id
                        && body["sku"] == "A-100" =>
                {
                    ok(st, "api cart");
                    json(201, serde_json::json!({"ok": true, "items": 1}))
                }
                _ => refuse(
                    st,
                    400,
                    format!("POST /api/cart: body {body}, csrf {csrf:?}, token {bearer:?}"),
                ),
            }
        }
        ("POST", "/logout") => {
            let f = form(&seen.body);
            match session {
                Some(s) if s.logged_in && f.get("csrf_token") == Some(&s.csrf_account) => {
                    st.sessions.remove(sid.as_deref().unwrap_or(""));
                    ok(st, "logout");
                    (
                        302,
                        vec![
                            ("Location", "/login".into()),
                            ("Set-Cookie", "sid=; Path=/; Max-Age=0".into()),
                        ],
                        Vec::new(),
                    )
                }
                _ => refuse(st, 403, format!("POST /logout: form {f:?}, cookie {sid:?}")),
            }
        }
        _ => (404, vec![], b"not found\n".to_vec()),
    }
}
