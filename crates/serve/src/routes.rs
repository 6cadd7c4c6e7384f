//! The endpoints: which request target names which route, and what each
//! route answers. The list with parameters and limits is in the crate docs.

use std::io;
use std::time::Duration;

use crate::ask::Target;
use crate::conn::{After, Conn};
use crate::http::{self, BodyLen, ConnHeader, Head};
use crate::misbehave;
use crate::route::Route;
use crate::session::{new_session_id, random_in};
use crate::Shared;

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
        Target::Pool { ms, workers, queue } => match shared.pools.enter(workers, queue) {
            Some(place) => {
                place.serve(ms).await;
                let body = format!("served by a pool of {workers} workers in {ms} ms\n");
                Reply::text(Route::Pool, 200, Body::Owned(body.into_bytes()))
            }
            None => Reply::text(
                Route::Pool,
                503,
                Body::Owned(format!("pool of {workers} full: {queue} queued\n").into_bytes()),
            ),
        },
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
    use crate::ask::{split, MAX_BODY};
    use crate::http::SERVER_HEADER;
    use crate::route::Bad;

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
        use crate::route::Kind;
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
