//! A HAR 1.2 log (Chrome's, Firefox's, or a proxy's export) read into the
//! few facts the importer uses, leniently: what a browser leaves out
//! (bodies, timings) is simply absent.

use crate::text::{base64_decode, form_encode, parse_time_ms};
use crate::Error;
use serde_json::Value;

/// Where requests go: scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl Origin {
    /// `https://host` (the port only when it is not the scheme's).
    pub(crate) fn base(&self) -> String {
        let default = if self.scheme == "https" { 443 } else { 80 };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == default {
            format!("{}://{host}", self.scheme)
        } else {
            format!("{}://{host}:{}", self.scheme, self.port)
        }
    }

    /// `host` or `host:port`, as a person names it.
    pub(crate) fn name(&self) -> String {
        let default = if self.scheme == "https" { 443 } else { 80 };
        if self.port == default {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// An http(s) URL split into its origin and its request target
/// (`/path?query`, as written; no fragment).
pub(crate) fn split_url(url: &str) -> Option<(Origin, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h.to_owned(), after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (hostport.to_owned(), None),
        }
    };
    let default = if scheme == "https" { 443 } else { 80 };
    let port = match port {
        Some("") | None => default,
        Some(p) => p.parse().ok()?,
    };
    if host.is_empty() {
        return None;
    }
    let mut target = rest[end..].to_owned();
    if let Some(h) = target.find('#') {
        target.truncate(h);
    }
    if !target.starts_with('/') {
        target.insert(0, '/');
    }
    Some((
        Origin {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        },
        target,
    ))
}

#[derive(Debug, Clone)]
pub(crate) struct Post {
    pub mime: String,
    pub text: String,
}

