//! The endpoints: which request target names which route, and what each
//! route answers. The list with parameters and limits is in the crate docs.

use std::io;
use std::time::Duration;

use crate::conn::{After, Conn};
use crate::http::{self, BodyLen, ConnHeader, Head};
use crate::misbehave::{self, Bad};
use crate::session::{new_session_id, random_in};
use crate::stats::Route;
use crate::Shared;

/// Largest body `/bytes`, `/vary` and `/chunked` will send.
pub(crate) const MAX_BODY: u64 = 1 << 30;
/// Longest wait `/sleep` and `/session` accept (one hour).
pub(crate) const MAX_SLEEP_MS: u64 = 3_600_000;
const MAX_CHUNKS: u64 = 1 << 20;
/// Largest piece `?split=N` accepts.
pub(crate) const MAX_SPLIT: u64 = 64 * 1024;
const VARY_DEFAULT: (u64, u64) = (1, 2048);
const CHUNKED_DEFAULT: (u64, u64) = (4, 32);

/// A request target, resolved with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Root,
    Bytes(u64),
    Sleep(u64),
    Session(u64),
    Vary {
        min: u64,
        max: u64,
    },
    Status(u16),
    Chunked {
        chunks: u64,
        size: u64,
    },
    Close,
    Echo,
    Stats {
        reset: bool,
    },
    /// `/bad/...`: a deliberate misbehaviour.
    Bad(Bad),
    NotFound,
    /// A known route with unusable parameters: 400 with the reason as body.
    Invalid(Route, &'static str),
}

impl Target {
    pub(crate) fn parse(target: &str) -> Target {
        if target == "/" {
            return Target::Root;
        }
        let target = strip_authority(target);
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let parsed = match path {
            "/" => Ok(Target::Root),
            "/sleep" => number(query, "ms", 0, MAX_SLEEP_MS)
                .map(Target::Sleep)
                .map_err(|()| (Route::Sleep, "ms must be a whole number up to 3600000\n")),
            "/session" => number(query, "ms", 0, MAX_SLEEP_MS)
                .map(Target::Session)
                .map_err(|()| (Route::Session, "ms must be a whole number up to 3600000\n")),
            "/vary" => vary(query).map_err(|()| {
                (
                    Route::Vary,
                    "min and max must be whole numbers, min <= max <= 1073741824\n",
                )
            }),
            "/chunked" => chunked(query).map_err(|()| {
                (
                    Route::Chunked,
                    "chunks <= 1048576, 1 <= size, chunks * size <= 1073741824\n",
                )
            }),
            "/close" => Ok(Target::Close),
            "/echo" => Ok(Target::Echo),
            "/_stats" => Ok(Target::Stats {
                reset: matches!(param(query, "reset"), Some("1" | "true")),
            }),
            "/bytes" => Err((Route::Bytes, "usage: /bytes/N\n")),
            "/status" => Err((Route::Status, "usage: /status/N\n")),
            _ => {
                if let Some(n) = path.strip_prefix("/bytes/") {
                    match n.parse::<u64>() {
                        Ok(n) if n <= MAX_BODY => Ok(Target::Bytes(n)),
                        _ => Err((Route::Bytes, "N must be a whole number up to 1073741824\n")),
                    }
                } else if let Some(n) = path.strip_prefix("/status/") {
                    match n.parse::<u16>() {
                        Ok(n) if (200..=599).contains(&n) => Ok(Target::Status(n)),
                        _ => Err((Route::Status, "N must be a status code from 200 to 599\n")),
                    }
                } else if path.starts_with("/bad/") {
                    match misbehave::parse(path, query) {
                        Some(bad) => bad.map(Target::Bad),
                        None => Ok(Target::NotFound),
                    }
                } else {
                    Ok(Target::NotFound)
                }
            }
        };
        parsed.unwrap_or_else(|(route, why)| Target::Invalid(route, why))
    }

