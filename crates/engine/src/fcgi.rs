//! FastCGI 1.0, the client side: requests encoded, responses decoded
//! incrementally, sans I/O (the caller owns the socket, as with
//! [`crate::codec`]).
//!
//! ```text
//! encode_request ─▶ BEGIN_REQUEST (RESPONDER, FCGI_KEEP_CONN optional)
//!                   PARAMS… empty PARAMS   STDIN… empty STDIN
//! ResponseParser::feed ◀─ STDOUT… (CGI head, then body)  STDERR…
//!                          END_REQUEST (appStatus, protocolStatus)
//! ```
//!
//! Written with the HTTP/1.1 codec's rules: fed whatever each `read`
//! returned, the same outcome however the bytes are split, nothing
//! buffered without a bound, no length believed before it is checked.
//! A record's content is never buffered (it is handed on as it arrives);
//! only the CGI head (up to [`Limits::head_bytes`]), the kept part of the
//! body and of stderr, and a management record's pairs are.
//!
//! The record layout, name-value pairs and status codes are the FastCGI
//! 1.0 specification's (Open Market, 1996), §3 and §5.

use crate::codec::Progress;
use std::fmt;

/// `FCGI_VERSION_1`, the only version there is.
pub const VERSION: u8 = 1;
/// Every record starts with an 8-byte header.
pub const HEADER_LEN: usize = 8;
/// Most content one record carries (its length is 16 bits).
pub const MAX_CONTENT: usize = 0xFFFF;
/// Most a name or a value may be: its 4-byte length has 31 bits.
pub const MAX_PAIR_PART: usize = 0x7FFF_FFFF;
/// `FCGI_KEEP_CONN`: the application keeps the connection after the request.
pub const KEEP_CONN: u8 = 1;
/// The request id of management records (`FCGI_GET_VALUES` and answers).
pub const MANAGEMENT_ID: u16 = 0;

/// Record types (§8, `FCGI_BEGIN_REQUEST` … `FCGI_UNKNOWN_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    BeginRequest = 1,
    AbortRequest = 2,
    EndRequest = 3,
    Params = 4,
    Stdin = 5,
    Stdout = 6,
    Stderr = 7,
    Data = 8,
    GetValues = 9,
    GetValuesResult = 10,
    UnknownType = 11,
}

impl RecordType {
    pub fn from_u8(b: u8) -> Option<RecordType> {
        use RecordType::*;
        Some(match b {
            1 => BeginRequest,
            2 => AbortRequest,
            3 => EndRequest,
            4 => Params,
            5 => Stdin,
            6 => Stdout,
            7 => Stderr,
            8 => Data,
            9 => GetValues,
            10 => GetValuesResult,
            11 => UnknownType,
            _ => return None,
        })
    }
}

/// The role asked for in `FCGI_BEGIN_REQUEST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Role {
    Responder = 1,
    Authorizer = 2,
    Filter = 3,
}

/// `protocolStatus` of `FCGI_END_REQUEST` (§5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolStatus {
    /// `FCGI_REQUEST_COMPLETE`: the request ran to its end.
    RequestComplete,
    /// `FCGI_CANT_MPX_CONN`: a second request on a connection of an
    /// application that takes one at a time.
    CantMpxConn,
    /// `FCGI_OVERLOADED`: out of a resource (e.g. database connections).
    Overloaded,
    /// `FCGI_UNKNOWN_ROLE`: the role asked for is not one it plays.
    UnknownRole,
    /// A value the specification does not define.
    Other(u8),
}

impl ProtocolStatus {
    pub fn from_u8(b: u8) -> ProtocolStatus {
        match b {
            0 => ProtocolStatus::RequestComplete,
            1 => ProtocolStatus::CantMpxConn,
            2 => ProtocolStatus::Overloaded,
            3 => ProtocolStatus::UnknownRole,
            n => ProtocolStatus::Other(n),
        }
    }

