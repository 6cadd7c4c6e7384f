//! A curl command (a browser's "Copy as cURL", or one written by hand)
//! read into the request it sends, then written as `yace run` flags or as
//! a scenario step. Every flag is accounted for: imported, said to change
//! only curl's own output, or named in a warning as not imported.

use crate::shell::{self, Word};
use crate::text::{base64_encode, duration_text, form_encode, shell_quote};
use crate::write::{Body as StepBody, Step};
use crate::{Error, Format, Output};

/// What the command sends, and the run options it implies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// `-k`: do not verify the certificate.
    pub insecure: bool,
    pub http2: bool,
    /// `--max-time`, in milliseconds.
    pub timeout_ms: Option<u64>,
    pub connect_timeout_ms: Option<u64>,
    pub cacert: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Body {
    #[default]
    None,
    Text(String),
    /// `@file`: the body is the file's bytes.
    File(String),
}

/// Where a curl value came from, for messages.
fn place(w: &Word) -> String {
    if w.line == 0 {
        format!("argument {}", w.column)
    } else {
        format!("line {}, column {}", w.line, w.column)
    }
}

fn err_at(w: &Word, message: String) -> Error {
    if w.line == 0 {
        Error::new(format!("argument {}: {message}", w.column))
    } else {
        Error::at(message, w.line, w.column)
    }
}

/// curl's options that take a value (long name, short letter). Knowing
/// them keeps the reading of the rest right even for options not imported.
const WITH_VALUE: &[(&str, Option<char>)] = &[
    ("abstract-unix-socket", None),
    ("alt-svc", None),
    ("aws-sigv4", None),
    ("cacert", None),
    ("capath", None),
    ("cert", Some('E')),
    ("cert-type", None),
    ("ciphers", None),
    ("config", Some('K')),
    ("connect-timeout", None),
    ("connect-to", None),
    ("continue-at", Some('C')),
    ("cookie", Some('b')),
    ("cookie-jar", Some('c')),
    ("create-file-mode", None),
    ("crlfile", None),
    ("curves", None),
    ("data", Some('d')),
    ("data-ascii", None),
    ("data-binary", None),
    ("data-raw", None),
    ("data-urlencode", None),
    ("delegation", None),
    ("dns-interface", None),
    ("dns-ipv4-addr", None),
    ("dns-ipv6-addr", None),
    ("dns-servers", None),
    ("doh-url", None),
    ("dump-header", Some('D')),
    ("ech", None),
    ("engine", None),
    ("etag-compare", None),
    ("etag-save", None),
    ("expect100-timeout", None),
    ("form", Some('F')),
    ("form-string", None),
    ("ftp-account", None),
    ("ftp-method", None),
    ("ftp-port", Some('P')),
    ("happy-eyeballs-timeout-ms", None),
    ("haproxy-clientip", None),
    ("header", Some('H')),
    ("hsts", None),
    ("interface", None),
    ("ip-tos", None),
    ("json", None),
    ("keepalive-cnt", None),
    ("keepalive-time", None),
    ("key", None),
    ("key-type", None),
    ("krb", None),
    ("libcurl", None),
    ("limit-rate", None),
    ("local-port", None),
    ("login-options", None),
    ("mail-auth", None),
    ("mail-from", None),
    ("mail-rcpt", None),
    ("max-filesize", None),
    ("max-redirs", None),
    ("max-time", Some('m')),
    ("netrc-file", None),
    ("noproxy", None),
    ("oauth2-bearer", None),
    ("output", Some('o')),
    ("output-dir", None),
    ("parallel-max", None),
    ("pass", None),
    ("pinnedpubkey", None),
    ("preproxy", None),
    ("proto", None),
    ("proto-default", None),
    ("proto-redir", None),
    ("proxy", Some('x')),
    ("proxy-cacert", None),
    ("proxy-cert", None),
    ("proxy-header", None),
    ("proxy-key", None),
    ("proxy-user", Some('U')),
    ("pubkey", None),
    ("quote", Some('Q')),
    ("range", Some('r')),
    ("rate", None),
    ("referer", Some('e')),
    ("request", Some('X')),
    ("request-target", None),
    ("resolve", None),
    ("retry", None),
    ("retry-delay", None),
    ("retry-max-time", None),
    ("sasl-authzid", None),
    ("service-name", None),
    ("socks4", None),
    ("socks4a", None),
    ("socks5", None),
    ("socks5-hostname", None),
    ("speed-limit", Some('Y')),
    ("speed-time", Some('y')),
    ("stderr", None),
    ("telnet-option", Some('t')),
    ("time-cond", Some('z')),
    ("tls-max", None),
    ("tls13-ciphers", None),
    ("trace", None),
    ("trace-ascii", None),
    ("trace-config", None),
    ("unix-socket", None),
    ("upload-file", Some('T')),
    ("url", None),
    ("url-query", None),
    ("user", Some('u')),
    ("user-agent", Some('A')),
    ("variable", None),
    ("write-out", Some('w')),
];

