//! What a request names, as a closed set: the routes the server counts
//! ([`Route`]), its misbehaviours ([`Kind`]) and a `/bad/...` request
//! resolved with its parameter ([`Bad`]). A leaf: the parsers, the counters
//! and the handlers all speak it, and it imports none of them.

/// Longest pause the drip routes accept between two bytes.
const MAX_DRIP_MS: u64 = 10_000;
/// Largest `/bad/huge-header`, in KiB (64 MiB).
const MAX_HUGE_KB: u64 = 64 * 1024;
/// Longest `/bad/idle-close` wait (one hour).
const MAX_IDLE_MS: u64 = 3_600_000;
/// The misbehaviours, one per `/bad/...` path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Close,
    ResetMidBody,
    Silent,
    DripHead,
    DripBody,
    EofBody,
    ClShort,
    ClLong,
    ClInvalid,
    ClDup,
    ChunkBad,
    ChunkExt,
    ChunkTrunc,
    Continue,
    Body204,
    Body304,
    HeadBody,
    HugeHeader,
    EndlessHeader,
    /// A chunked body whose first chunk-size line never ends (its chunk
    /// extension goes on), sent as fast as the client reads.
    EndlessChunkExt,
    /// A chunked body whose trailer block never ends.
    EndlessTrailers,
    /// 1,000 `Set-Cookie` fields of about 50 bytes: a large, normal head.
    ManyCookies,
    /// Both `Transfer-Encoding: chunked` and a (wrong) `Content-Length`.
    TeAndCl,
    /// `Transfer-Encoding: identity` and a `Content-Length`: the body runs
    /// to the close.
    TeIdentity,
    /// A head whose lines end in a bare LF.
    BareLf,
    /// 413 as soon as the request head is read, the body unread, then a
    /// reset at once: the client's write fails with the answer waiting.
    Early413,
    Http10,
    IdleClose,
    CloseEvery,
    /// HTTP/2 only: RST_STREAM INTERNAL_ERROR instead of an answer.
    Rst,
    /// HTTP/2 only: RST_STREAM REFUSED_STREAM instead of an answer.
    Refuse,
    /// HTTP/2 only: an answer, then a graceful GOAWAY.
    GoAway,
}

/// A route's one query parameter: name, default, bounds and the 400 body
/// for a value out of them.
struct Param {
    key: &'static str,
    default: u64,
    min: u64,
    max: u64,
    usage: &'static str,
}

impl Kind {
    pub(crate) const COUNT: usize = 32;
    pub(crate) const ALL: [Kind; Kind::COUNT] = [
        Kind::Close,
        Kind::ResetMidBody,
        Kind::Silent,
        Kind::DripHead,
        Kind::DripBody,
        Kind::EofBody,
        Kind::ClShort,
        Kind::ClLong,
        Kind::ClInvalid,
        Kind::ClDup,
        Kind::ChunkBad,
        Kind::ChunkExt,
        Kind::ChunkTrunc,
        Kind::Continue,
        Kind::Body204,
        Kind::Body304,
        Kind::HeadBody,
        Kind::HugeHeader,
        Kind::EndlessHeader,
        Kind::EndlessChunkExt,
        Kind::EndlessTrailers,
        Kind::ManyCookies,
        Kind::TeAndCl,
        Kind::TeIdentity,
        Kind::BareLf,
        Kind::Early413,
        Kind::Http10,
        Kind::IdleClose,
        Kind::CloseEvery,
        Kind::Rst,
        Kind::Refuse,
        Kind::GoAway,
    ];

