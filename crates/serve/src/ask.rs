//! What a request asks for: its target parsed into a [`Target`] (the route
//! and its parameters, or why they are invalid), and `?split=N`. Parsing
//! only: the answers are `routes`'.

use crate::route::{self, param, Bad, Route};

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
    /// `/pool?ms=N&workers=K&queue=Q`: served by a pool of K workers.
    Pool {
        ms: u64,
        workers: u64,
        queue: u64,
    },
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
            "/pool" => pool(query).map_err(|()| {
                (
                    Route::Pool,
                    "ms <= 3600000, 1 <= workers <= 4096, queue <= 100000\n",
                )
            }),
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
                    match route::parse(path, query) {
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
            Target::Pool { .. } => Route::Pool,
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
        matches!(
            self,
            Target::Sleep(_) | Target::Session(_) | Target::Pool { .. }
        )
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

    /// Answered as soon as the head is read, the body left unread (a
    /// server refusing an upload early).
    pub(crate) fn answers_before_body(&self) -> bool {
        matches!(self, Target::Bad(b) if b.kind == crate::route::Kind::Early413)
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

fn number(query: &str, key: &str, default: u64, max: u64) -> Result<u64, ()> {
    match param(query, key) {
        None => Ok(default),
        Some(v) => v.parse::<u64>().ok().filter(|n| *n <= max).ok_or(()),
    }
}

fn pool(query: &str) -> Result<Target, ()> {
    let ms = number(query, "ms", 10, MAX_SLEEP_MS)?;
    let workers = number(query, "workers", 4, crate::pool::MAX_WORKERS)?;
    // php-fpm's listen.backlog default.
    let queue = number(query, "queue", 511, crate::pool::MAX_QUEUE)?;
    if workers == 0 {
        return Err(());
    }
    Ok(Target::Pool { ms, workers, queue })
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
