//! Incremental HTTP/1.1 response framing (RFC 9112 §6).
//!
//! The parser is fed whatever each `read` returned and never copies body
//! bytes: they are counted and skipped. Only a response head that arrives
//! split across reads is buffered (rare on a healthy server), so a
//! connection's state is a few words and 10,000 connections stay small.

use plan::ResponseLimits;
pub use sample::{Detail, Lenient};

/// Largest response head accepted by default; beyond the plan's limit the
/// response is rejected as `HeaderTooLarge` rather than buffered without
/// bound.
pub const MAX_HEAD: usize = ResponseLimits::DEFAULT_HEAD_BYTES as usize;
/// Fields parsed without allocating; a head with more is parsed again
/// against the plan's field limit (rare: hundreds of `Set-Cookie` lines).
const FAST_FIELDS: usize = 100;
/// A buffered head up to this size is parsed again at every read.
const SMALL_HEAD: usize = 8 * 1024;
/// Longest chunk-size line, extensions included.
pub const MAX_CHUNK_LINE: u32 = 4096;

/// Why a response could not be framed; [`ResponseParser::detail`] says
/// which element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// Not HTTP/1.x, or an invalid head, length or chunk size.
    Protocol,
    /// The head, a chunk-size line or the trailers exceeded a limit.
    HeadTooLarge,
}

impl FrameError {
    /// The request's outcome when its response is refused so.
    pub fn outcome(self) -> sample::Outcome {
        match self {
            FrameError::Protocol => sample::Outcome::ProtocolError,
            FrameError::HeadTooLarge => sample::Outcome::HeaderTooLarge,
        }
    }
}

/// What the bytes fed so far amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response is not complete yet; every byte was consumed.
    NeedMore,
    /// The response ended after `consumed` bytes of this input; anything
    /// after belongs to no request of ours.
    Done { consumed: usize },
}

/// How a response's body is delimited, as its head said (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// `Content-Length: n`.
    ContentLength(u64),
    /// `Transfer-Encoding: …, chunked` (it wins over a Content-Length).
    Chunked,
    /// Neither: the body ends when the server closes.
    #[default]
    UntilClose,
    /// No body whatever the headers say: a 204 or 304, or the answer to HEAD.
    NoBody,
}

/// How the end of the current response's body is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits of a chunk size.
    Size {
        value: u64,
        digits: u8,
    },
    /// Reading a chunk extension up to the line's end; `len`: the line's
    /// length so far, `syntax`: where it is in RFC 9112 §7.1.1's grammar.
    Ext {
        value: u64,
        len: u32,
        syntax: Ext,
    },
    /// Saw CR after a size line.
    SizeLf {
        value: u64,
    },
    Data(u64),
    DataCr,
    DataLf,
    /// Reading trailer fields; `len` is the current line's length so far,
    /// `total` the block's, `count` its lines.
    Trailer {
        len: u32,
        total: u32,
        count: u32,
    },
    TrailerLf {
        len: u32,
        total: u32,
        count: u32,
    },
}

/// Where a chunk-size line's extensions are in
/// `*( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ext {
    /// White space before a `;`.
    Lead,
    /// After `;`, before the name.
    Semi,
    Name,
    /// White space after a name.
    AfterName,
    /// After `=`, before the value.
    Equals,
    Token,
    Quoted,
    Escape,
    /// After a closing quote (or white space after a value).
    AfterValue,
    Bad,
}

impl Ext {
    fn next(self, b: u8) -> Ext {
        let ws = b == b' ' || b == b'\t';
        let tchar = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        match self {
            Ext::Lead | Ext::AfterValue if ws => self,
            Ext::Lead | Ext::AfterValue | Ext::Name | Ext::AfterName | Ext::Token if b == b';' => {
                Ext::Semi
            }
            Ext::Semi if ws => Ext::Semi,
            Ext::Semi | Ext::Name if tchar => Ext::Name,
            Ext::Name | Ext::AfterName if ws => Ext::AfterName,
            Ext::Name | Ext::AfterName if b == b'=' => Ext::Equals,
            Ext::Equals if ws => Ext::Equals,
            Ext::Equals if b == b'"' => Ext::Quoted,
            Ext::Equals | Ext::Token if tchar => Ext::Token,
            Ext::Token if ws => Ext::AfterValue,
            Ext::Quoted if b == b'"' => Ext::AfterValue,
            Ext::Quoted if b == b'\\' => Ext::Escape,
            Ext::Quoted | Ext::Escape if ws || (0x21..=0x7e).contains(&b) || b >= 0x80 => {
                Ext::Quoted
            }
            _ => Ext::Bad,
        }
    }

