//! How an access log's lines are read: nginx's and Apache's `combined` and
//! `common`, nginx JSON lines (`escape=json`), and an nginx `log_format`
//! string. Each line becomes a [`Line`]: a request (method, target,
//! status, time), a line that holds no request (a `400` with no request
//! line, a TLS handshake on a plain port), or a line that does not match
//! the format, with what was expected where.

use crate::text::parse_time_ms;
use crate::Error;

/// How the lines are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormat {
    kind: Kind,
    /// As the user named it: `combined`, `nginx-json`, `custom`.
    name: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// Literal text and variables, matched left to right. `prefix`: the
    /// line may go on after the last part (`combined` with nginx's `main`
    /// extras, or Apache's `%v` suffix).
    Template { parts: Vec<Part>, prefix: bool },
    /// One JSON object a line.
    Json,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Lit(Vec<u8>),
    Var(Var),
}

/// The variables yace reads; any other `$name` matches and is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Var {
    Request,
    Method,
    RequestUri,
    Uri,
    Args,
    Status,
    TimeLocal,
    TimeIso,
    Msec,
    RequestTime,
    Other(String),
}

impl Var {
    fn from_name(name: &str) -> Var {
        match name {
            "request" => Var::Request,
            "request_method" => Var::Method,
            "request_uri" => Var::RequestUri,
            "uri" | "document_uri" => Var::Uri,
            "args" | "query_string" => Var::Args,
            "status" => Var::Status,
            "time_local" => Var::TimeLocal,
            "time_iso8601" => Var::TimeIso,
            "msec" => Var::Msec,
            "request_time" => Var::RequestTime,
            other => Var::Other(other.to_owned()),
        }
    }

    fn name(&self) -> &str {
        match self {
            Var::Request => "request",
            Var::Method => "request_method",
            Var::RequestUri => "request_uri",
            Var::Uri => "uri",
            Var::Args => "args",
            Var::Status => "status",
            Var::TimeLocal => "time_local",
            Var::TimeIso => "time_iso8601",
            Var::Msec => "msec",
            Var::RequestTime => "request_time",
            Var::Other(n) => n,
        }
    }
}

/// nginx's predefined `combined`, which Apache's `combined` matches too
/// (`%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"`): the second
/// field is Apache's `%l` (identd, `-`), the one nginx writes as `-`.
const COMBINED: &str = "$remote_addr $ident $remote_user [$time_local] \"$request\" $status \
                        $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";
/// Apache's Common Log Format (`%h %l %u %t "%r" %>s %b`).
const COMMON: &str = "$remote_addr $ident $remote_user [$time_local] \"$request\" $status \
                      $body_bytes_sent";

/// A request as a log line tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub method: String,
    /// The request target's bytes, unescaped, as the client sent them
    /// (origin or absolute form; checked later).
    pub target: Vec<u8>,
    pub status: Option<u16>,
    /// When the line was written (or the request came, for Apache's
    /// `%t`), ms since the Unix epoch.
    pub time_ms: i64,
    /// The time had milliseconds (`$msec`, a fraction in ISO 8601).
    pub fine: bool,
    /// `$request_time`, ms: how long the request took (nginx writes the
    /// line at its end).
    pub request_time_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Request(Record),
    /// A well-formed line without a request to replay (`"-"`, `""`, bytes
    /// that are no request line).
    NoRequest,
    /// Not in the format: why.
    Bad(String),
}