/// Switches (no value), long name and short letter.
const SWITCHES: &[(&str, Option<char>)] = &[
    ("anyauth", None),
    ("append", Some('a')),
    ("basic", None),
    ("compressed", None),
    ("create-dirs", None),
    ("digest", None),
    ("disable", Some('q')),
    ("fail", Some('f')),
    ("fail-early", None),
    ("fail-with-body", None),
    ("get", Some('G')),
    ("globoff", Some('g')),
    ("head", Some('I')),
    ("help", Some('h')),
    ("http0.9", None),
    ("http1.0", Some('0')),
    ("http1.1", None),
    ("http2", None),
    ("http2-prior-knowledge", None),
    ("http3", None),
    ("http3-only", None),
    ("include", Some('i')),
    ("insecure", Some('k')),
    ("ipv4", Some('4')),
    ("ipv6", Some('6')),
    ("junk-session-cookies", Some('j')),
    ("list-only", Some('l')),
    ("location", Some('L')),
    ("location-trusted", None),
    ("manual", Some('M')),
    ("negotiate", None),
    ("netrc", Some('n')),
    ("netrc-optional", None),
    ("next", Some(':')),
    ("no-buffer", Some('N')),
    ("no-keepalive", None),
    ("no-progress-meter", None),
    ("no-sessionid", None),
    ("ntlm", None),
    ("parallel", Some('Z')),
    ("path-as-is", None),
    ("post301", None),
    ("post302", None),
    ("post303", None),
    ("progress-bar", Some('#')),
    ("proxy-insecure", None),
    ("proxytunnel", Some('p')),
    ("raw", None),
    ("remote-header-name", Some('J')),
    ("remote-name", Some('O')),
    ("remote-name-all", None),
    ("remote-time", Some('R')),
    ("retry-all-errors", None),
    ("retry-connrefused", None),
    ("show-error", Some('S')),
    ("silent", Some('s')),
    ("ssl", None),
    ("ssl-no-revoke", None),
    ("ssl-reqd", None),
    ("sslv2", Some('2')),
    ("sslv3", Some('3')),
    ("styled-output", None),
    ("tcp-fastopen", None),
    ("tcp-nodelay", None),
    ("tlsv1", Some('1')),
    ("tlsv1.0", None),
    ("tlsv1.1", None),
    ("tlsv1.2", None),
    ("tlsv1.3", None),
    ("tr-encoding", None),
    ("trace-time", None),
    ("verbose", Some('v')),
    ("version", Some('V')),
    ("xattr", None),
];

/// Switches and options that change only what curl prints or saves, or
/// how curl's own transfer runs, not the request: nothing to import.
const CURL_ONLY: &[&str] = &[
    "silent",
    "show-error",
    "verbose",
    "include",
    "output",
    "output-dir",
    "remote-name",
    "remote-name-all",
    "remote-header-name",
    "remote-time",
    "write-out",
    "progress-bar",
    "no-progress-meter",
    "fail",
    "fail-early",
    "fail-with-body",
    "dump-header",
    "trace",
    "trace-ascii",
    "trace-time",
    "trace-config",
    "stderr",
    "create-dirs",
    "create-file-mode",
    "no-buffer",
    "libcurl",
    "disable",
    "styled-output",
    "globoff",
    "path-as-is",
    "tcp-nodelay",
    "no-keepalive",
    "keepalive-time",
    "keepalive-cnt",
    "junk-session-cookies",
    "http1.1",
    "basic",
    "raw",
    "xattr",
    "append",
    "list-only",
];

/// Why an option known to curl is not imported.
fn why_not(long: &str) -> &'static str {
    match long {
        "location" | "location-trusted" | "max-redirs" | "post301" | "post302" | "post303" => {
            "yace does not follow redirects: each response, a 3xx too, is counted as it is"
        }
        "proxy" | "preproxy" | "socks4" | "socks4a" | "socks5" | "socks5-hostname"
        | "proxy-user" | "proxy-header" | "proxytunnel" | "proxy-insecure" | "proxy-cacert"
        | "proxy-cert" | "proxy-key" | "noproxy" => {
            "yace connects to the target directly, never through a proxy"
        }
        "resolve" | "connect-to" => {
            "yace connects to the URL's host: put the address in the URL (and the name in \
             -H 'Host: …')"
        }
        "digest" | "ntlm" | "negotiate" | "anyauth" | "delegation" | "aws-sigv4" | "krb" => {
            "yace sends only Basic credentials (from -u) or the headers given"
        }
        "cookie-jar" => {
            "yace's virtual users keep their own cookie jars (yace run -u N, or a scenario)"
        }
        "retry" | "retry-delay" | "retry-max-time" | "retry-all-errors" | "retry-connrefused" => {
            "yace retries only a request lost to a stale keep-alive connection, and counts it"
        }
        "config" => "the options in a config file are not read",
        "next" => "only the first request of the command is imported",
        "http3" | "http3-only" | "http0.9" | "http1.0" => "yace speaks HTTP/1.1 and HTTP/2",
        "unix-socket" | "abstract-unix-socket" => "yace connects over TCP only",
        "limit-rate" | "rate" | "speed-limit" | "speed-time" | "parallel" | "parallel-max" => {
            "yace sets the load with its own flags (-c, --rate, -u)"
        }
        "upload-file" => "the file's bytes are the body",
        "time-cond" | "etag-compare" => "yace sends no conditional request on its own",
        "continue-at" => "yace sends no Range on its own",
        _ => "yace has no equivalent",
    }
}