    /// The line may end here.
    fn complete(self) -> bool {
        matches!(self, Ext::Name | Ext::Token | Ext::AfterValue)
    }
}

/// Frames one response at a time on a connection; [`ResponseParser::reset`]
/// prepares it for the next.
#[derive(Debug, Default)]
pub struct ResponseParser {
    state: StateCell,
    head_buf: Vec<u8>,
    no_body: bool,
    /// Final status code (0 until a head has been parsed).
    pub status: u16,
    /// Body bytes so far (decoded size for chunked: chunk data only).
    pub body_len: u64,
    /// Whether the server lets the connection be reused after this response.
    pub keep_alive: bool,
    /// The `Server` header of the response, captured only when asked.
    pub server: Option<String>,
    capture_server: bool,
    /// How the final head framed the body (once it is parsed).
    pub framing: Framing,
    /// Which element broke a rule or a limit, after a [`FrameError`].
    pub detail: Detail,
    /// [`Lenient`] bits: what this response needed overlooked. Such a
    /// response counts, but its connection is not reused.
    pub lenient: u8,
    limits: ResponseLimits,
    /// How much of `head_buf` the last parse saw.
    parsed_at: usize,
}

#[derive(Debug)]
struct StateCell(State);
impl Default for StateCell {
    fn default() -> Self {
        StateCell(State::Head)
    }
}

/// Most capacity a per-connection buffer keeps between requests: more is
/// given back, so one large response does not pin its buffer on an idle
/// connection for the rest of the run (100,000 connections × a 256 KiB head
/// would be 25 GiB). Typical heads and captures fit, and keep their buffer.
pub const KEEP_BUFFER: usize = 16 * 1024;

/// Empties `buf` for the next request, freeing it if it grew past [`KEEP_BUFFER`].
#[inline]
pub fn clear_buffer(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP_BUFFER {
        *buf = Vec::new();
    } else {
        buf.clear();
    }
}

impl ResponseParser {
    /// Prepares for the next response. `head_request`: the request was HEAD,
    /// so the response has no body whatever its headers say.
    pub fn reset(&mut self, head_request: bool, capture_server: bool) {
        self.state.0 = State::Head;
        clear_buffer(&mut self.head_buf);
        self.no_body = head_request;
        self.status = 0;
        self.body_len = 0;
        self.keep_alive = false;
        self.capture_server = capture_server;
        self.framing = Framing::default();
        self.detail = Detail::None;
        self.lenient = 0;
        self.parsed_at = 0;
    }

    /// The limits later responses are read under.
    pub fn set_limits(&mut self, limits: ResponseLimits) {
        self.limits = limits;
    }

    /// Records what failed and returns the error class it belongs to.
    #[cold]
    fn fail(&mut self, d: Detail) -> FrameError {
        self.detail = d;
        if d.is_limit() {
            FrameError::HeadTooLarge
        } else {
            FrameError::Protocol
        }
    }

    /// True before the first byte of a final or interim head was consumed.
    pub fn is_fresh(&self) -> bool {
        self.state.0 == State::Head && self.head_buf.is_empty() && self.status == 0
    }

    /// Feeds the next bytes read from the connection.
    pub fn feed(&mut self, input: &[u8]) -> Result<Progress, FrameError> {
        let mut pos = 0;
        loop {
            match self.state.0 {
                State::Head => match self.head(&input[pos..])? {
                    Some(n) => pos += n,
                    None => return Ok(Progress::NeedMore),
                },
                State::Length(rem) => {
                    let n = rem.min((input.len() - pos) as u64);
                    pos += n as usize;
                    self.body_len += n;
                    if n == rem {
                        self.state.0 = State::Done;
                    } else {
                        self.state.0 = State::Length(rem - n);
                        return Ok(Progress::NeedMore);
                    }
                }
                State::Chunked(c) => {
                    let (n, next) = self.chunked(c, &input[pos..])?;
                    pos += n;
                    match next {
                        Some(c) => {
                            self.state.0 = State::Chunked(c);
                            return Ok(Progress::NeedMore);
                        }
                        None => self.state.0 = State::Done,
                    }
                }
                State::UntilClose => {
                    self.body_len += (input.len() - pos) as u64;
                    return Ok(Progress::NeedMore);
                }
                State::Done => return Ok(Progress::Done { consumed: pos }),
            }
        }
    }