    /// The route the request is counted under.
    pub(crate) fn route(&self) -> Route {
        match self {
            Target::Root => Route::Root,
            Target::Bytes(_) => Route::Bytes,
            Target::Sleep(_) => Route::Sleep,
            Target::Session(_) => Route::Session,
            Target::Vary { .. } => Route::Vary,
            Target::Status(_) => Route::Status,
            Target::Chunked { .. } => Route::Chunked,
            Target::Close => Route::Close,
            Target::Echo => Route::Echo,
            Target::Bad(bad) => Route::Bad(bad.kind),
            // `/_stats` is never counted; `other` is only a placeholder.
            Target::Stats { .. } | Target::NotFound => Route::Other,
            Target::Invalid(route, _) => *route,
        }
    }

    /// Whether answering takes a wait (`/sleep`, `/session`), so that
    /// answers that are ready should not wait for it.
    pub(crate) fn waits(&self) -> bool {
        matches!(self, Target::Sleep(_) | Target::Session(_))
    }

    pub(crate) fn wants_session(&self) -> bool {
        matches!(self, Target::Session(_))
    }

    pub(crate) fn wants_content_type(&self) -> bool {
        matches!(self, Target::Echo)
    }

    pub(crate) fn wants_body(&self) -> bool {
        matches!(self, Target::Echo)
    }
}

/// Proxies and some clients send the absolute form (`http://host/path`).
fn strip_authority(target: &str) -> &str {
    let has_scheme = |scheme: &str| {
        target
            .get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    let rest = if has_scheme("http://") {
        &target[7..]
    } else if has_scheme("https://") {
        &target[8..]
    } else {
        return target;
    };
    match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => &rest[i..],
        _ => "/",
    }
}

/// The `?split=N` of any request target: `Ok(None)` without one, `Err` for
/// a value outside 1..=65536.
pub(crate) fn split(target: &str) -> Result<Option<usize>, ()> {
    let Some((_, query)) = target.split_once('?') else {
        return Ok(None);
    };
    match param(query, "split") {
        None => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if (1..=MAX_SPLIT).contains(&n) => Ok(Some(n as usize)),
            _ => Err(()),
        },
    }
}

pub(crate) fn param<'q>(query: &'q str, key: &str) -> Option<&'q str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then_some(v)
    })
}

fn number(query: &str, key: &str, default: u64, max: u64) -> Result<u64, ()> {
    match param(query, key) {
        None => Ok(default),
        Some(v) => v.parse::<u64>().ok().filter(|n| *n <= max).ok_or(()),
    }
}

fn vary(query: &str) -> Result<Target, ()> {
    let min = number(query, "min", VARY_DEFAULT.0, MAX_BODY)?;
    // A lone min above the default max still makes sense: max follows it.
    let max = number(query, "max", VARY_DEFAULT.1.max(min), MAX_BODY)?;
    if min > max {
        return Err(());
    }
    Ok(Target::Vary { min, max })
}

fn chunked(query: &str) -> Result<Target, ()> {
    let chunks = number(query, "chunks", CHUNKED_DEFAULT.0, MAX_CHUNKS)?;
    let size = number(query, "size", CHUNKED_DEFAULT.1, MAX_BODY)?;
    // A zero-sized chunk would end the body early.
    if size == 0 || chunks.saturating_mul(size) > MAX_BODY {
        return Err(());
    }
    Ok(Target::Chunked { chunks, size })
}

const ROOT_HEAD: &[u8] = concat!(
    "HTTP/1.1 200 OK\r\n",
    "Server: yace-target/",
    env!("CARGO_PKG_VERSION"),
    "\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
)
.as_bytes();
const ROOT_BODY: &[u8] = b"hello world\n";

/// What a route needs from a request beyond its target, whichever protocol
/// it came over.
pub(crate) struct Ask<'a> {
    pub(crate) target: &'a Target,
    /// The `YACESESSID` cookie (looked for on `/session` only).
    pub(crate) session: Option<&'a str>,
    /// The request's `Content-Type` (kept for `/echo` only).
    pub(crate) content_type: Option<&'a str>,
    /// The request body, when the route keeps it (`/echo`).
    pub(crate) body: Option<Vec<u8>>,
}

/// What an honest route answers, decided once for both protocols; each
/// frames it its own way (HTTP/1.1 chunks, HTTP/2 DATA frames).
#[derive(Debug)]
pub(crate) struct Reply<'a> {
    /// `None` for `/_stats`, which is counted nowhere.
    pub(crate) route: Option<Route>,
    pub(crate) status: u16,
    pub(crate) content_type: &'a str,
    pub(crate) body: Body,
    /// `Set-Cookie` value, for a `/session` that made a new session.
    pub(crate) cookie: Option<String>,
}