    /// The specification's name (`FCGI_OVERLOADED`).
    pub fn name(self) -> String {
        match self {
            ProtocolStatus::RequestComplete => "FCGI_REQUEST_COMPLETE".into(),
            ProtocolStatus::CantMpxConn => "FCGI_CANT_MPX_CONN".into(),
            ProtocolStatus::Overloaded => "FCGI_OVERLOADED".into(),
            ProtocolStatus::UnknownRole => "FCGI_UNKNOWN_ROLE".into(),
            ProtocolStatus::Other(n) => format!("protocol status {n}"),
        }
    }
}

/// The body of `FCGI_END_REQUEST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRequest {
    /// The application's exit status (the CGI program's; php-fpm sends 0).
    pub app_status: u32,
    pub protocol_status: ProtocolStatus,
}

// --- encoding -------------------------------------------------------------

/// A request could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A parameter's name or value is over [`MAX_PAIR_PART`] bytes.
    PairTooLong { name: String, len: usize },
    /// The null request id is for management records.
    NullRequestId,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::PairTooLong { name, len } => write!(
                f,
                "FastCGI parameter {name:?} is {len} bytes, over the protocol's {MAX_PAIR_PART}"
            ),
            EncodeError::NullRequestId => {
                f.write_str("FastCGI request id 0 is reserved for management records")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// One request, as [`encode_request`] writes it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// 1..=65535; one at a time per connection unless the application
    /// multiplexes (`FCGI_MPXS_CONNS`).
    pub id: u16,
    /// `FCGI_KEEP_CONN`: the application keeps the connection open after
    /// the response (else it closes it, as nginx asks by default).
    pub keep_conn: bool,
    /// CGI/1.1 variables (`SCRIPT_FILENAME`, `REQUEST_METHOD`, …), in order.
    pub params: &'a [(&'a [u8], &'a [u8])],
    /// The request body.
    pub stdin: &'a [u8],
}

/// Appends a record header.
pub fn encode_header(out: &mut Vec<u8>, kind: RecordType, id: u16, content: u16, padding: u8) {
    let [id1, id0] = id.to_be_bytes();
    let [c1, c0] = content.to_be_bytes();
    out.extend_from_slice(&[VERSION, kind as u8, id1, id0, c1, c0, padding, 0]);
}

/// The padding that makes `content` bytes a multiple of 8 (the
/// specification recommends aligned records).
fn padding_for(content: usize) -> u8 {
    ((8 - content % 8) % 8) as u8
}

/// Appends one record with `content` (≤ [`MAX_CONTENT`] bytes), padded to 8.
fn encode_record(out: &mut Vec<u8>, kind: RecordType, id: u16, content: &[u8]) {
    debug_assert!(content.len() <= MAX_CONTENT);
    let pad = padding_for(content.len());
    encode_header(out, kind, id, content.len() as u16, pad);
    out.extend_from_slice(content);
    out.extend(std::iter::repeat_n(0, pad as usize));
}

/// Appends a stream (`FCGI_PARAMS`, `FCGI_STDIN`, …): `data` in records of
/// at most [`MAX_CONTENT`] bytes, then the empty record that ends it.
pub fn encode_stream(out: &mut Vec<u8>, kind: RecordType, id: u16, data: &[u8]) {
    for chunk in data.chunks(MAX_CONTENT) {
        encode_record(out, kind, id, chunk);
    }
    encode_record(out, kind, id, &[]);
}

/// Appends a name-value pair's bytes (§3.4): each length in 1 byte below
/// 128, else in 4 with the top bit set.
pub fn encode_pair(out: &mut Vec<u8>, name: &[u8], value: &[u8]) -> Result<(), EncodeError> {
    for part in [name, value] {
        if part.len() > MAX_PAIR_PART {
            return Err(EncodeError::PairTooLong {
                name: String::from_utf8_lossy(&name[..name.len().min(64)]).into_owned(),
                len: part.len(),
            });
        }
    }
    for part in [name, value] {
        if part.len() < 0x80 {
            out.push(part.len() as u8);
        } else {
            out.extend_from_slice(&(part.len() as u32 | 0x8000_0000).to_be_bytes());
        }
    }
    out.extend_from_slice(name);
    out.extend_from_slice(value);
    Ok(())
}