    /// The connection reached end of file: a close-delimited body is now
    /// complete; anything else is cut short.
    pub fn eof(&mut self) -> Result<(), EofError> {
        match self.state.0 {
            State::UntilClose | State::Done => {
                self.state.0 = State::Done;
                Ok(())
            }
            State::Head if self.status == 0 && self.head_buf.is_empty() => {
                Err(EofError::BeforeResponse)
            }
            State::Head if self.parsed_at < self.head_buf.len() => {
                // A large head is not parsed at every read (see `head`):
                // what was buffered may already have been invalid.
                let buf = std::mem::take(&mut self.head_buf);
                let r = self.parse_head(&buf);
                self.head_buf = buf;
                match r {
                    Err(e) => Err(EofError::Invalid(e)),
                    Ok(_) => Err(EofError::Incomplete),
                }
            }
            _ => Err(EofError::Incomplete),
        }
    }

    /// Parses a head from `input` (joined with earlier partial bytes). Returns
    /// bytes of `input` consumed once a final head is complete; `None` when
    /// more bytes are needed (all of `input` is then buffered).
    fn head(&mut self, input: &[u8]) -> Result<Option<usize>, FrameError> {
        let buffered = self.head_buf.len();
        let max = self.limits.head_bytes as usize;
        let parsed = if buffered == 0 {
            self.parsed_at = input.len();
            self.parse_head(input)?
        } else {
            let take = input.len().min(max + 1 - buffered.min(max));
            self.head_buf.extend_from_slice(&input[..take]);
            // A small head is parsed again at every read. A large one is
            // parsed when its blank line may have come, or when it has
            // doubled since it was last parsed (an error is then found
            // later, at worst at the end of file): a head dribbled a byte
            // at a time costs a few parses, not one per byte (quadratic).
            let len = self.head_buf.len();
            let fresh = &self.head_buf[buffered.saturating_sub(3)..];
            let blank =
                fresh.windows(2).any(|w| w == b"\n\n") || fresh.windows(3).any(|w| w == b"\n\r\n");
            if len <= SMALL_HEAD || blank || len >= 2 * self.parsed_at || len > max {
                self.parsed_at = len;
                let buf = std::mem::take(&mut self.head_buf);
                let r = self.parse_head(&buf);
                self.head_buf = buf;
                r?
            } else {
                None
            }
        };
        match parsed {
            Some(end) => {
                // Not kept large while the connection idles (a split head only).
                clear_buffer(&mut self.head_buf);
                Ok(Some(end - buffered))
            }
            None => {
                if buffered == 0 {
                    if input.len() > max {
                        return Err(self.fail(Detail::HeadTooLarge));
                    }
                    self.head_buf.extend_from_slice(input);
                } else if self.head_buf.len() > max {
                    return Err(self.fail(Detail::HeadTooLarge));
                }
                Ok(None)
            }
        }
    }