#[derive(Debug)]
pub(crate) enum Body {
    /// 204 and 304: no body, no `Content-Type`.
    None,
    Static(&'static [u8]),
    Owned(Vec<u8>),
    /// N bytes of [`FILLER`](crate::conn::FILLER) (`/bytes`, `/vary`).
    Filler(u64),
    /// `/chunked`: `chunks` pieces of `size` filler bytes each: chunks over
    /// HTTP/1.1, DATA frames over HTTP/2.
    Chunks {
        chunks: u64,
        size: u64,
    },
}

impl Reply<'_> {
    pub(crate) fn text(route: Route, status: u16, body: Body) -> Reply<'static> {
        Reply {
            route: Some(route),
            status,
            content_type: "text/plain",
            body,
            cookie: None,
        }
    }
}

/// Decides the answer to any target but `/bad/...` (each protocol plays its
/// own misbehaviours), after the waiting `/sleep` and `/session` do. Ready
/// at once for targets that do not [wait](Target::waits).
pub(crate) async fn reply<'a>(ask: Ask<'a>, shared: &Shared) -> Reply<'a> {
    match *ask.target {
        Target::Root => Reply::text(Route::Root, 200, Body::Static(ROOT_BODY)),
        Target::Bytes(n) => Reply {
            content_type: "application/octet-stream",
            ..Reply::text(Route::Bytes, 200, Body::Filler(n))
        },
        Target::Vary { min, max } => {
            Reply::text(Route::Vary, 200, Body::Filler(random_in(min, max)))
        }
        Target::Sleep(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            let body = format!("slept {ms} ms\n").into_bytes();
            Reply::text(Route::Sleep, 200, Body::Owned(body))
        }
        Target::Session(ms) => {
            let (id, fresh) = match ask.session {
                Some(id) => (id.to_owned(), false),
                None => (new_session_id(), true),
            };
            {
                let ticket = shared.sessions.enter(&id);
                let _turn = ticket.lock().await;
                if ms > 0 {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
            }
            Reply {
                cookie: fresh.then(|| format!("{}={id}; Path=/", http::SESSION_COOKIE)),
                ..Reply::text(
                    Route::Session,
                    200,
                    Body::Owned(format!("session {id}\n").into_bytes()),
                )
            }
        }
        Target::Status(status) => {
            let body = if matches!(status, 204 | 304) {
                Body::None
            } else {
                Body::Owned(format!("{status} {}\n", http::reason(status)).into_bytes())
            };
            Reply::text(Route::Status, status, body)
        }
        Target::Chunked { chunks, size } => {
            Reply::text(Route::Chunked, 200, Body::Chunks { chunks, size })
        }
        Target::Close => Reply::text(Route::Close, 200, Body::Static(b"closing connection\n")),
        Target::Echo => Reply {
            route: Some(Route::Echo),
            status: 200,
            content_type: ask.content_type.unwrap_or("application/octet-stream"),
            body: Body::Owned(ask.body.unwrap_or_default()),
            cookie: None,
        },
        Target::Stats { reset } => {
            let stats = shared.counters.snapshot(reset);
            // Serialising plain integers and strings cannot fail.
            let json = serde_json::to_vec(&stats).unwrap_or_default();
            Reply {
                route: None,
                status: 200,
                content_type: "application/json",
                body: Body::Owned(json),
                cookie: None,
            }
        }
        Target::NotFound => Reply::text(Route::Other, 404, Body::Static(b"not found\n")),
        Target::Invalid(route, why) => Reply::text(route, 400, Body::Static(why.as_bytes())),
        // An HTTP/1.1 misbehaviour asked for over HTTP/2 (which plays its
        // own before asking here).
        Target::Bad(bad) => Reply::text(
            Route::Bad(bad.kind),
            501,
            Body::Static(misbehave::H1_ONLY.as_bytes()),
        ),
    }
}