/// What the flags collected, before the request is put together.
#[derive(Default)]
struct Flags {
    urls: Vec<Word>,
    method: Option<String>,
    head: bool,
    get: bool,
    headers: Vec<(String, String)>,
    removed: Vec<String>,
    data: Vec<Data>,
    json: bool,
    form: Vec<FormPart>,
    upload: Option<String>,
    user: Option<String>,
    no_user: bool,
    bearer: Option<String>,
    cookies: Vec<String>,
    agent: Option<String>,
    referer: Option<String>,
    range: Option<String>,
    compressed: bool,
    query: Vec<String>,
    globoff: bool,
    req: Request,
    curl_only: Vec<String>,
    warnings: Vec<String>,
    notes: Vec<String>,
}

enum Data {
    Text(String),
    /// A part read from a file (`-d @f`, `--data-binary @f`): the name,
    /// and whether curl strips its line ends.
    File(String, bool),
}

enum FormPart {
    Text {
        name: String,
        value: String,
        mime: Option<String>,
        filename: Option<String>,
    },
}

/// Reads a curl command line (as pasted: one string in bash syntax).
pub fn parse_text(text: &str) -> Result<(Request, Vec<String>, Vec<String>), Error> {
    let (words, warnings) = shell::split(text)?;
    let mut r = parse_words(&words)?;
    let mut all = warnings;
    all.append(&mut r.1);
    Ok((r.0, all, r.2))
}

/// Reads curl's arguments already split into words (from a command line
/// that the shell split), the first being `curl` or not.
pub fn parse_args(args: &[String]) -> Result<(Request, Vec<String>, Vec<String>), Error> {
    let words: Vec<Word> = args
        .iter()
        .enumerate()
        .map(|(i, a)| Word {
            text: a.clone(),
            line: 0,
            column: i + 1,
        })
        .collect();
    parse_words(&words)
}

fn parse_words(words: &[Word]) -> Result<(Request, Vec<String>, Vec<String>), Error> {
    let Some(first) = words.first() else {
        return Err(Error::new("the curl command is empty"));
    };
    let name = first.text.rsplit('/').next().unwrap_or("");
    let rest = if name == "curl" || name == "curl.exe" {
        &words[1..]
    } else if first.text.starts_with('-') || first.text.contains("://") {
        words
    } else {
        return Err(err_at(
            first,
            format!(
                "this is not a curl command: it starts with '{}'",
                first.text
            ),
        ));
    };
    let mut f = Flags::default();
    let mut i = 0;
    while i < rest.len() {
        let w = &rest[i];
        i += 1;
        let a = w.text.as_str();
        if let Some(long) = a.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) if takes_value(n) => (n, Some(v)),
                _ => (long, None),
            };
            let value = if takes_value(name) {
                match inline {
                    Some(v) => Some(Word {
                        text: v.to_owned(),
                        ..w.clone()
                    }),
                    None => {
                        let v = rest.get(i).cloned().ok_or_else(|| {
                            err_at(w, format!("curl flag --{name} needs a value after it"))
                        })?;
                        i += 1;
                        Some(v)
                    }
                }
            } else {
                None
            };
            f.apply(name, &format!("--{name}"), value.as_ref(), w)?;
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                let Some(long) = short(c) else {
                    f.warnings.push(format!(
                        "curl flag -{c} is not imported: unknown flag ({})",
                        place(w)
                    ));
                    continue;
                };
                let value = if takes_value(long) {
                    let attached: String = chars[j..].iter().collect();
                    j = chars.len();
                    if attached.is_empty() {
                        let v = rest.get(i).cloned().ok_or_else(|| {
                            err_at(w, format!("curl flag -{c} needs a value after it"))
                        })?;
                        i += 1;
                        Some(v)
                    } else {
                        Some(Word {
                            text: attached,
                            ..w.clone()
                        })
                    }
                } else {
                    None
                };
                f.apply(long, &format!("-{c}"), value.as_ref(), w)?;
            }
        } else {
            f.urls.push(w.clone());
        }
    }
    f.finish(words)
}