/// Appends a whole request: `FCGI_BEGIN_REQUEST` (role responder), the
/// params stream, the stdin stream, each ended by its empty record.
pub fn encode_request(out: &mut Vec<u8>, req: &Request<'_>) -> Result<(), EncodeError> {
    if req.id == MANAGEMENT_ID {
        return Err(EncodeError::NullRequestId);
    }
    let mut pairs = Vec::new();
    for (name, value) in req.params {
        encode_pair(&mut pairs, name, value)?;
    }
    let [r1, r0] = (Role::Responder as u16).to_be_bytes();
    let flags = if req.keep_conn { KEEP_CONN } else { 0 };
    encode_record(
        out,
        RecordType::BeginRequest,
        req.id,
        &[r1, r0, flags, 0, 0, 0, 0, 0],
    );
    encode_stream(out, RecordType::Params, req.id, &pairs);
    encode_stream(out, RecordType::Stdin, req.id, req.stdin);
    Ok(())
}

/// Appends `FCGI_ABORT_REQUEST` for `id`.
pub fn encode_abort(out: &mut Vec<u8>, id: u16) {
    encode_record(out, RecordType::AbortRequest, id, &[]);
}

/// Appends `FCGI_GET_VALUES` asking for `names` (`FCGI_MAX_CONNS`,
/// `FCGI_MAX_REQS`, `FCGI_MPXS_CONNS`); the answer is read with
/// [`ResponseParser::values`]. Names fit one record (they are short).
pub fn encode_get_values(out: &mut Vec<u8>, names: &[&str]) -> Result<(), EncodeError> {
    let mut pairs = Vec::new();
    for n in names {
        encode_pair(&mut pairs, n.as_bytes(), b"")?;
    }
    pairs.truncate(MAX_CONTENT);
    encode_record(out, RecordType::GetValues, MANAGEMENT_ID, &pairs);
    Ok(())
}

// --- decoding: records ----------------------------------------------------

/// A record header, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The type byte (see [`RecordType::from_u8`]).
    pub kind: u8,
    pub request_id: u16,
    pub content_length: u16,
    pub padding_length: u8,
}

/// What [`RecordReader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    /// A record begins.
    Header(Header),
    /// Some of the current record's content (as much as this read held).
    Content(&'a [u8]),
    /// The current record's content and padding are over.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReaderState {
    Header { buf: [u8; HEADER_LEN], have: u8 },
    Content { left: u16, padding: u8 },
    Padding { left: u8 },
}

/// Splits a byte stream into records, never buffering content: a record's
/// header is collected (8 bytes), its content handed on as it arrives, its
/// padding skipped. Lengths need no cap here: 16 bits of content and 8 of
/// padding are all a header can claim, and nothing is allocated for them.
#[derive(Debug, Clone)]
pub struct RecordReader {
    state: ReaderState,
}

impl Default for RecordReader {
    fn default() -> Self {
        RecordReader {
            state: ReaderState::Header {
                buf: [0; HEADER_LEN],
                have: 0,
            },
        }
    }
}

impl RecordReader {
    /// True between records (no byte of the next one read yet).
    pub fn between_records(&self) -> bool {
        matches!(self.state, ReaderState::Header { have: 0, .. })
    }