    /// Parses one head at the start of `buf`; on success sets the body state
    /// and returns its length. Interim (1xx) heads are skipped: the state stays
    /// `Head` and their length is returned so the caller parses on.
    fn parse_head(&mut self, buf: &[u8]) -> Result<Option<usize>, FrameError> {
        // Uninitialised slots: zeroing 100 headers per response cost more
        // than parsing a typical head.
        let mut fast =
            [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; FAST_FIELDS];
        let mut many = Vec::new();
        let mut resp = httparse::Response::new(&mut []);
        let config = httparse::ParserConfig::default();
        let mut parsed = config.parse_response_with_uninit_headers(&mut resp, buf, &mut fast);
        if parsed == Err(httparse::Error::TooManyHeaders) {
            // Hundreds of fields are normal (Set-Cookie): parse again
            // against the plan's limit.
            many.resize_with(self.limits.fields as usize, std::mem::MaybeUninit::uninit);
            resp = httparse::Response::new(&mut []);
            parsed = config.parse_response_with_uninit_headers(&mut resp, buf, &mut many);
        }
        let max = self.limits.head_bytes as usize;
        let len = match parsed {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                if buf.len() > max {
                    return Err(self.fail(Detail::HeadTooLarge));
                }
                return Ok(None);
            }
            Err(httparse::Error::TooManyHeaders) => return Err(self.fail(Detail::TooManyFields)),
            Err(httparse::Error::Status | httparse::Error::Version) => {
                return Err(self.fail(Detail::StatusLine))
            }
            Err(_) => return Err(self.fail(Detail::HeaderLine)),
        };
        if len > max {
            return Err(self.fail(Detail::HeadTooLarge));
        }
        let status = resp.code.unwrap_or(0);
        // 000–099 are not HTTP statuses (and 0 means "no response" in a Sample).
        if status < 100 {
            return Err(self.fail(Detail::StatusLine));
        }
        // httparse reads a bare LF as a line end: more LFs than CRs in the
        // head means some line ended without its CR. Counted, and the
        // connection is not reused after it.
        let lf_minus_cr = buf[..len].iter().fold(0i32, |n, &b| {
            n + i32::from(b == b'\n') - i32::from(b == b'\r')
        });
        if lf_minus_cr > 0 {
            self.lenient |= Lenient::BareLf.bit();
        }
        if (100..200).contains(&status) {
            if status == 101 {
                // We never ask to switch protocols.
                return Err(self.fail(Detail::Switching));
            }
            return Ok(Some(len));
        }
        let http10 = resp.version == Some(0);
        let mut keep_alive = !http10;
        let mut length: Option<u64> = None;
        // Whether the last Transfer-Encoding's final coding is chunked
        // (several fields are one list, RFC 9110 §5.3).
        let mut transfer: Option<bool> = None;
        for h in resp.headers.iter() {
            let name = h.name.as_bytes();
            if name.eq_ignore_ascii_case(b"content-length") {
                let Some(v) = crate::http::parse_content_length(h.value) else {
                    return Err(self.fail(Detail::ContentLength));
                };
                if length.is_some_and(|l| l != v) {
                    return Err(self.fail(Detail::ContentLength));
                }
                length = Some(v);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                // Chunked must be the last coding (RFC 9112 §6.1).
                transfer = Some(last_token(h.value).eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case(b"connection") {
                for tok in h.value.split(|&b| b == b',') {
                    let t = tok.trim_ascii();
                    if t.eq_ignore_ascii_case(b"close") {
                        keep_alive = false;
                    } else if t.eq_ignore_ascii_case(b"keep-alive") && http10 {
                        keep_alive = true;
                    }
                }
            } else if self.capture_server && name.eq_ignore_ascii_case(b"server") {
                self.server = Some(String::from_utf8_lossy(h.value).into_owned());
            }
        }
        self.status = status;
        // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length, and a
        // message with both may be an attempt at request smuggling: read
        // as chunked, then close. A final coding other than chunked leaves
        // the body to run to the close.
        if let Some(chunked) = transfer {
            if length.is_some() {
                self.lenient |= Lenient::TransferAndLength.bit();
            }
            if !chunked {
                self.lenient |= Lenient::TransferNotChunked.bit();
            }
            length = None;
        }
        self.framing = if self.no_body || status == 204 || status == 304 {
            Framing::NoBody
        } else if transfer == Some(true) {
            Framing::Chunked
        } else if let Some(l) = length {
            Framing::ContentLength(l)
        } else {
            Framing::UntilClose
        };
        self.keep_alive = keep_alive && self.lenient == 0;
        self.state.0 = match self.framing {
            Framing::NoBody | Framing::ContentLength(0) => State::Done,
            Framing::ContentLength(l) => State::Length(l),
            Framing::Chunked => State::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
            }),
            Framing::UntilClose => {
                // The body runs to the close: the connection cannot be reused.
                self.keep_alive = false;
                State::UntilClose
            }
        };
        Ok(Some(len))
    }

    /// Advances the chunked decoder over `input`. Returns bytes consumed and
    /// the next chunk state, or `None` once the last chunk and trailers end.
    fn chunked(
        &mut self,
        mut c: Chunk,
        input: &[u8],
    ) -> Result<(usize, Option<Chunk>), FrameError> {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            c = match c {
                Chunk::Data(rem) => {
                    let n = rem.min((input.len() - i) as u64);
                    i += n as usize;
                    self.body_len += n;
                    if n == rem {
                        Chunk::DataCr
                    } else {
                        Chunk::Data(rem - n)
                    }
                }
                Chunk::Size { value, digits } => {
                    i += 1;
                    match hex(b) {
                        Some(d) => {
                            if digits >= 15 {
                                return Err(self.fail(Detail::ChunkSize));
                            }
                            Chunk::Size {
                                value: value << 4 | d as u64,
                                digits: digits + 1,
                            }
                        }
                        None if digits == 0 => return Err(self.fail(Detail::ChunkSize)),
                        None => match b {
                            b'\r' => Chunk::SizeLf { value },
                            b';' | b' ' | b'\t' => Chunk::Ext {
                                value,
                                len: u32::from(digits) + 1,
                                syntax: if b == b';' { Ext::Semi } else { Ext::Lead },
                            },
                            _ => return Err(self.fail(Detail::ChunkSize)),
                        },
                    }
                }
                Chunk::Ext { value, len, syntax } => {
                    // Extensions are checked, not kept, up to a limit: an
                    // endless line is refused, not read for ever; a
                    // malformed one is read, and the connection not trusted.
                    let rest = &input[i..];
                    let room = (MAX_CHUNK_LINE - len) as usize;
                    let end = rest
                        .iter()
                        .take(room + 1)
                        .position(|&b| b == b'\r' || b == b'\n');
                    let line = &rest[..end.unwrap_or(rest.len().min(room + 1))];
                    let syntax = line.iter().fold(syntax, |s, &b| s.next(b));
                    match end {
                        Some(at) if rest[at] == b'\r' => {
                            if !syntax.complete() {
                                self.lenient |= Lenient::ChunkExtension.bit();
                                self.keep_alive = false;
                            }
                            i += at + 1;
                            Chunk::SizeLf { value }
                        }
                        Some(_) => return Err(self.fail(Detail::ChunkSize)),
                        None if rest.len() > room => {
                            return Err(self.fail(Detail::ChunkLineTooLong))
                        }
                        None => {
                            i += rest.len();
                            Chunk::Ext {
                                value,
                                len: len + rest.len() as u32,
                                syntax,
                            }
                        }
                    }
                }
                Chunk::SizeLf { value } => {
                    i += 1;
                    if b != b'\n' {
                        return Err(self.fail(Detail::ChunkSize));
                    }
                    if value == 0 {
                        Chunk::Trailer {
                            len: 0,
                            total: 0,
                            count: 0,
                        }
                    } else {
                        Chunk::Data(value)
                    }
                }
                Chunk::DataCr => {
                    i += 1;
                    if b != b'\r' {
                        return Err(self.fail(Detail::ChunkEnd));
                    }
                    Chunk::DataLf
                }
                Chunk::DataLf => {
                    i += 1;
                    if b != b'\n' {
                        return Err(self.fail(Detail::ChunkEnd));
                    }
                    Chunk::Size {
                        value: 0,
                        digits: 0,
                    }
                }
                Chunk::Trailer { len, total, count } => {
                    i += 1;
                    if total >= self.limits.head_bytes {
                        return Err(self.fail(Detail::TrailersTooLarge));
                    }
                    if b == b'\r' {
                        Chunk::TrailerLf { len, total, count }
                    } else {
                        Chunk::Trailer {
                            len: len + 1,
                            total: total + 1,
                            count,
                        }
                    }
                }
                Chunk::TrailerLf { len, total, count } => {
                    i += 1;
                    if b != b'\n' {
                        return Err(self.fail(Detail::HeaderLine));
                    }
                    if len == 0 {
                        return Ok((i, None));
                    }
                    if count >= self.limits.fields {
                        return Err(self.fail(Detail::TooManyTrailers));
                    }
                    Chunk::Trailer {
                        len: 0,
                        total: total + 2,
                        count: count + 1,
                    }
                }
            };
        }
        Ok((i, Some(c)))
    }
}