fn takes_value(long: &str) -> bool {
    WITH_VALUE.iter().any(|(l, _)| *l == long)
}

fn short(c: char) -> Option<&'static str> {
    WITH_VALUE
        .iter()
        .chain(SWITCHES)
        .find(|(_, s)| *s == Some(c))
        .map(|(l, _)| *l)
}

fn known(long: &str) -> bool {
    WITH_VALUE.iter().chain(SWITCHES).any(|(l, _)| *l == long)
}

/// A number of seconds (`5`, `2.5`) as milliseconds.
fn seconds(w: &Word, flag: &str) -> Result<u64, Error> {
    match w.text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok((s * 1000.0).round() as u64),
        _ => Err(err_at(
            w,
            format!("curl flag {flag}: '{}' is not a number of seconds", w.text),
        )),
    }
}

impl Flags {
    fn apply(
        &mut self,
        long: &str,
        shown: &str,
        value: Option<&Word>,
        at: &Word,
    ) -> Result<(), Error> {
        let v = || value.map(|w| w.text.clone()).unwrap_or_default();
        match long {
            "request" => self.method = Some(v()),
            "header" => self.header(&v(), shown),
            "user-agent" => self.agent = Some(v()),
            "referer" => {
                let r = v();
                let r = r.strip_suffix(";auto").unwrap_or(&r);
                if r.is_empty() {
                    self.notes.push(format!(
                        "curl flag {shown} ';auto' sets a Referer on redirects only: nothing to                          import"
                    ));
                } else {
                    self.referer = Some(r.to_owned());
                }
            }
            "url" => self.urls.push(value.cloned().unwrap_or_else(|| at.clone())),
            "data" | "data-ascii" => self.data_part(&v(), true),
            "data-binary" => self.data_part(&v(), false),
            "data-raw" => self.data.push(Data::Text(v())),
            "json" => {
                self.json = true;
                self.data_part(&v(), false);
            }
            "data-urlencode" => self.urlencode(&v(), shown, false),
            "url-query" => self.urlencode(&v(), shown, true),
            "form" => self.form_part(&v(), shown, false),
            "form-string" => self.form_part(&v(), shown, true),
            "get" => self.get = true,
            "head" => self.head = true,
            "upload-file" => {
                let file = v();
                if file == "-" || file == "." {
                    self.warnings.push(format!(
                        "curl flag {shown} {file} is not imported: it reads standard input"
                    ));
                } else {
                    self.upload = Some(file);
                }
            }
            "user" => self.user = Some(v()),
            "oauth2-bearer" => self.bearer = Some(v()),
            "digest" | "ntlm" | "negotiate" | "anyauth" => {
                self.no_user = true;
                self.warnings.push(format!(
                    "curl flag {shown} is not imported: {}",
                    why_not(long)
                ));
            }
            "cookie" => {
                let c = v();
                if c.contains('=') {
                    self.cookies.push(c);
                } else {
                    self.warnings.push(format!(
                        "curl flag {shown} {c} is not imported: it reads cookies from a file; \
                         give them as -b 'name=value'"
                    ));
                }
            }
            "compressed" => self.compressed = true,
            "insecure" => self.req.insecure = true,
            "http2" | "http2-prior-knowledge" => self.req.http2 = true,
            "max-time" => self.req.timeout_ms = Some(seconds(value.unwrap_or(at), shown)?),
            "connect-timeout" => {
                self.req.connect_timeout_ms = Some(seconds(value.unwrap_or(at), shown)?)
            }
            "cacert" => self.req.cacert = Some(v()),
            "cert" => {
                let c = v();
                if c.contains(':') && !c.starts_with('/') {
                    self.warnings.push(format!(
                        "curl flag {shown}: a certificate's password (after ':') is not imported"
                    ));
                }
                self.req.cert = Some(c.split(':').next().unwrap_or("").to_owned());
            }
            "key" => self.req.key = Some(v()),
            "range" => self.range = Some(v()),
            "globoff" => {
                self.globoff = true;
                self.curl_only.push(shown.to_owned());
            }
            l if CURL_ONLY.contains(&l) => self.curl_only.push(shown.to_owned()),
            l if known(l) => self
                .warnings
                .push(format!("curl flag {shown} is not imported: {}", why_not(l))),
            _ => self.warnings.push(format!(
                "curl flag {shown} is not imported: curl has no such flag, or yace does not \
                 know it ({})",
                place(at)
            )),
        }
        Ok(())
    }