/// Writes (or queues) the response to one request. Returns what becomes of
/// the connection.
pub(crate) async fn respond(c: &mut Conn, head: &Head, body: Option<Vec<u8>>) -> io::Result<After> {
    let Some(piece) = head.split else {
        return answer(c, head, body).await;
    };
    // Earlier pipelined responses go out whole; only this one is split.
    c.flush().await?;
    c.split(Some(piece));
    let after = answer(c, head, body).await;
    let flushed = c.flush().await;
    c.split(None);
    let after = after?;
    flushed?;
    Ok(after)
}

async fn answer(c: &mut Conn, head: &Head, body: Option<Vec<u8>>) -> io::Result<After> {
    let keep = head.keep_alive && head.target != Target::Close;
    let conn = match (keep, head.http10) {
        (false, _) => ConnHeader::Close,
        (true, true) => ConnHeader::KeepAlive,
        (true, false) => ConnHeader::Omit,
    };
    match head.target {
        Target::Root => {
            // The hot path: pre-encoded pieces, appended to the batch.
            let body: &[u8] = if head.is_head { b"" } else { ROOT_BODY };
            c.canned(Route::Root, 200, &[ROOT_HEAD, conn.line(), b"\r\n", body]);
            return Ok(if keep { After::KeepAlive } else { After::Close });
        }
        Target::Bad(bad) => return misbehave::respond(c, bad, keep, conn).await,
        // Earlier pipelined responses should not wait for this one.
        _ if head.target.waits() => c.flush().await?,
        _ => {}
    }
    let ask = Ask {
        target: &head.target,
        session: head.session.as_deref(),
        content_type: head.content_type.as_deref(),
        body,
    };
    let reply = reply(ask, &c.shared).await;
    write(c, head, conn, reply).await?;
    Ok(if keep { After::KeepAlive } else { After::Close })
}

/// Frames a reply as HTTP/1.1.
async fn write(c: &mut Conn, head: &Head, conn: ConnHeader, reply: Reply<'_>) -> io::Result<()> {
    let len = match reply.body {
        Body::None => BodyLen::Bodiless,
        Body::Static(b) => BodyLen::Length(b.len() as u64),
        Body::Owned(ref b) => BodyLen::Length(b.len() as u64),
        Body::Filler(n) => BodyLen::Length(n),
        // HTTP/1.0 has no chunked coding: such a client gets the same bytes
        // with a Content-Length.
        Body::Chunks { chunks, size } if head.http10 => BodyLen::Length(chunks * size),
        Body::Chunks { .. } => BodyLen::Chunked,
    };
    let cookie;
    let extra: &[(&str, &str)] = match &reply.cookie {
        Some(value) => {
            cookie = [("Set-Cookie", value.as_str())];
            &cookie
        }
        None => &[],
    };
    let Some(route) = reply.route else {
        // `/_stats`: not counted.
        let out = c.uncounted();
        http::push_head(out, reply.status, reply.content_type, len, conn, extra);
        if let (false, Body::Owned(json)) = (head.is_head, &reply.body) {
            out.extend_from_slice(json);
        }
        return Ok(());
    };
    c.head(route, reply.status, reply.content_type, len, conn, extra);
    if head.is_head {
        return Ok(());
    }
    match reply.body {
        Body::None => {}
        Body::Static(b) => c.body(b),
        Body::Owned(b) => c.body(&b),
        Body::Filler(n) => c.filler(n).await?,
        Body::Chunks { chunks, size } if head.http10 => c.filler(chunks * size).await?,
        Body::Chunks { chunks, size } => write_chunks(c, chunks, size).await?,
    }
    Ok(())
}