/// Why a connection's end of file cut a response short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EofError {
    /// Not a byte of the response arrived.
    BeforeResponse,
    /// The head or body was cut off.
    Incomplete,
    /// The head buffered so far was not valid (found at the end: a large
    /// head is not parsed at every read).
    Invalid(FrameError),
}

fn last_token(v: &[u8]) -> &[u8] {
    v.rsplit(|&b| b == b',').next().unwrap_or(v).trim_ascii()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Framed {
        status: u16,
        body_len: u64,
        keep_alive: bool,
        consumed: usize,
    }

    /// Feeds `wire` in pieces split at `cuts`; returns the outcome.
    fn feed_split(wire: &[u8], cuts: &[usize], head: bool) -> Result<Framed, String> {
        let mut p = ResponseParser::default();
        p.reset(head, false);
        let mut start = 0;
        let mut bounds: Vec<usize> = cuts.to_vec();
        bounds.push(wire.len());
        for end in bounds {
            match p.feed(&wire[start..end]).map_err(|e| format!("{e:?}"))? {
                Progress::Done { consumed } => {
                    return Ok(Framed {
                        status: p.status,
                        body_len: p.body_len,
                        keep_alive: p.keep_alive,
                        consumed: start + consumed,
                    })
                }
                Progress::NeedMore => start = end,
            }
        }
        match p.eof() {
            Ok(()) => Ok(Framed {
                status: p.status,
                body_len: p.body_len,
                keep_alive: p.keep_alive,
                consumed: wire.len(),
            }),
            Err(e) => Err(format!("{e:?}")),
        }
    }

    #[test]
    fn a_large_split_head_gives_its_buffer_back() {
        let mut p = ResponseParser::default();
        let small = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        let big = format!(
            "HTTP/1.1 200 OK\r\nX-Big: {}\r\nContent-Length: 0\r\n\r\n",
            "a".repeat(40_000)
        );
        for (wire, kept) in [(&small[..], true), (big.as_bytes(), false)] {
            p.reset(false, false);
            // Split: the first piece is buffered in head_buf.
            assert_eq!(p.feed(&wire[..10]).unwrap(), Progress::NeedMore);
            assert!(matches!(
                p.feed(&wire[10..]).unwrap(),
                Progress::Done { .. }
            ));
            // Given back as soon as the head is parsed, not at the next request.
            assert_eq!(p.head_buf.capacity() > 0, kept, "{}", wire.len());
            p.reset(false, false);
            assert_eq!(p.head_buf.capacity() > 0, kept, "{}", wire.len());
        }
        let mut v = Vec::with_capacity(KEEP_BUFFER);
        v.push(1);
        clear_buffer(&mut v);
        assert!(v.is_empty() && v.capacity() == KEEP_BUFFER);
        v.reserve(KEEP_BUFFER + 1);
        clear_buffer(&mut v);
        assert_eq!(v.capacity(), 0);
    }

    /// Every single split point, and byte-at-a-time, must frame identically.
    fn check_all_splits(wire: &[u8], head: bool, want: &Result<Framed, String>) {
        assert_eq!(&feed_split(wire, &[], head), want, "whole");
        for cut in 1..wire.len() {
            assert_eq!(&feed_split(wire, &[cut], head), want, "cut at {cut}");
        }
        let every: Vec<usize> = (1..wire.len()).collect();
        assert_eq!(&feed_split(wire, &every, head), want, "byte at a time");
    }

    fn ok(status: u16, body_len: u64, keep_alive: bool, consumed: usize) -> Result<Framed, String> {
        Ok(Framed {
            status,
            body_len,
            keep_alive,
            consumed,
        })
    }

    #[test]
    fn the_framing_a_head_chose_is_reported() {
        let framing = |head: &[u8], head_request: bool| {
            let mut p = ResponseParser::default();
            p.reset(head_request, false);
            let _ = p.feed(head);
            p.framing
        };
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n";
        assert_eq!(framing(cl, false), Framing::ContentLength(12));
        assert_eq!(framing(cl, true), Framing::NoBody, "HEAD");
        assert_eq!(
            framing(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false),
            Framing::Chunked
        );
        assert_eq!(
            framing(b"HTTP/1.0 302 Found\r\nLocation: /login\r\n\r\n", false),
            Framing::UntilClose
        );
        assert_eq!(
            framing(
                b"HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n",
                false
            ),
            Framing::NoBody
        );
    }

    #[test]
    fn content_length() {
        let w = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello world\n";
        check_all_splits(w, false, &ok(200, 12, true, w.len()));
    }

    #[test]
    fn content_length_leaves_following_bytes() {
        let w = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1";
        check_all_splits(w, false, &ok(200, 2, true, w.len() - 8));
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let w = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                  5;name=val\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\n";
        check_all_splits(w, false, &ok(200, 31, true, w.len()));
    }

    #[test]
    fn chunked_bad_size_is_protocol_error() {
        let w = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        check_all_splits(w, false, &Err("Protocol".into()));
        let w = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n";
        check_all_splits(w, false, &Err("Protocol".into()));
    }

    #[test]
    fn chunked_truncated_is_incomplete() {
        let w = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel";
        check_all_splits(w, false, &Err("Incomplete".into()));
    }

    #[test]
    fn close_delimited_body_ends_at_eof() {
        let w = b"HTTP/1.0 200 OK\r\nServer: x\r\n\r\nsome body";
        check_all_splits(w, false, &ok(200, 9, false, w.len()));
        let w = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc";
        check_all_splits(w, false, &ok(200, 3, false, w.len()));
    }

    #[test]
    fn http10_keep_alive_and_connection_close() {
        let w = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx";
        check_all_splits(w, false, &ok(200, 1, true, w.len()));
        let w = b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 1\r\n\r\nx";
        check_all_splits(w, false, &ok(200, 1, false, w.len()));
    }

    #[test]
    fn interim_responses_are_skipped() {
        let w = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n\
                  HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n";
        check_all_splits(w, false, &ok(201, 0, true, w.len()));
    }

    #[test]
    fn no_body_for_head_204_304() {
        let w = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n";
        check_all_splits(w, true, &ok(200, 0, true, w.len()));
        let w = b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n";
        check_all_splits(w, false, &ok(204, 0, true, w.len()));
        let w = b"HTTP/1.1 304 Not Modified\r\n\r\n";
        check_all_splits(w, false, &ok(304, 0, true, w.len()));
    }

    #[test]
    fn bad_lengths_are_protocol_errors() {
        for w in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            b"SMTP ready\r\n\r\n",
            b"HTTP/1.1 041 OK\r\nContent-Length: 1\r\n\r\nB",
            b"HTTP/1.1 000 X\r\n\r\n",
        ] {
            assert_eq!(feed_split(w, &[], false), Err("Protocol".into()), "{w:?}");
        }
        // Duplicated but equal lengths are tolerated (RFC 9110 §8.6).
        let w = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx";
        assert_eq!(feed_split(w, &[], false), ok(200, 1, true, w.len()));
    }

    #[test]
    fn eof_before_and_during_response() {
        assert_eq!(feed_split(b"", &[], false), Err("BeforeResponse".into()));
        check_all_splits(
            b"HTTP/1.1 200 OK\r\nContent-Le",
            false,
            &Err("Incomplete".into()),
        );
        let w = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
        check_all_splits(w, false, &Err("Incomplete".into()));
    }

    #[test]
    fn huge_head_is_rejected_not_buffered() {
        let mut w = b"HTTP/1.1 200 OK\r\n".to_vec();
        while w.len() <= MAX_HEAD + 10 {
            w.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert_eq!(feed_split(&w, &[], false), Err("HeadTooLarge".into()));
        let cuts: Vec<usize> = (1..w.len()).step_by(1000).collect();
        assert_eq!(feed_split(&w, &cuts, false), Err("HeadTooLarge".into()));
    }

    #[test]
    fn parser_reuses_across_responses() {
        let mut p = ResponseParser::default();
        p.reset(false, true);
        let w = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 1\r\n\r\nx";
        assert_eq!(p.feed(w), Ok(Progress::Done { consumed: w.len() }));
        assert_eq!(p.server.as_deref(), Some("nginx"));
        p.reset(false, false);
        assert!(p.is_fresh());
        let w = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(p.feed(w), Ok(Progress::Done { consumed: w.len() }));
        assert_eq!(p.status, 404);
    }

    /// Feeds `wire` whole; the error's class and detail, or the response's
    /// framing, keep-alive and lenient bits.
    fn verdict(
        wire: &[u8],
        limits: ResponseLimits,
    ) -> Result<(Framing, bool, u8), (FrameError, Detail)> {
        let mut p = ResponseParser::default();
        p.set_limits(limits);
        p.reset(false, false);
        match p.feed(wire) {
            Err(e) => Err((e, p.detail)),
            Ok(_) => Ok((p.framing, p.keep_alive, p.lenient)),
        }
    }

    #[test]
    fn a_thousand_set_cookie_fields_are_read_and_the_field_limit_holds() {
        let mut w = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..1000 {
            w.extend_from_slice(
                format!("Set-Cookie: c{i:04}=0123456789012345678901234567890123\r\n").as_bytes(),
            );
        }
        w.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
        assert!(w.len() > 50_000);
        let want = ok(200, 2, true, w.len());
        let cuts: Vec<usize> = (1..w.len()).step_by(997).collect();
        assert_eq!(feed_split(&w, &cuts, false), want);
        // A byte at a time: one parse when the blank line comes, not one
        // per byte (this would take minutes if it were quadratic).
        let every: Vec<usize> = (1..w.len()).collect();
        assert_eq!(feed_split(&w, &every, false), want);
        let tight = ResponseLimits {
            fields: 500,
            ..Default::default()
        };
        assert_eq!(
            verdict(&w, tight),
            Err((FrameError::HeadTooLarge, Detail::TooManyFields))
        );
        let small = ResponseLimits {
            head_bytes: 10_000,
            ..Default::default()
        };
        assert_eq!(
            verdict(&w, small),
            Err((FrameError::HeadTooLarge, Detail::HeadTooLarge))
        );
    }

    #[test]
    fn transfer_encoding_wins_over_length_and_the_connection_closes() {
        // RFC 9112 §6.3: chunked, then close (a smuggling vector).
        let w = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
        check_all_splits(w, false, &ok(200, 3, false, w.len()));
        assert_eq!(
            verdict(w, Default::default()),
            Ok((Framing::Chunked, false, Lenient::TransferAndLength.bit()))
        );
        // A final coding other than chunked: the body runs to the close,
        // whatever Content-Length says.
        let w =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nabcdef";
        assert_eq!(feed_split(w, &[], false), ok(200, 6, false, w.len()));
        assert_eq!(
            verdict(w, Default::default()),
            Ok((
                Framing::UntilClose,
                false,
                Lenient::TransferAndLength.bit() | Lenient::TransferNotChunked.bit()
            ))
        );
    }

    #[test]
    fn bare_lf_heads_are_read_but_not_trusted() {
        let w = b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok";
        check_all_splits(w, false, &ok(200, 2, false, w.len()));
        assert_eq!(
            verdict(w, Default::default()),
            Ok((Framing::ContentLength(2), false, Lenient::BareLf.bit()))
        );
        let strict = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(
            verdict(strict, Default::default()),
            Ok((Framing::ContentLength(2), true, 0))
        );
    }

    #[test]
    fn every_variable_length_element_has_a_limit_and_a_detail() {
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let with = |tail: &[u8]| [&chunked[..], tail].concat();
        // An endless chunk extension.
        let mut w = with(b"5;");
        w.extend(std::iter::repeat_n(b'x', MAX_CHUNK_LINE as usize));
        assert_eq!(
            verdict(&w, Default::default()),
            Err((FrameError::HeadTooLarge, Detail::ChunkLineTooLong))
        );
        // Just under the limit is fine, in any split.
        let mut w = with(b"3;");
        w.extend(std::iter::repeat_n(b'x', MAX_CHUNK_LINE as usize - 10));
        w.extend_from_slice(b"\r\nabc\r\n0\r\n\r\n");
        let cuts: Vec<usize> = (1..w.len()).step_by(97).collect();
        assert_eq!(feed_split(&w, &cuts, false), ok(200, 3, true, w.len()));
        // Endless trailers, by size and by count.
        let mut w = with(b"0\r\n");
        while w.len() < 300_000 {
            w.extend_from_slice(b"X-Trailer: 0123456789012345678901234567890123456789\r\n");
        }
        let few = ResponseLimits {
            fields: 100_000,
            ..Default::default()
        };
        assert_eq!(
            verdict(&w, few),
            Err((FrameError::HeadTooLarge, Detail::TrailersTooLarge))
        );
        assert_eq!(
            verdict(&w, Default::default()),
            Err((FrameError::HeadTooLarge, Detail::TooManyTrailers))
        );
        // Syntax: each element named.
        for (wire, detail) in [
            (&b"SMTP ready\r\n\r\n"[..], Detail::StatusLine),
            (b"HTTP/1.1 000 X\r\n\r\n", Detail::StatusLine),
            (
                b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
                Detail::HeaderLine,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                Detail::ContentLength,
            ),
            (b"HTTP/1.1 101 Switching\r\n\r\n", Detail::Switching),
            (&with(b"zz\r\n"), Detail::ChunkSize),
            (&with(b"3\nabc"), Detail::ChunkSize),
            (&with(b"3\r\nabcX"), Detail::ChunkEnd),
        ] {
            assert_eq!(
                verdict(wire, Default::default()),
                Err((FrameError::Protocol, detail)),
                "{}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn malformed_chunk_extensions_are_read_but_not_trusted() {
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let with = |line: &[u8]| [&chunked[..], line, b"\r\nok\r\n0\r\n\r\n"].concat();
        for good in [
            &b"2;a"[..],
            b"2;a=b",
            b"2 ; a = \"x;y\\\"z\"",
            b"2;a=b;c;d=\"\"",
        ] {
            let w = with(good);
            assert_eq!(
                verdict(&w, Default::default()),
                Ok((Framing::Chunked, true, 0)),
                "{}",
                String::from_utf8_lossy(good)
            );
        }
        for bad in [
            &b"2  "[..],
            b"2;",
            b"2 abc",
            b"2;a=\"open",
            b"2;=b",
            b"2;a b",
        ] {
            let w = with(bad);
            assert_eq!(
                verdict(&w, Default::default()),
                Ok((Framing::Chunked, false, Lenient::ChunkExtension.bit())),
                "{}",
                String::from_utf8_lossy(bad)
            );
            assert_eq!(feed_split(&w, &[], false), ok(200, 2, false, w.len()));
        }
    }

    #[test]
    fn a_large_invalid_head_dribbled_is_still_refused() {
        // Over 8 KiB a buffered head is parsed as it doubles, not at every
        // read: the bad byte is still found, by a later read or at the end.
        let mut w = b"HTTP/1.1 200 OK\r\n".to_vec();
        while w.len() < 20_000 {
            w.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        w.extend_from_slice(b"Bad Name: x\r\n");
        let cuts: Vec<usize> = (1..w.len()).collect();
        let mut p = ResponseParser::default();
        p.reset(false, false);
        let mut start = 0;
        let mut refused = None;
        for end in cuts.into_iter().chain([w.len()]) {
            if let Err(e) = p.feed(&w[start..end]) {
                refused = Some(e);
                break;
            }
            start = end;
        }
        let e = match refused {
            Some(e) => e,
            None => match p.eof() {
                Err(EofError::Invalid(e)) => e,
                other => panic!("{other:?}"),
            },
        };
        assert_eq!((e, p.detail), (FrameError::Protocol, Detail::HeaderLine));
    }
}