    fn header(&mut self, h: &str, shown: &str) {
        if let Some(file) = h.strip_prefix('@') {
            self.warnings.push(format!(
                "curl flag {shown} @{file} is not imported: it reads headers from a file"
            ));
            return;
        }
        match h.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                let value = value.trim();
                if value.is_empty() {
                    // curl: `Name:` removes the header curl would send.
                    self.removed.push(name.trim().to_owned());
                } else {
                    self.headers
                        .push((name.trim().to_owned(), value.to_owned()));
                }
            }
            _ => match h.strip_suffix(';') {
                // curl: `Name;` sends the header with no value.
                Some(name) if !name.trim().is_empty() && !name.contains(':') => {
                    self.headers.push((name.trim().to_owned(), String::new()))
                }
                _ => self.warnings.push(format!(
                    "curl flag {shown} '{h}' is not imported: it is not 'Name: value'"
                )),
            },
        }
    }

    fn data_part(&mut self, d: &str, strips: bool) {
        match d.strip_prefix('@') {
            Some(file) => self.data.push(Data::File(file.to_owned(), strips)),
            None => self.data.push(Data::Text(d.to_owned())),
        }
    }

    /// `--data-urlencode` (into the body) and `--url-query` (into the URL):
    /// `content`, `=content`, `name=content`, `@file`, `name@file`, and
    /// for `--url-query` a leading `+` for content already encoded.
    fn urlencode(&mut self, d: &str, shown: &str, query: bool) {
        let text = if let Some(raw) = d.strip_prefix('+').filter(|_| query) {
            raw.to_owned()
        } else if let Some(rest) = d.strip_prefix('=') {
            form_encode(rest)
        } else {
            let eq = d.find('=');
            let at = d.find('@');
            match (eq, at) {
                (Some(e), a) if a.is_none_or(|a| e < a) => {
                    format!("{}={}", &d[..e], form_encode(&d[e + 1..]))
                }
                (_, Some(a)) => {
                    self.warnings.push(format!(
                        "curl flag {shown} '{d}' is not imported: it reads the file {}; put its \
                         content in the command instead",
                        &d[a + 1..]
                    ));
                    return;
                }
                _ => form_encode(d),
            }
        };
        if query {
            self.query.push(text);
        } else {
            self.data.push(Data::Text(text));
        }
    }

    fn form_part(&mut self, d: &str, shown: &str, literal: bool) {
        let Some((name, rest)) = d.split_once('=') else {
            self.warnings.push(format!(
                "curl flag {shown} '{d}' is not imported: it is not 'name=value'"
            ));
            return;
        };
        if !literal && (rest.starts_with('@') || rest.starts_with('<')) {
            self.warnings.push(format!(
                "curl flag {shown} '{d}' is not imported: yace cannot read a file into a \
                 multipart body; the part '{name}' is left out"
            ));
            return;
        }
        if literal {
            self.form.push(FormPart::Text {
                name: name.to_owned(),
                value: rest.to_owned(),
                mime: None,
                filename: None,
            });
            return;
        }
        // `value;type=text/plain;filename=a.txt`, or a quoted value.
        let (value, params) = if let Some(q) = rest.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = q.char_indices();
            let mut end = q.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            (v, &q[end..])
        } else {
            let cut = ["type=", "filename=", "headers=", "encoder="]
                .iter()
                .filter_map(|p| rest.find(&format!(";{p}")))
                .min()
                .unwrap_or(rest.len());
            (rest[..cut].to_owned(), &rest[cut..])
        };
        let mut mime = None;
        let mut filename = None;
        for p in params.split(';').filter(|p| !p.is_empty()) {
            if let Some(t) = p.strip_prefix("type=") {
                mime = Some(t.to_owned());
            } else if let Some(n) = p.strip_prefix("filename=") {
                filename = Some(n.trim_matches('"').to_owned());
            } else {
                self.warnings.push(format!(
                    "curl flag {shown}: the part option ';{p}' is not imported"
                ));
            }
        }
        self.form.push(FormPart::Text {
            name: name.to_owned(),
            value,
            mime,
            filename,
        });
    }

    fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    fn finish(mut self, words: &[Word]) -> Result<(Request, Vec<String>, Vec<String>), Error> {
        let Some(url_word) = self.urls.first().cloned() else {
            let end = words.last().map_or(
                Word {
                    text: String::new(),
                    line: 1,
                    column: 1,
                },
                |w| w.clone(),
            );
            return Err(err_at(
                &end,
                "the curl command has no URL (give it as an argument, or with --url)".to_owned(),
            ));
        };
        for extra in &self.urls[1..] {
            self.warnings.push(format!(
                "'{}' ({}) is a second URL, not imported: yace imports one request, to the first \
                 URL",
                extra.text,
                place(extra)
            ));
        }
        let mut url = url_word.text.trim().to_owned();
        if !url.contains("://") {
            url = format!("http://{url}");
        }
        let lower = url.to_ascii_lowercase();
        if !lower.starts_with("http://") && !lower.starts_with("https://") {
            return Err(err_at(
                &url_word,
                format!("'{}' is not an http:// or https:// URL", url_word.text),
            ));
        }
        if let Some(hash) = url.find('#') {
            url.truncate(hash);
        }
        let host_at = url.find("://").map_or(0, |i| i + 3);
        let after_host = url[host_at..].find('/').map_or(url.len(), |i| host_at + i);
        if !self.globoff && url[after_host..].contains(['{', '[']) {
            self.warnings.push(format!(
                "the URL has {{…}} or […]: curl would expand it into several URLs (globbing); \
                 it is imported as written ({})",
                place(&url_word)
            ));
        }

        // The body, and the method it implies.
        let mut body = Body::None;
        let mut texts = Vec::new();
        let mut file: Option<(String, bool)> = None;
        for d in std::mem::take(&mut self.data) {
            match d {
                Data::Text(t) => texts.push(t),
                Data::File(f, strips) => {
                    if file.is_some() || !texts.is_empty() {
                        self.warnings.push(format!(
                            "the data part @{f} is not imported: yace sends one file as the body, \
                             alone"
                        ));
                    } else {
                        file = Some((f, strips));
                    }
                }
            }
        }
        if let Some((f, strips)) = file.clone() {
            if !texts.is_empty() {
                self.warnings.push(format!(
                    "the data part @{f} is not imported: yace sends one file as the body, alone"
                ));
                file = None;
            } else if strips {
                self.notes.push(format!(
                    "-d @{f}: curl strips the file's line ends, --body-file sends it as it is \
                     (use --data-binary @{f} in curl for the same bytes)"
                ));
            }
        }
        let has_data = !texts.is_empty() || file.is_some();
        if self.get && has_data {
            let q = texts.join("&");
            if file.is_some() {
                self.warnings.push(
                    "curl flag -G with @file data is not imported: the file is left out".into(),
                );
            }
            if !q.is_empty() {
                self.query.insert(0, q);
            }
        } else if let Some((f, _)) = file {
            body = Body::File(f);
        } else if has_data {
            body = Body::Text(texts.join("&"));
        }
        if !self.query.is_empty() {
            let sep = if url.contains('?') { '&' } else { '?' };
            url = format!("{url}{sep}{}", self.query.join("&"));
        }
        if !self.form.is_empty() {
            if body != Body::None {
                self.warnings.push(
                    "curl cannot send -d and -F together; the -d data is left out".to_owned(),
                );
            }
            let boundary = "------------------------yace0import0boundary";
            let mut text = String::new();
            for p in &self.form {
                let FormPart::Text {
                    name,
                    value,
                    mime,
                    filename,
                } = p;
                text.push_str(&format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\""
                ));
                if let Some(f) = filename {
                    text.push_str(&format!("; filename=\"{f}\""));
                }
                text.push_str("\r\n");
                if let Some(m) = mime {
                    text.push_str(&format!("Content-Type: {m}\r\n"));
                }
                text.push_str(&format!("\r\n{value}\r\n"));
            }
            text.push_str(&format!("--{boundary}--\r\n"));
            body = Body::Text(text);
            match self
                .headers
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            {
                Some((_, v)) if !v.contains("boundary=") => {
                    v.push_str(&format!("; boundary={boundary}"))
                }
                Some(_) => {}
                None => self.headers.push((
                    "Content-Type".into(),
                    format!("multipart/form-data; boundary={boundary}"),
                )),
            }
        } else if matches!(body, Body::Text(_) | Body::File(_)) && !self.has("content-type") {
            let ct = if self.json {
                "application/json"
            } else {
                "application/x-www-form-urlencoded"
            };
            self.headers.push(("Content-Type".into(), ct.into()));
        }
        if self.json && !self.has("accept") {
            self.headers
                .push(("Accept".into(), "application/json".into()));
        }
        let uploaded = self.upload.is_some();
        if let Some(f) = self.upload.take() {
            if body != Body::None {
                self.warnings.push(format!(
                    "curl flag -T {f}: the -d/-F body is replaced by the file"
                ));
            }
            body = Body::File(f);
        }

        let method = match (&self.method, self.head, &body) {
            (Some(m), _, _) => m.clone(),
            (None, true, _) => "HEAD".into(),
            (None, false, _) if uploaded => "PUT".into(),
            (None, false, Body::None) => "GET".into(),
            (None, false, _) => "POST".into(),
        };

        // Headers that curl makes from flags, unless given with -H.
        let add = |f: &mut Flags, name: &str, value: String| {
            if !f.has(name) {
                f.headers.push((name.to_owned(), value));
            }
        };
        if let Some(a) = self.agent.take() {
            add(&mut self, "User-Agent", a);
        }
        if let Some(r) = self.referer.take() {
            add(&mut self, "Referer", r);
        }
        if let Some(r) = self.range.take() {
            let r = if r.contains('=') {
                r
            } else {
                format!("bytes={r}")
            };
            add(&mut self, "Range", r);
        }
        if self.no_user && self.user.is_some() {
            self.warnings.push(
                "curl flag -u is not imported with --digest, --ntlm or --negotiate: only Basic \
                 credentials can be sent as a header"
                    .into(),
            );
        } else if let Some(u) = self.user.take() {
            if !u.contains(':') {
                self.warnings.push(format!(
                    "curl flag -u {u}: no password (curl would ask for one); sent with an empty \
                     password"
                ));
            }
            let creds = if u.contains(':') { u } else { format!("{u}:") };
            add(
                &mut self,
                "Authorization",
                format!("Basic {}", base64_encode(creds.as_bytes())),
            );
        }
        if let Some(b) = self.bearer.take() {
            add(&mut self, "Authorization", format!("Bearer {b}"));
        }
        if !self.cookies.is_empty() {
            let more = self.cookies.join("; ");
            match self
                .headers
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case("cookie"))
            {
                Some((_, v)) => {
                    v.push_str("; ");
                    v.push_str(&more);
                }
                None => self.headers.push(("Cookie".into(), more)),
            }
        }
        if self.compressed && !self.has("accept-encoding") {
            self.headers
                .push(("Accept-Encoding".into(), "deflate, gzip, br, zstd".into()));
            self.notes.push(
                "--compressed asks for compressed responses (Accept-Encoding), as curl did; yace \
                 counts the bytes as they come and does not decompress them"
                    .into(),
            );
        }
        // Headers yace writes itself.
        let mut own = Vec::new();
        self.headers.retain(|(n, _)| {
            let l = n.to_ascii_lowercase();
            let keep = l != "content-length" && l != "transfer-encoding";
            if !keep {
                own.push(n.clone());
            }
            keep
        });
        for n in own {
            self.notes.push(format!(
                "the header {n} is left out: yace writes it itself, from the body"
            ));
        }
        for n in std::mem::take(&mut self.removed) {
            let l = n.to_ascii_lowercase();
            self.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&n));
            let what = match l.as_str() {
                "user-agent" => "yace sends User-Agent: yace/<version> unless given one",
                "accept" => "yace sends Accept: */* unless given one",
                _ => "yace does not send it on its own",
            };
            self.notes
                .push(format!("-H '{n}:' (curl: do not send {n}): {what}"));
        }
        if !self.curl_only.is_empty() {
            self.curl_only.dedup();
            let one = self.curl_only.len() == 1;
            self.notes.push(format!(
                "curl flag{} {} change{} only curl's own output or transfer: nothing to import",
                if one { "" } else { "s" },
                self.curl_only.join(" "),
                if one { "s" } else { "" }
            ));
        }
        let mut req = self.req;
        req.method = method;
        req.url = url;
        req.headers = self.headers;
        req.body = body;
        Ok((req, self.warnings, self.notes))
    }
}