    /// The next item in `input`: the bytes of `input` it consumed, and the
    /// item, or `None` once all of `input` is consumed with nothing more
    /// to say. Call again with the rest until it returns `None`.
    pub fn next<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Item<'a>>), Error> {
        loop {
            match &mut self.state {
                ReaderState::Header { buf, have } => {
                    let at = *have as usize;
                    let n = (HEADER_LEN - at).min(input.len());
                    buf[at..at + n].copy_from_slice(&input[..n]);
                    *have += n as u8;
                    if (*have as usize) < HEADER_LEN {
                        return Ok((n, None));
                    }
                    let b = *buf;
                    if b[0] != VERSION {
                        return Err(Error::Version(b[0]));
                    }
                    let h = Header {
                        kind: b[1],
                        request_id: u16::from_be_bytes([b[2], b[3]]),
                        content_length: u16::from_be_bytes([b[4], b[5]]),
                        padding_length: b[6],
                    };
                    self.state = ReaderState::Content {
                        left: h.content_length,
                        padding: h.padding_length,
                    };
                    return Ok((n, Some(Item::Header(h))));
                }
                ReaderState::Content { left: 0, padding } => {
                    self.state = ReaderState::Padding { left: *padding };
                }
                ReaderState::Content { left, .. } => {
                    if input.is_empty() {
                        return Ok((0, None));
                    }
                    let n = (*left as usize).min(input.len());
                    *left -= n as u16;
                    return Ok((n, Some(Item::Content(&input[..n]))));
                }
                ReaderState::Padding { left } => {
                    let n = (*left as usize).min(input.len());
                    *left -= n as u8;
                    if *left > 0 {
                        return Ok((n, None));
                    }
                    self.state = ReaderState::Header {
                        buf: [0; HEADER_LEN],
                        have: 0,
                    };
                    return Ok((n, Some(Item::End)));
                }
            }
        }
    }
}

// --- decoding: one response -------------------------------------------------

/// Why a response was refused. Each names the element at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A record header's version byte is not 1 (not FastCGI, or lost sync).
    Version(u8),
    /// A record type this side of the exchange never receives here.
    UnexpectedType { kind: u8, request_id: u16 },
    /// A record for another request on a connection carrying one.
    OtherRequest(u16),
    /// STDOUT or STDERR data after the empty record that ended the stream.
    AfterStreamEnd(u8),
    /// An `FCGI_END_REQUEST` or `FCGI_UNKNOWN_TYPE` body not 8 bytes long.
    BodyLength { kind: u8, len: u16 },
    /// The CGI head did not end within [`Limits::head_bytes`].
    HeadTooLarge,
    /// The CGI head has more fields than [`Limits::fields`].
    TooManyFields,
    /// A CGI head line is not `Name: value`.
    HeaderLine,
    /// `Status:` is not three digits (and a reason).
    Status,
    /// The request completed without a complete CGI head on STDOUT.
    NoHead,
    /// The body went past [`Limits::max_body`].
    BodyTooLarge,
    /// `FCGI_GET_VALUES_RESULT` pairs that are cut short or too many.
    Pairs,
}

impl Error {
    /// The request's outcome when its response is refused so.
    pub fn outcome(&self) -> sample::Outcome {
        match self {
            Error::HeadTooLarge | Error::TooManyFields => sample::Outcome::HeaderTooLarge,
            _ => sample::Outcome::ProtocolError,
        }
    }
}

fn type_name(kind: u8) -> String {
    match RecordType::from_u8(kind) {
        Some(t) => format!("FCGI_{}", upper_snake(&format!("{t:?}"))),
        None => format!("record type {kind}"),
    }
}

fn upper_snake(camel: &str) -> String {
    let mut s = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Version(v) => write!(
                f,
                "a FastCGI record of version {v}, not 1 (is this a FastCGI server?)"
            ),
            Error::UnexpectedType { kind, request_id } => write!(
                f,
                "an unexpected {} record (request {request_id})",
                type_name(*kind)
            ),
            Error::OtherRequest(id) => write!(f, "a record for request {id}, not ours"),
            Error::AfterStreamEnd(kind) => {
                write!(f, "{} data after the stream had ended", type_name(*kind))
            }
            Error::BodyLength { kind, len } => {
                write!(f, "an {} body of {len} bytes, not 8", type_name(*kind))
            }
            Error::HeadTooLarge => f.write_str("the CGI response head is too large"),
            Error::TooManyFields => f.write_str("the CGI response head has too many fields"),
            Error::HeaderLine => f.write_str("a CGI response head line is not `Name: value`"),
            Error::Status => f.write_str("the CGI `Status:` is not a three-digit code"),
            Error::NoHead => f.write_str("the request ended without a complete CGI response head"),
            Error::BodyTooLarge => f.write_str("the response body is too large"),
            Error::Pairs => f.write_str("FCGI_GET_VALUES_RESULT's name-value pairs are malformed"),
        }
    }
}