impl LogFormat {
    /// `combined`, `common`, `nginx-json` (or `json`), or an nginx
    /// `log_format` string (with or without its quotes from nginx.conf,
    /// and `escape=…` before it).
    pub fn parse(spec: &str) -> Result<LogFormat, Error> {
        let t = spec.trim();
        match t.to_ascii_lowercase().as_str() {
            "combined" => {
                return Ok(LogFormat {
                    kind: Kind::Template {
                        parts: parts(COMBINED)?,
                        prefix: true,
                    },
                    name: "combined",
                })
            }
            "common" | "clf" => {
                return Ok(LogFormat {
                    kind: Kind::Template {
                        parts: parts(COMMON)?,
                        prefix: true,
                    },
                    name: "common",
                })
            }
            "nginx-json" | "json" => {
                return Ok(LogFormat {
                    kind: Kind::Json,
                    name: "nginx-json",
                })
            }
            _ => {}
        }
        if !t.contains('$') {
            return Err(Error::new(format!(
                "--format '{t}': not a format yace knows, nor an nginx log_format (it has no \
                 $variable); use combined, common, nginx-json, or the log_format string, \
                 e.g. --format '$remote_addr [$time_local] \"$request\" $status'"
            )));
        }
        let text = unquote_conf(t);
        let parts = parts(&text)?;
        let has = |v: Var| parts.iter().any(|p| *p == Part::Var(v.clone()));
        if !has(Var::Request) && !(has(Var::Method) && (has(Var::RequestUri) || has(Var::Uri))) {
            return Err(Error::new(
                "--format: the log_format names no request: it needs $request, or \
                 $request_method with $request_uri (or $uri and $args)",
            ));
        }
        if !has(Var::TimeLocal) && !has(Var::TimeIso) && !has(Var::Msec) {
            return Err(Error::new(
                "--format: the log_format has no time ($time_local, $time_iso8601 or $msec): \
                 the rate and the arrivals come from it",
            ));
        }
        Ok(LogFormat {
            kind: Kind::Template {
                parts,
                prefix: false,
            },
            name: "custom",
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Reads one line (without its end of line).
    pub(crate) fn line(&self, line: &[u8]) -> Line {
        match &self.kind {
            Kind::Template { parts, prefix } => match_template(parts, *prefix, line),
            Kind::Json => json_line(line),
        }
    }
}

/// `escape=json '{"a":"$x",' '"b":"$y"}'` as pasted from nginx.conf → the
/// format's text: the quoted pieces joined, `escape=` dropped.
fn unquote_conf(spec: &str) -> String {
    let mut s = spec.trim();
    if let Some(rest) = s.strip_prefix("escape=") {
        s = rest.split_once(char::is_whitespace).map_or("", |(_, r)| r);
        s = s.trim();
    }
    let s = s.trim_end_matches(';').trim_end();
    if !s.starts_with(['\'', '"']) {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(q) = chars.next() {
        if q.is_whitespace() {
            continue;
        }
        if q != '\'' && q != '"' {
            // Not a sequence of quoted pieces after all: take it as written.
            return s.to_owned();
        }
        loop {
            match chars.next() {
                None => return s.to_owned(),
                Some('\\') => match chars.next() {
                    Some(c) if c == q || c == '\\' => out.push(c),
                    Some(c) => {
                        out.push('\\');
                        out.push(c);
                    }
                    None => return s.to_owned(),
                },
                Some(c) if c == q => break,
                Some(c) => out.push(c),
            }
        }
    }
    out
}

/// Splits a log_format string into literals and variables.
fn parts(text: &str) -> Result<Vec<Part>, Error> {
    let b = text.as_bytes();
    let mut parts: Vec<Part> = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let (name, end) = if b.get(i + 1) == Some(&b'{') {
                match text[i + 2..].find('}') {
                    Some(close) => (&text[i + 2..i + 2 + close], i + 3 + close),
                    None => {
                        return Err(Error::new(format!(
                            "--format: '${{' at column {} is never closed",
                            i + 1
                        )))
                    }
                }
            } else {
                let n = b[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                (&text[i + 1..i + 1 + n], i + 1 + n)
            };
            if name.is_empty() {
                lit.push(b'$');
                i += 1;
                continue;
            }
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            if let Some(Part::Var(prev)) = parts.last() {
                return Err(Error::new(format!(
                    "--format: ${} and ${name} (column {}) have nothing between them: a line \
                     cannot be split there",
                    prev.name(),
                    i + 1
                )));
            }
            parts.push(Part::Var(Var::from_name(name)));
            i = end;
        } else {
            lit.push(b[i]);
            i += 1;
        }
    }
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Ok(parts)
}

/// The first `lit` in `line` from `from`, stepping over backslash escapes
/// (`\"` from Apache, `\x22` from nginx, JSON's `\"`), so that a quote
/// inside a quoted value does not end it.
fn find_lit(line: &[u8], from: usize, lit: &[u8]) -> Option<usize> {
    let first = lit[0];
    let mut i = from;
    while i + lit.len() <= line.len() {
        let c = line[i];
        if c == b'\\' && first != b'\\' {
            i += 2;
            continue;
        }
        if c == first && line[i..].starts_with(lit) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `$time_local`'s fixed width: `10/Oct/2000:13:55:36 -0700`.
const TIME_LOCAL_LEN: usize = 26;

fn match_template(parts: &[Part], prefix: bool, line: &[u8]) -> Line {
    let mut pos = 0;
    let mut values: Vec<(&Var, &[u8])> = Vec::with_capacity(parts.len());
    for (k, part) in parts.iter().enumerate() {
        match part {
            Part::Lit(l) => {
                if !line[pos..].starts_with(l) {
                    return Line::Bad(format!("expected {} at column {}", show_lit(l), pos + 1));
                }
                pos += l.len();
            }
            Part::Var(v) => {
                let end = match parts.get(k + 1) {
                    Some(Part::Lit(next)) => {
                        // $time_local holds a space: its width decides.
                        let fixed = (*v == Var::TimeLocal)
                            .then_some(pos + TIME_LOCAL_LEN)
                            .filter(|&e| line.get(e..).is_some_and(|r| r.starts_with(next)));
                        match fixed.or_else(|| find_lit(line, pos, next)) {
                            Some(e) => e,
                            None => {
                                return Line::Bad(format!(
                                    "${} from column {} has no {} after it",
                                    v.name(),
                                    pos + 1,
                                    show_lit(next)
                                ))
                            }
                        }
                    }
                    _ => {
                        let mut e = line.len();
                        while e > pos && line[e - 1].is_ascii_whitespace() {
                            e -= 1;
                        }
                        e
                    }
                };
                values.push((v, &line[pos..end]));
                pos = end;
            }
        }
    }
    if !prefix && line[pos..].iter().any(|c| !c.is_ascii_whitespace()) {
        return Line::Bad(format!(
            "text after the format's end, at column {}",
            pos + 1
        ));
    }
    let mut f = Fields::default();
    for (v, raw) in values {
        let value = unescape(raw);
        match v {
            Var::Request => f.request = Some(value),
            Var::Method => f.method = Some(value),
            Var::RequestUri => f.request_uri = Some(value),
            Var::Uri => f.uri = Some(value),
            Var::Args => f.args = Some(value),
            Var::Status => f.status = Some(value),
            Var::TimeLocal => f.time_local = Some(value),
            Var::TimeIso => f.time_iso = Some(value),
            Var::Msec => f.msec = Some(value),
            Var::RequestTime => f.request_time = Some(value),
            Var::Other(_) => {}
        }
    }
    f.record()
}

fn show_lit(l: &[u8]) -> String {
    let s = String::from_utf8_lossy(l);
    if s.trim().is_empty() {
        format!("'{s}' (white space)")
    } else {
        format!("'{s}'")
    }
}

/// A line's values, unescaped, before they are checked.
#[derive(Debug, Default)]
struct Fields {
    request: Option<Vec<u8>>,
    method: Option<Vec<u8>>,
    request_uri: Option<Vec<u8>>,
    uri: Option<Vec<u8>>,
    args: Option<Vec<u8>>,
    status: Option<Vec<u8>>,
    time_local: Option<Vec<u8>>,
    time_iso: Option<Vec<u8>>,
    msec: Option<Vec<u8>>,
    /// A JSON time of unknown spelling: epoch seconds, ISO 8601 or
    /// `$time_local`.
    time_any: Option<Vec<u8>>,
    request_time: Option<Vec<u8>>,
}

fn dash(v: &Option<Vec<u8>>) -> Option<&[u8]> {
    v.as_deref().filter(|v| !v.is_empty() && *v != b"-")
}

impl Fields {
    fn record(self) -> Line {
        let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
        // The time first: a line without one is not in the format.
        let (time_ms, fine) = if let Some(v) = dash(&self.msec) {
            match parse_epoch(v) {
                Some(t) => (t, true),
                None => return Line::Bad(format!("$msec '{}' is not a time", text(v))),
            }
        } else if let Some(v) = dash(&self.time_iso) {
            match parse_time_ms(&text(v)) {
                Some(t) => (t as i64, v.contains(&b'.')),
                None => return Line::Bad(format!("$time_iso8601 '{}' is not a time", text(v))),
            }
        } else if let Some(v) = dash(&self.time_local) {
            match parse_time_local(v) {
                Some(t) => (t, false),
                None => return Line::Bad(format!("$time_local '{}' is not a time", text(v))),
            }
        } else if let Some(v) = dash(&self.time_any) {
            match parse_epoch(v)
                .map(|t| (t, true))
                .or_else(|| parse_time_ms(&text(v)).map(|t| (t as i64, v.contains(&b'.'))))
                .or_else(|| parse_time_local(v).map(|t| (t, false)))
            {
                Some(t) => t,
                None => return Line::Bad(format!("the time '{}' is not a time", text(v))),
            }
        } else {
            return Line::Bad("no time".to_owned());
        };
        let status = match dash(&self.status) {
            None => None,
            Some(v) => match std::str::from_utf8(v)
                .ok()
                .and_then(|s| s.parse::<u16>().ok())
            {
                Some(s) if (100..1000).contains(&s) => Some(s),
                _ => return Line::Bad(format!("status '{}' is not a status code", text(v))),
            },
        };
        let request_time_ms = dash(&self.request_time).and_then(|v| {
            let secs: f64 = std::str::from_utf8(v).ok()?.trim().parse().ok()?;
            (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as i64)
        });
        let (method, target) = if let Some(r) = &self.request {
            match split_request(r) {
                Some(mt) => mt,
                None => return Line::NoRequest,
            }
        } else {
            let Some(m) = dash(&self.method) else {
                return Line::NoRequest;
            };
            if !is_method(m) {
                return Line::NoRequest;
            }
            let target = if let Some(t) = dash(&self.request_uri) {
                t.to_vec()
            } else if let Some(u) = dash(&self.uri) {
                let mut t = u.to_vec();
                if let Some(a) = dash(&self.args) {
                    t.push(b'?');
                    t.extend_from_slice(a);
                }
                t
            } else {
                return Line::NoRequest;
            };
            (text(m), target)
        };
        Line::Request(Record {
            method,
            target,
            status,
            time_ms,
            fine,
            request_time_ms,
        })
    }
}

/// `GET /path?q HTTP/1.1` → (method, target); `None` for `-`, an empty
/// request, or bytes that are no request line.
fn split_request(r: &[u8]) -> Option<(String, Vec<u8>)> {
    let mut words = r.split(|c| *c == b' ').filter(|w| !w.is_empty());
    let method = words.next()?;
    let target = words.next()?;
    if !is_method(method) {
        return None;
    }
    if let Some(proto) = words.next() {
        if !proto.starts_with(b"HTTP/") {
            return None;
        }
    }
    Some((
        String::from_utf8_lossy(method).into_owned(),
        target.to_vec(),
    ))
}

/// An HTTP method: a token of at most 20 characters.
fn is_method(m: &[u8]) -> bool {
    !m.is_empty()
        && m.len() <= 20
        && m.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(c))
}

/// Backslash escapes as nginx (`\xHH`, and JSON's with `escape=json`) and
/// Apache (`\"`, `\\`, `\xhh`) write them.
fn unescape(v: &[u8]) -> Vec<u8> {
    if !v.contains(&b'\\') {
        return v.to_vec();
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        if v[i] != b'\\' || i + 1 == v.len() {
            out.push(v[i]);
            i += 1;
            continue;
        }
        let c = v[i + 1];
        match c {
            b'x' | b'X' => match (
                v.get(i + 2).and_then(|&c| hex(c)),
                v.get(i + 3).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 4;
                    continue;
                }
                _ => out.extend_from_slice(&v[i..i + 2]),
            },
            b'u' => {
                let code = v
                    .get(i + 2..i + 6)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u32::from_str_radix(h, 16).ok());
                match code {
                    Some(c) => {
                        let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
                        let mut buf = [0; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        i += 6;
                        continue;
                    }
                    None => out.extend_from_slice(&v[i..i + 2]),
                }
            }
            b'"' | b'\\' | b'/' | b'\'' => out.push(c),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            _ => out.extend_from_slice(&v[i..i + 2]),
        }
        i += 2;
    }
    out
}

/// `1715679000.123` (seconds, `$msec`) → ms; a whole number above 10^11
/// is taken as milliseconds already (a JSON `timestamp` in ms).
fn parse_epoch(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?.trim();
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
        return None;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let whole: i64 = whole.parse().ok()?;
    if frac.is_empty() && whole > 100_000_000_000 {
        return Some(whole);
    }
    let mut ms = 0i64;
    for (k, d) in frac.bytes().take(3).enumerate() {
        ms += i64::from(d - b'0') * [100, 10, 1][k];
    }
    whole.checked_mul(1000)?.checked_add(ms)
}

/// `10/Oct/2000:13:55:36 -0700` → ms since the epoch.
fn parse_time_local(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(v).ok()?.trim();
    let b = s.as_bytes();
    if b.len() != TIME_LOCAL_LEN || b[2] != b'/' || b[6] != b'/' || b[11] != b':' || b[20] != b' ' {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == &s[3..6])? + 1;
    let iso = format!(
        "{}-{month:02}-{}T{}{}:{}",
        &s[7..11],
        &s[0..2],
        &s[12..20],
        &s[21..24],
        &s[24..26]
    );
    parse_time_ms(&iso).map(|t| t as i64)
}

/// One line of nginx JSON (`escape=json`), read by the keys the module's
/// documentation lists.
fn json_line(line: &[u8]) -> Line {
    let text = String::from_utf8_lossy(line);
    let v: serde_json::Value = match serde_json::from_str(text.trim()) {
        Ok(v) => v,
        Err(e) => return Line::Bad(format!("not JSON: {e}")),
    };
    let Some(obj) = v.as_object() else {
        return Line::Bad("not a JSON object".to_owned());
    };
    let get = |keys: &[&str]| -> Option<Vec<u8>> {
        keys.iter().find_map(|k| match obj.get(*k)? {
            serde_json::Value::String(s) => Some(s.as_bytes().to_vec()),
            serde_json::Value::Number(n) => Some(n.to_string().into_bytes()),
            _ => None,
        })
    };
    Fields {
        request: get(&["request"]),
        method: get(&["request_method", "method"]),
        request_uri: get(&["request_uri"]),
        uri: get(&["uri", "path"]),
        args: get(&["args", "query_string"]),
        status: get(&["status"]),
        time_local: None,
        time_iso: None,
        msec: get(&["msec"]),
        time_any: get(&[
            "time_iso8601",
            "time_local",
            "@timestamp",
            "timestamp",
            "time",
        ]),
        request_time: get(&["request_time"]),
    }
    .record()
}