/// The note every import that keeps credentials prints.
pub(crate) fn secrets_note(req: &Request) -> Option<String> {
    let s = plan::secrets::Secrets::default();
    let mut names: Vec<String> = req
        .headers
        .iter()
        .filter(|(n, _)| s.header_is_secret(n))
        .map(|(n, _)| n.clone())
        .collect();
    if s.url(&req.url) != req.url {
        names.push("the URL's password or secret query values".into());
    }
    names.dedup();
    (!names.is_empty()).then(|| {
        format!(
            "the output keeps the credentials the command sends ({}): yace shows them as *** in \
             its summary, --dry-run and results, but this text has them in clear",
            names.join(", ")
        )
    })
}

impl Request {
    /// An equivalent `yace run` command line, one flag per line.
    pub fn to_run_command(&self) -> String {
        let mut lines = vec![format!("yace run {}", shell_quote(&self.url))];
        if self.method != "GET" {
            lines.push(format!("-m {}", shell_quote(&self.method)));
        }
        for (n, v) in &self.headers {
            lines.push(format!("-H {}", shell_quote(&format!("{n}: {v}"))));
        }
        match &self.body {
            Body::None => {}
            Body::Text(t) => lines.push(format!("--body {}", shell_quote(t))),
            Body::File(f) => lines.push(format!("--body-file {}", shell_quote(f))),
        }
        if self.insecure {
            lines.push("--insecure".into());
        }
        for (flag, v) in [
            ("--cacert", &self.cacert),
            ("--cert", &self.cert),
            ("--key", &self.key),
        ] {
            if let Some(v) = v {
                lines.push(format!("{flag} {}", shell_quote(v)));
            }
        }
        if self.http2 {
            lines.push("--http2".into());
        }
        if let Some(ms) = self.timeout_ms {
            lines.push(format!(
                "--timeout {}",
                shell_quote(&duration_text(ms.max(1)))
            ));
        }
        if let Some(ms) = self.connect_timeout_ms {
            lines.push(format!(
                "--connect-timeout {}",
                shell_quote(&duration_text(ms.max(1)))
            ));
        }
        let mut out = lines.join(" \\\n  ");
        out.push('\n');
        out
    }