impl std::error::Error for Error {}

/// The connection ended before the response did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EofError {
    /// Not a byte of the response arrived.
    BeforeResponse,
    /// The response was cut short (no `FCGI_END_REQUEST`).
    Incomplete,
}

/// What one response may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of the CGI head (the STDOUT stream up to its blank line).
    pub head_bytes: usize,
    /// Fields of the CGI head.
    pub fields: usize,
    /// Body bytes past which the response is refused (`u64::MAX`: none;
    /// a load run counts a body, it does not cap it).
    pub max_body: u64,
    /// Body bytes kept for the caller ([`ResponseParser::body`]); the rest
    /// is counted only.
    pub keep_body: usize,
    /// STDERR bytes kept ([`ResponseParser::stderr`]); the rest is counted.
    pub keep_stderr: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            head_bytes: plan::ResponseLimits::DEFAULT_HEAD_BYTES as usize,
            fields: plan::ResponseLimits::DEFAULT_FIELDS as usize,
            max_body: u64::MAX,
            keep_body: 0,
            keep_stderr: 4096,
        }
    }
}

/// Most bytes of `FCGI_GET_VALUES_RESULT` content kept (one record's worth).
const MAX_VALUES: usize = MAX_CONTENT;

/// Decodes the response to one request (or, made by
/// [`ResponseParser::values`], the answer to `FCGI_GET_VALUES`). Fed what
/// each read returned; [`Progress::Done`] once `FCGI_END_REQUEST` (and its
/// padding) has been read. [`ResponseParser::reset`] prepares it for the
/// next request on a kept connection.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    limits: Limits,
    id: u16,
    values_only: bool,
    reader: RecordReader,
    /// The record in progress.
    current: Option<Header>,
    /// A fixed 8-byte body (END_REQUEST, UNKNOWN_TYPE) or GET_VALUES_RESULT's pairs.
    small: Vec<u8>,
    stdout_ended: bool,
    stderr_ended: bool,
    /// The CGI head so far, then the whole head once complete.
    head: Vec<u8>,
    head_done: bool,
    /// Whether any byte was fed since the last reset.
    started: bool,
    /// The CGI status: `Status:`, else 302 with `Location:`, else 200 (0
    /// until the head is read).
    pub status: u16,
    /// Body bytes so far (STDOUT after the head).
    pub body_len: u64,
    body: Vec<u8>,
    /// STDERR bytes so far.
    pub stderr_len: u64,
    stderr: Vec<u8>,
    /// Records read since the last reset.
    pub records: u64,
    /// `FCGI_END_REQUEST`, once read.
    pub end: Option<EndRequest>,
    /// The record type an `FCGI_UNKNOWN_TYPE` says the application did not know.
    pub unknown_type: Option<u8>,
    /// `FCGI_GET_VALUES_RESULT`'s pairs, once read.
    pub values: Vec<(String, String)>,
    got_values: bool,
}

impl ResponseParser {
    /// A parser for the response to request `id`.
    pub fn new(id: u16, limits: Limits) -> Self {
        ResponseParser {
            limits,
            id,
            values_only: false,
            reader: RecordReader::default(),
            current: None,
            small: Vec::new(),
            stdout_ended: false,
            stderr_ended: false,
            head: Vec::new(),
            head_done: false,
            started: false,
            status: 0,
            body_len: 0,
            body: Vec::new(),
            stderr_len: 0,
            stderr: Vec::new(),
            records: 0,
            end: None,
            unknown_type: None,
            values: Vec::new(),
            got_values: false,
        }
    }