/// One request and its response.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// 1-based position in the HAR file.
    pub n: usize,
    /// When it started, ms since the epoch; how long it took, ms.
    pub start: f64,
    pub time: f64,
    pub method: String,
    pub url: String,
    /// `None` for what is not http(s) (data:, blob:, ws:, chrome-extension:).
    pub origin: Option<Origin>,
    pub target: String,
    pub req_headers: Vec<(String, String)>,
    pub post: Option<Post>,
    /// 0: no response (blocked, failed, cancelled).
    pub status: u16,
    pub resp_headers: Vec<(String, String)>,
    /// Set-Cookie: name and value, in order.
    pub set_cookies: Vec<(String, String)>,
    /// The response's media type, lower case, without parameters.
    pub mime: String,
    /// The response body as text (base64 decoded), when the HAR has it.
    pub body: Option<String>,
    /// Chrome's `_resourceType` (document, xhr, fetch, script, image, …).
    pub resource_type: String,
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn headers(v: &Value) -> Vec<(String, String)> {
    v.get("headers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|h| {
                    let name = h.get("name")?.as_str()?.trim();
                    let value = h.get("value").and_then(Value::as_str).unwrap_or("");
                    (!name.is_empty()).then(|| (name.to_owned(), value.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `name=value; Path=/; HttpOnly` → (name, value).
pub(crate) fn set_cookie_pair(line: &str) -> Option<(String, String)> {
    let first = line.split(';').next()?;
    let (n, v) = first.split_once('=')?;
    let n = n.trim();
    (!n.is_empty()).then(|| (n.to_owned(), v.trim().to_owned()))
}

/// Reads the log; the entries come back in the order they started.
pub(crate) fn read(text: &str) -> Result<Vec<Entry>, Error> {
    let text = text.trim_start_matches('\u{feff}');
    let root: Value = serde_json::from_str(text).map_err(|e| {
        Error::at(
            format!("this is not a HAR file: it is not JSON ({e})"),
            e.line(),
            e.column(),
        )
    })?;
    let entries = root
        .get("log")
        .and_then(|l| l.get("entries"))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Error::new("this is not a HAR file: it has no log.entries (export it with \"Save all as HAR\")")
        })?;
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let req = e.get("request").unwrap_or(&Value::Null);
        let resp = e.get("response").unwrap_or(&Value::Null);
        let url = s(req, "url").to_owned();
        let (origin, target) = match split_url(&url) {
            Some((o, t)) => (Some(o), t),
            None => (None, String::new()),
        };
        let post = req.get("postData").and_then(|p| {
            let mime = s(p, "mimeType").to_owned();
            let text = match p.get("text").and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => {
                    let params = p.get("params").and_then(Value::as_array)?;
                    params
                        .iter()
                        .map(|kv| {
                            format!(
                                "{}={}",
                                form_encode(s(kv, "name")),
                                form_encode(s(kv, "value"))
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("&")
                }
            };
            Some(Post { mime, text })
        });
        let resp_headers = headers(resp);
        let mut set_cookies = Vec::new();
        for (n, v) in &resp_headers {
            if n.eq_ignore_ascii_case("set-cookie") {
                // Chrome joins several Set-Cookie fields with newlines.
                set_cookies.extend(v.lines().filter_map(set_cookie_pair));
            }
        }
        if set_cookies.is_empty() {
            if let Some(cs) = resp.get("cookies").and_then(Value::as_array) {
                for c in cs {
                    let name = s(c, "name");
                    if !name.is_empty() {
                        set_cookies.push((name.to_owned(), s(c, "value").to_owned()));
                    }
                }
            }
        }
        let content = resp.get("content").unwrap_or(&Value::Null);
        let mime = s(content, "mimeType")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let body = content.get("text").and_then(Value::as_str).map(|t| {
            if s(content, "encoding") == "base64" {
                base64_decode(t)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default()
            } else {
                t.to_owned()
            }
        });
        let status = resp
            .get("status")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(999) as u16;
        let failed = e.get("response").is_none()
            || resp.get("_error").is_some_and(|v| !v.is_null() && v != "");
        out.push(Entry {
            n: i + 1,
            start: parse_time_ms(s(e, "startedDateTime")).unwrap_or(f64::NAN),
            time: e
                .get("time")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .max(0.0),
            method: s(req, "method").to_ascii_uppercase(),
            url,
            origin,
            target,
            req_headers: headers(req),
            post,
            status: if failed { 0 } else { status },
            resp_headers,
            set_cookies,
            mime,
            body,
            resource_type: s(e, "_resourceType").to_ascii_lowercase(),
        });
    }
    // Stable: entries that started together keep the file's order; an
    // entry without a time stays where it is relative to its neighbours.
    if out.iter().all(|e| e.start.is_finite()) {
        out.sort_by(|a, b| a.start.total_cmp(&b.start));
    }
    Ok(out)
}

const ASSET_EXT: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "bmp", "css", "js", "mjs", "map",
    "woff", "woff2", "ttf", "otf", "eot", "mp4", "webm", "mp3", "ogg", "wav", "wasm",
];

impl Entry {
    /// A static asset: an image, a style sheet, a script, a font, media.
    pub(crate) fn is_asset(&self) -> bool {
        match self.resource_type.as_str() {
            "image" | "stylesheet" | "script" | "font" | "media" | "manifest" | "texttrack" => {
                return true
            }
            "document" | "xhr" | "fetch" | "eventsource" | "websocket" | "preflight" | "ping" => {
                return false
            }
            _ => {}
        }
        let m = self.mime.as_str();
        if m.starts_with("image/")
            || m.starts_with("font/")
            || m.starts_with("audio/")
            || m.starts_with("video/")
            || m == "text/css"
            || m.contains("javascript")
            || m.contains("ecmascript")
            || m.starts_with("application/font")
            || m.starts_with("application/x-font")
            || m == "application/wasm"
        {
            return true;
        }
        let path = self.target.split('?').next().unwrap_or("");
        let last = path.rsplit('/').next().unwrap_or("");
        match last.rsplit_once('.') {
            Some((_, ext)) => ASSET_EXT.contains(&ext.to_ascii_lowercase().as_str()),
            None => false,
        }
    }

    pub(crate) fn resp_header(&self, name: &str) -> Option<&str> {
        self.resp_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split() {
        let (o, t) = split_url("https://Shop.Example.test/a/b?x=1#frag").unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("https", "shop.example.test", 443)
        );
        assert_eq!(t, "/a/b?x=1");
        assert_eq!(o.base(), "https://shop.example.test");
        let (o, t) = split_url("http://u:p@127.0.0.1:8080?q").unwrap();
        assert_eq!(
            (o.host.as_str(), o.port, t.as_str()),
            ("127.0.0.1", 8080, "/?q")
        );
        assert_eq!(o.base(), "http://127.0.0.1:8080");
        let (o, _) = split_url("http://[::1]:9000/").unwrap();
        assert_eq!(o.base(), "http://[::1]:9000");
        assert!(split_url("data:image/png;base64,xx").is_none());
        assert!(split_url("wss://x/").is_none());
    }

    #[test]
    fn set_cookie_lines() {
        assert_eq!(
            set_cookie_pair("sid=abc; Path=/; HttpOnly"),
            Some(("sid".into(), "abc".into()))
        );
        assert_eq!(set_cookie_pair("novalue"), None);
    }
}