    /// The request as a scenario step; `base` is its scheme, host and port.
    pub(crate) fn to_step(&self) -> (Step, String, Vec<String>) {
        let mut warnings = Vec::new();
        let after = self.url.find("://").map_or(0, |i| i + 3);
        let path_at = self.url[after..]
            .find(['/', '?'])
            .map_or(self.url.len(), |i| after + i);
        let base = self.url[..path_at].to_owned();
        let mut path = self.url[path_at..].to_owned();
        if !path.starts_with('/') {
            path.insert(0, '/');
        }
        let mut headers = Vec::new();
        for (n, v) in &self.headers {
            if n.eq_ignore_ascii_case("host") {
                warnings.push(format!(
                    "the header Host: {v} is left out of the step: a scenario sends its base's \
                     host (give yace run the URL of that host)"
                ));
                continue;
            }
            headers.push((n.clone(), v.clone()));
        }
        let body = match &self.body {
            Body::None => StepBody::None,
            Body::Text(t) => StepBody::Raw(t.clone()),
            Body::File(f) => {
                let outside = f.starts_with('/') || f.split('/').any(|p| p == "..");
                StepBody::File(f.clone(), outside)
            }
        };
        let mut literal = Vec::new();
        if path.contains("{{") {
            literal.push("url");
        }
        if headers.iter().any(|(_, v)| v.contains("{{")) {
            literal.push("a header");
        }
        if matches!(&body, StepBody::Raw(t) if t.contains("{{")) {
            literal.push("the body");
        }
        if !literal.is_empty() {
            warnings.push(format!(
                "{} holds '{{{{', which a scenario reads as a template ({{{{name}}}}): it will \
                 not validate as it is",
                literal.join(" and ")
            ));
        }
        let name_path = path.split('?').next().unwrap_or("/");
        let step = Step {
            comments: Vec::new(),
            name: format!("{} {}", self.method, name_path),
            method: self.method.clone(),
            url: path,
            headers,
            body,
            extract: Vec::new(),
            check: Vec::new(),
            think: None,
        };
        (step, base, warnings)
    }
}