    /// The path, which is also the route's name in the stats.
    pub(crate) fn path(self) -> &'static str {
        match self {
            Kind::Close => "/bad/close",
            Kind::ResetMidBody => "/bad/reset-mid-body",
            Kind::Silent => "/bad/silent",
            Kind::DripHead => "/bad/drip-head",
            Kind::DripBody => "/bad/drip-body",
            Kind::EofBody => "/bad/eof-body",
            Kind::ClShort => "/bad/cl-short",
            Kind::ClLong => "/bad/cl-long",
            Kind::ClInvalid => "/bad/cl-invalid",
            Kind::ClDup => "/bad/cl-dup",
            Kind::ChunkBad => "/bad/chunk-bad",
            Kind::ChunkExt => "/bad/chunk-ext",
            Kind::ChunkTrunc => "/bad/chunk-trunc",
            Kind::Continue => "/bad/continue",
            Kind::Body204 => "/bad/204-body",
            Kind::Body304 => "/bad/304-body",
            Kind::HeadBody => "/bad/head-body",
            Kind::HugeHeader => "/bad/huge-header",
            Kind::EndlessHeader => "/bad/endless-header",
            Kind::EndlessChunkExt => "/bad/endless-chunk-ext",
            Kind::EndlessTrailers => "/bad/endless-trailers",
            Kind::ManyCookies => "/bad/many-cookies",
            Kind::TeAndCl => "/bad/te-and-cl",
            Kind::TeIdentity => "/bad/te-identity",
            Kind::BareLf => "/bad/bare-lf",
            Kind::Early413 => "/bad/early-413",
            Kind::Http10 => "/bad/http10",
            Kind::IdleClose => "/bad/idle-close",
            Kind::CloseEvery => "/bad/close-every",
            Kind::Rst => "/bad/rst",
            Kind::Refuse => "/bad/refuse",
            Kind::GoAway => "/bad/goaway",
        }
    }

    fn param(self) -> Option<Param> {
        let drip = Param {
            key: "ms",
            default: 10,
            min: 0,
            max: MAX_DRIP_MS,
            usage: "ms must be a whole number up to 10000\n",
        };
        Some(match self {
            Kind::DripHead | Kind::DripBody => drip,
            Kind::HugeHeader => Param {
                key: "kb",
                default: 100,
                min: 1,
                max: MAX_HUGE_KB,
                usage: "kb must be a whole number from 1 to 65536\n",
            },
            Kind::IdleClose => Param {
                key: "ms",
                default: 200,
                min: 0,
                max: MAX_IDLE_MS,
                usage: "ms must be a whole number up to 3600000\n",
            },
            Kind::CloseEvery => Param {
                key: "n",
                default: 3,
                min: 1,
                max: u32::MAX as u64,
                usage: "n must be a whole number from 1 to 4294967295\n",
            },
            _ => return None,
        })
    }
}

/// A `/bad/...` request, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bad {
    pub(crate) kind: Kind,
    /// The value of the route's parameter (`ms`, `kb` or `n`); 0 if it
    /// takes none.
    pub(crate) arg: u64,
}

/// Resolves a path under `/bad/`: `None` when no misbehaviour has that
/// name (a 404), `Err` with the route and the 400 body for a bad parameter.
pub(crate) fn parse(path: &str, query: &str) -> Option<Result<Bad, (Route, &'static str)>> {
    let kind = *Kind::ALL.iter().find(|k| k.path() == path)?;
    let Some(p) = kind.param() else {
        return Some(Ok(Bad { kind, arg: 0 }));
    };
    let arg = match param(query, p.key) {
        None => Some(p.default),
        Some(v) => v
            .parse::<u64>()
            .ok()
            .filter(|n| (p.min..=p.max).contains(n)),
    };
    Some(
        arg.map(|arg| Bad { kind, arg })
            .ok_or((Route::Bad(kind), p.usage)),
    )
}

/// The fixed set of route names. Counting by route rather than by raw path
/// keeps memory bounded whatever paths clients send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Root,
    Bytes,
    Sleep,
    Pool,
    Session,
    Vary,
    Status,
    Chunked,
    Close,
    Echo,
    Other,
    /// `/bad/...`: one counter per misbehaviour.
    Bad(Kind),
}

impl Route {
    const PLAIN: [Route; 11] = [
        Route::Root,
        Route::Bytes,
        Route::Sleep,
        Route::Session,
        Route::Vary,
        Route::Status,
        Route::Chunked,
        Route::Close,
        Route::Echo,
        Route::Other,
        Route::Pool,
    ];
    pub(crate) const COUNT: usize = Route::PLAIN.len() + Kind::COUNT;

    /// The route's slot in the counter arrays.
    pub(crate) fn index(self) -> usize {
        match self {
            Route::Root => 0,
            Route::Bytes => 1,
            Route::Sleep => 2,
            Route::Session => 3,
            Route::Vary => 4,
            Route::Status => 5,
            Route::Chunked => 6,
            Route::Close => 7,
            Route::Echo => 8,
            Route::Other => 9,
            Route::Pool => 10,
            Route::Bad(kind) => Route::PLAIN.len() + kind as usize,
        }
    }

    pub(crate) fn at(index: usize) -> Route {
        Route::PLAIN
            .get(index)
            .copied()
            .unwrap_or_else(|| Route::Bad(Kind::ALL[index - Route::PLAIN.len()]))
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Route::Root => "/",
            Route::Bytes => "/bytes",
            Route::Sleep => "/sleep",
            Route::Pool => "/pool",
            Route::Session => "/session",
            Route::Vary => "/vary",
            Route::Status => "/status",
            Route::Chunked => "/chunked",
            Route::Close => "/close",
            Route::Echo => "/echo",
            Route::Other => "other",
            Route::Bad(kind) => kind.path(),
        }
    }
}

pub(crate) fn param<'q>(query: &'q str, key: &str) -> Option<&'q str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::Route;

    #[test]
    fn every_route_is_at_its_own_index() {
        for i in 0..Route::COUNT {
            assert_eq!(Route::at(i).index(), i, "{}", Route::at(i).name());
        }
    }
}