/// `/chunked`'s body: the chunks, then the last chunk.
async fn write_chunks(c: &mut Conn, chunks: u64, size: u64) -> io::Result<()> {
    let mut line = Vec::with_capacity(20);
    for _ in 0..chunks {
        line.clear();
        http::push_hex(&mut line, size);
        line.extend_from_slice(b"\r\n");
        c.body(&line);
        c.filler(size).await?;
        c.body(b"\r\n");
    }
    c.body(b"0\r\n\r\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::SERVER_HEADER;

    #[test]
    fn server_header_matches_the_canned_root_response() {
        let head = std::str::from_utf8(ROOT_HEAD).unwrap();
        assert!(head.contains(&format!("\r\n{SERVER_HEADER}\r\n")));
        assert!(head.contains(&format!("Content-Length: {}\r\n", ROOT_BODY.len())));
    }

    #[test]
    fn targets() {
        use Target::*;
        assert_eq!(Target::parse("/"), Root);
        assert_eq!(Target::parse("/?x=1"), Root);
        assert_eq!(Target::parse("http://example.com/bytes/5"), Bytes(5));
        assert_eq!(Target::parse("HTTP://example.com"), Root);
        assert_eq!(Target::parse("/bytes/1073741824"), Bytes(MAX_BODY));
        assert!(matches!(
            Target::parse("/bytes/1073741825"),
            Invalid(Route::Bytes, _)
        ));
        assert!(matches!(
            Target::parse("/bytes/x"),
            Invalid(Route::Bytes, _)
        ));
        assert!(matches!(Target::parse("/bytes"), Invalid(Route::Bytes, _)));
        assert_eq!(Target::parse("/sleep"), Sleep(0));
        assert_eq!(Target::parse("/sleep?ms=25"), Sleep(25));
        assert!(matches!(
            Target::parse("/sleep?ms=-1"),
            Invalid(Route::Sleep, _)
        ));
        assert_eq!(Target::parse("/session?x=y&ms=7"), Session(7));
        assert_eq!(Target::parse("/vary"), Vary { min: 1, max: 2048 });
        assert_eq!(
            Target::parse("/vary?min=10&max=20"),
            Vary { min: 10, max: 20 }
        );
        assert_eq!(
            Target::parse("/vary?min=5000"),
            Vary {
                min: 5000,
                max: 5000
            }
        );
        assert!(matches!(
            Target::parse("/vary?min=20&max=10"),
            Invalid(Route::Vary, _)
        ));
        assert_eq!(Target::parse("/status/503"), Status(503));
        assert!(matches!(
            Target::parse("/status/199"),
            Invalid(Route::Status, _)
        ));
        assert!(matches!(
            Target::parse("/status/600"),
            Invalid(Route::Status, _)
        ));
        assert_eq!(
            Target::parse("/chunked"),
            Chunked {
                chunks: 4,
                size: 32
            }
        );
        assert_eq!(
            Target::parse("/chunked?chunks=0"),
            Chunked {
                chunks: 0,
                size: 32
            }
        );
        assert!(matches!(
            Target::parse("/chunked?size=0"),
            Invalid(Route::Chunked, _)
        ));
        assert!(matches!(
            Target::parse("/chunked?chunks=1048576&size=2048"),
            Invalid(Route::Chunked, _)
        ));
        assert_eq!(Target::parse("/_stats"), Stats { reset: false });
        assert_eq!(Target::parse("/_stats?reset=1"), Stats { reset: true });
        assert_eq!(Target::parse("/nope"), NotFound);
        assert_eq!(Target::parse("/sleep/"), NotFound);
    }

    #[test]
    fn bad_targets() {
        use crate::misbehave::Kind;
        use Target::{Invalid, NotFound};
        let bad = |kind, arg| Target::Bad(Bad { kind, arg });
        assert_eq!(Target::parse("/bad/cl-short"), bad(Kind::ClShort, 0));
        assert_eq!(
            Target::parse("/bad/close-every?n=5"),
            bad(Kind::CloseEvery, 5)
        );
        assert_eq!(
            Target::parse("http://h/bad/drip-body?ms=3&split=2"),
            bad(Kind::DripBody, 3)
        );
        assert!(matches!(
            Target::parse("/bad/close-every?n=0"),
            Invalid(Route::Bad(Kind::CloseEvery), _)
        ));
        assert_eq!(Target::parse("/bad/unknown"), NotFound);
        assert_eq!(Target::parse("/bad"), NotFound);
        assert_eq!(Target::parse("/bad/close").route().name(), "/bad/close");
    }

    #[test]
    fn split_parameter() {
        assert_eq!(split("/"), Ok(None));
        assert_eq!(split("/?x=1"), Ok(None));
        assert_eq!(split("/?split=1"), Ok(Some(1)));
        assert_eq!(split("/chunked?chunks=2&split=64"), Ok(Some(64)));
        assert_eq!(split("/?split=65536"), Ok(Some(65536)));
        for bad in ["/?split=0", "/?split=65537", "/?split=x", "/?split="] {
            assert_eq!(split(bad), Err(()), "{bad}");
        }
    }
}