/// `yace import curl`: the command as `yace run` flags.
pub(crate) fn run_command(
    req: &Request,
    mut warnings: Vec<String>,
    mut notes: Vec<String>,
) -> Output {
    if let Some(n) = secrets_note(req) {
        notes.push(n);
    }
    warnings.dedup();
    Output {
        text: req.to_run_command(),
        warnings,
        notes,
    }
}

/// `yace import curl --step`: the command as a scenario step.
pub(crate) fn step(
    req: &Request,
    format: Format,
    mut warnings: Vec<String>,
    mut notes: Vec<String>,
) -> Output {
    let (mut step, base, more) = req.to_step();
    warnings.extend(more);
    let mut run_flags = Vec::new();
    if req.insecure {
        run_flags.push("--insecure".to_owned());
    }
    if req.http2 {
        run_flags.push("--http2".to_owned());
    }
    for (flag, v) in [
        ("--cacert", &req.cacert),
        ("--cert", &req.cert),
        ("--key", &req.key),
    ] {
        if let Some(v) = v {
            run_flags.push(format!("{flag} {}", shell_quote(v)));
        }
    }
    if let Some(ms) = req.connect_timeout_ms {
        run_flags.push(format!("--connect-timeout {}", duration_text(ms.max(1))));
    }
    step.comments.push(format!(
        "Imported from curl: {} {}",
        req.method,
        plan::secrets::Secrets::default().url(&req.url)
    ));
    step.comments.push(format!(
        "Its url is relative to the scenario's base: base = \"{base}\" (or yace run -f FILE {base})"
    ));
    if !run_flags.is_empty() {
        step.comments.push(format!(
            "Run it with: yace run -f FILE {}",
            run_flags.join(" ")
        ));
    }
    if let Some(ms) = req.timeout_ms {
        step.comments.push(format!(
            "curl's --max-time: set [load] timeout = \"{}\"",
            duration_text(ms.max(1))
        ));
    }
    if let Some(n) = secrets_note(req) {
        notes.push(n);
    }
    let text = match format {
        Format::Toml => step.toml(),
        Format::Yaml => format!("step:\n{}", step.yaml("  ")),
    };
    Output {
        text,
        warnings,
        notes,
    }
}

#[cfg(test)]
mod tests;