    /// A parser for the answer to [`encode_get_values`]: done at
    /// `FCGI_GET_VALUES_RESULT` (or `FCGI_UNKNOWN_TYPE`).
    pub fn values(limits: Limits) -> Self {
        let mut p = ResponseParser::new(MANAGEMENT_ID, limits);
        p.values_only = true;
        p
    }

    /// Prepares for the response to request `id` on the same connection.
    pub fn reset(&mut self, id: u16) {
        let limits = self.limits;
        let values_only = self.values_only;
        let mut body = std::mem::take(&mut self.body);
        let mut head = std::mem::take(&mut self.head);
        crate::codec::clear_buffer(&mut body);
        crate::codec::clear_buffer(&mut head);
        *self = ResponseParser::new(id, limits);
        self.values_only = values_only;
        self.body = body;
        self.head = head;
    }

    /// Keeps the first `n` body bytes of the responses from now on (a
    /// flow that reads this response's body asks for it; others count only).
    pub fn set_keep_body(&mut self, n: usize) {
        self.limits.keep_body = n;
    }

    /// The body kept (the first [`Limits::keep_body`] bytes).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The STDERR output kept (the first [`Limits::keep_stderr`] bytes).
    pub fn stderr(&self) -> &[u8] {
        &self.stderr
    }

    /// The CGI head's fields (`Status` included), once the head is read.
    pub fn headers(&self) -> Vec<(String, Vec<u8>)> {
        if !self.head_done {
            return Vec::new();
        }
        parse_fields(&self.head, self.limits.fields, |r| match r {
            Ok(httparse::Status::Complete((_, fields))) => fields
                .iter()
                .map(|h| (h.name.to_string(), h.value.to_vec()))
                .collect(),
            _ => Vec::new(),
        })
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<Vec<u8>> {
        self.headers()
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// True before any byte of the response was fed.
    pub fn is_fresh(&self) -> bool {
        !self.started
    }

    /// Feeds the next bytes read from the connection.
    pub fn feed(&mut self, input: &[u8]) -> Result<Progress, Error> {
        if self.end.is_some() || (self.values_only && self.finished_values()) {
            return Ok(Progress::Done { consumed: 0 });
        }
        self.started |= !input.is_empty();
        let mut pos = 0;
        loop {
            let (n, item) = self.reader.next(&input[pos..])?;
            pos += n;
            match item {
                None => return Ok(Progress::NeedMore),
                Some(Item::Header(h)) => self.header_item(h)?,
                Some(Item::Content(c)) => self.content(c)?,
                Some(Item::End) => {
                    if self.record_end()? {
                        return Ok(Progress::Done { consumed: pos });
                    }
                }
            }
        }
    }

    fn finished_values(&self) -> bool {
        self.unknown_type.is_some() || self.got_values
    }

    /// The connection reached end of file before [`Progress::Done`].
    pub fn eof(&self) -> Result<(), EofError> {
        if self.end.is_some() || (self.values_only && self.finished_values()) {
            Ok(())
        } else if !self.started {
            Err(EofError::BeforeResponse)
        } else {
            Err(EofError::Incomplete)
        }
    }

    fn header_item(&mut self, h: Header) -> Result<(), Error> {
        self.records += 1;
        let kind = RecordType::from_u8(h.kind);
        let unexpected = Error::UnexpectedType {
            kind: h.kind,
            request_id: h.request_id,
        };
        if h.request_id == MANAGEMENT_ID {
            match kind {
                Some(RecordType::UnknownType) if h.content_length != 8 => {
                    return Err(Error::BodyLength {
                        kind: h.kind,
                        len: h.content_length,
                    })
                }
                Some(RecordType::UnknownType | RecordType::GetValuesResult) => {}
                _ => return Err(unexpected),
            }
        } else if self.values_only || h.request_id != self.id {
            return Err(Error::OtherRequest(h.request_id));
        } else {
            match kind {
                Some(RecordType::Stdout) if self.stdout_ended && h.content_length > 0 => {
                    return Err(Error::AfterStreamEnd(h.kind))
                }
                Some(RecordType::Stderr) if self.stderr_ended && h.content_length > 0 => {
                    return Err(Error::AfterStreamEnd(h.kind))
                }
                Some(RecordType::Stdout | RecordType::Stderr) => {}
                Some(RecordType::EndRequest) if h.content_length != 8 => {
                    return Err(Error::BodyLength {
                        kind: h.kind,
                        len: h.content_length,
                    })
                }
                Some(RecordType::EndRequest) => {}
                _ => return Err(unexpected),
            }
        }
        self.small.clear();
        self.current = Some(h);
        Ok(())
    }

    fn content(&mut self, c: &[u8]) -> Result<(), Error> {
        let Some(h) = self.current else {
            return Ok(());
        };
        match RecordType::from_u8(h.kind) {
            Some(RecordType::Stdout) => self.stdout(c),
            Some(RecordType::Stderr) => {
                self.stderr_len += c.len() as u64;
                let room = self.limits.keep_stderr.saturating_sub(self.stderr.len());
                self.stderr.extend_from_slice(&c[..room.min(c.len())]);
                Ok(())
            }
            _ => {
                // END_REQUEST and UNKNOWN_TYPE are 8 bytes (checked at the
                // header); GET_VALUES_RESULT one record at most.
                let room = MAX_VALUES.saturating_sub(self.small.len());
                self.small.extend_from_slice(&c[..room.min(c.len())]);
                Ok(())
            }
        }
    }

    fn stdout(&mut self, c: &[u8]) -> Result<(), Error> {
        let body = if self.head_done {
            c
        } else {
            let before = self.head.len();
            let room = self.limits.head_bytes.saturating_sub(before);
            let take = room.min(c.len());
            self.head.extend_from_slice(&c[..take]);
            // The head can only end at a blank line: parse when one may
            // have come (a head dribbled a line per record costs one
            // parse, not one per record).
            let fresh = &self.head[before.saturating_sub(2)..];
            let blank = fresh.windows(2).any(|w| w == b"\n\n")
                || fresh.windows(3).any(|w| w == b"\n\r\n")
                || self.head.starts_with(b"\n")
                || self.head.starts_with(b"\r\n");
            match if blank { self.parse_head()? } else { None } {
                Some(len) => {
                    let rest = self.head.len() - len;
                    self.head.truncate(len);
                    self.head_done = true;
                    &c[take - rest.min(take)..]
                }
                None if self.head.len() >= self.limits.head_bytes => {
                    return Err(Error::HeadTooLarge)
                }
                None => return Ok(()),
            }
        };
        // Refused before it is counted: the same count however it was split.
        if self.body_len.saturating_add(body.len() as u64) > self.limits.max_body {
            return Err(Error::BodyTooLarge);
        }
        self.body_len += body.len() as u64;
        let room = self.limits.keep_body.saturating_sub(self.body.len());
        self.body.extend_from_slice(&body[..room.min(body.len())]);
        Ok(())
    }

    /// Parses the buffered CGI head; its length once complete.
    fn parse_head(&mut self) -> Result<Option<usize>, Error> {
        let parsed = parse_fields(&self.head, self.limits.fields, |r| {
            let (len, fields) = match r {
                Ok(httparse::Status::Complete(done)) => done,
                Ok(httparse::Status::Partial) => return Ok(None),
                Err(httparse::Error::TooManyHeaders) => return Err(Error::TooManyFields),
                Err(_) => return Err(Error::HeaderLine),
            };
            let mut status = None;
            let mut location = false;
            for f in fields {
                if f.name.eq_ignore_ascii_case("status") {
                    status = Some(parse_status(f.value).ok_or(Error::Status)?);
                } else if f.name.eq_ignore_ascii_case("location") {
                    location = true;
                }
            }
            // RFC 3875 §6.3: no Status means 200, or a redirect when the
            // script sent only a Location.
            Ok(Some((
                len,
                status.unwrap_or(if location { 302 } else { 200 }),
            )))
        })?;
        Ok(parsed.map(|(len, status)| {
            self.status = status;
            len
        }))
    }

    /// A record ended; true when the response is complete.
    fn record_end(&mut self) -> Result<bool, Error> {
        let Some(h) = self.current.take() else {
            return Ok(false);
        };
        match RecordType::from_u8(h.kind) {
            Some(RecordType::Stdout) if h.content_length == 0 => self.stdout_ended = true,
            Some(RecordType::Stderr) if h.content_length == 0 => self.stderr_ended = true,
            Some(RecordType::EndRequest) => {
                let b = &self.small;
                let end = EndRequest {
                    app_status: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                    protocol_status: ProtocolStatus::from_u8(b[4]),
                };
                self.end = Some(end);
                if end.protocol_status == ProtocolStatus::RequestComplete && !self.head_done {
                    return Err(Error::NoHead);
                }
                return Ok(true);
            }
            Some(RecordType::UnknownType) => {
                self.unknown_type = Some(self.small[0]);
                return Ok(self.values_only);
            }
            Some(RecordType::GetValuesResult) => {
                let pairs = decode_pairs(&self.small).ok_or(Error::Pairs)?;
                self.values = pairs
                    .into_iter()
                    .map(|(n, v)| {
                        (
                            String::from_utf8_lossy(n).into_owned(),
                            String::from_utf8_lossy(v).into_owned(),
                        )
                    })
                    .collect();
                self.got_values = true;
                return Ok(self.values_only);
            }
            _ => {}
        }
        Ok(false)
    }
}

/// Fields of a CGI head parsed without allocating; a head with more is
/// parsed again against the limit (as the HTTP/1.1 codec does), so a
/// response does not cost a 4096-field array.
const FAST_FIELDS: usize = 32;

/// Parses the CGI head `head` with at most `limit` fields and hands the
/// result to `f`.
fn parse_fields<R>(
    head: &[u8],
    limit: usize,
    f: impl FnOnce(httparse::Result<(usize, &[httparse::Header<'_>])>) -> R,
) -> R {
    let limit = limit.max(1);
    let mut fast = [httparse::EMPTY_HEADER; FAST_FIELDS];
    let r = httparse::parse_headers(head, &mut fast[..limit.min(FAST_FIELDS)]);
    if limit <= FAST_FIELDS || !matches!(r, Err(httparse::Error::TooManyHeaders)) {
        return f(r);
    }
    let mut many = vec![httparse::EMPTY_HEADER; limit];
    f(httparse::parse_headers(head, &mut many))
}

/// `Status:`'s value: three digits from 100, then optionally a reason.
fn parse_status(v: &[u8]) -> Option<u16> {
    let v = v.trim_ascii();
    let digits = v.get(..3)?;
    if !digits.iter().all(u8::is_ascii_digit) || v.get(3).is_some_and(|&b| b != b' ') {
        return None;
    }
    let n = digits
        .iter()
        .fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
    (n >= 100).then_some(n)
}

/// Name-value pairs (§3.4) in `b`; `None` when one is cut short.
pub fn decode_pairs(mut b: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    fn len(b: &mut &[u8]) -> Option<usize> {
        let first = *b.first()?;
        if first < 0x80 {
            *b = &b[1..];
            return Some(first as usize);
        }
        let four = b.get(..4)?;
        let n = u32::from_be_bytes([four[0] & 0x7F, four[1], four[2], four[3]]);
        *b = &b[4..];
        Some(n as usize)
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let n = len(&mut b)?;
        let v = len(&mut b)?;
        let end = n.checked_add(v).filter(|&e| e <= b.len())?;
        out.push((&b[..n], &b[n..end]));
        b = &b[end..];
    }
    Some(out)
}

pub mod cgi;

#[cfg(test)]
mod tests;
