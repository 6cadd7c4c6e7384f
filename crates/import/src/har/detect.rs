//! Values a server hands out and the browser sends back — a CSRF token in
//! a hidden input, a token in a JSON response, a session cookie read by
//! script, an id in a Location — found in a later request and traced to
//! the earlier response that carried them, with an extract that finds
//! the same place in a fresh response at run time.
//!
//! Every extract is tried on the recorded response before it is used: a
//! regex must find exactly the recorded value first, a JSON path must
//! lead to it.

use super::entry::Entry;
use crate::json::J;
use crate::write::Extract;
use regex::bytes::Regex;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashSet;

/// Where in a request a value sits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Loc {
    /// The whole request target, `/path?query`.
    Target,
    /// The k-th path segment (after the leading `/`).
    Seg(usize),
    /// The k-th query parameter's value.
    Query(usize),
    /// The k-th header's value, a token inside it.
    Header(usize),
    /// The k-th form field's value.
    Form(usize),
    /// A JSON leaf, by its path.
    Json(Vec<PathSeg>),
    /// Somewhere in a raw body.
    Raw,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PathSeg {
    Key(String),
    Index(usize),
}

/// A request body as the importer edits it.
#[derive(Debug, Clone)]
pub(crate) enum ReqBody {
    None,
    Form(Vec<(String, String)>),
    Json(J),
    Raw(String),
}

/// A request, split where values can be replaced by templates.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    /// `None` once the whole target is a template.
    pub whole: Option<String>,
    pub segs: Vec<String>,
    /// Raw `name=value` pairs (the value `None` for a bare name).
    pub query: Option<Vec<(String, Option<String>)>>,
    pub headers: Vec<(String, String)>,
    pub body: ReqBody,
    /// A JSON number was replaced: the body must be written raw.
    pub json_number_template: bool,
}

impl Req {
    pub(crate) fn new(target: &str, headers: Vec<(String, String)>, body: ReqBody) -> Req {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let segs = path
            .strip_prefix('/')
            .unwrap_or(path)
            .split('/')
            .map(str::to_owned)
            .collect();
        let query = query.map(|q| {
            q.split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                    None => (p.to_owned(), None),
                })
                .collect()
        });
        Req {
            whole: None,
            segs,
            query,
            headers,
            body,
            json_number_template: false,
        }
    }

    /// The request target, templates included.
    pub(crate) fn url(&self) -> String {
        if let Some(w) = &self.whole {
            return w.clone();
        }
        let mut out = format!("/{}", self.segs.join("/"));
        if let Some(q) = &self.query {
            out.push('?');
            let parts: Vec<String> = q
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => format!("{k}={v}"),
                    None => k.clone(),
                })
                .collect();
            out.push_str(&parts.join("&"));
        }
        out
    }

    /// Every value that could have come from the server, with where it is
    /// and a name for it from the request's side.
    pub(crate) fn slots(&self) -> Vec<(Loc, String, String)> {
        let mut out = Vec::new();
        out.push((Loc::Target, self.url(), "next".to_owned()));
        for (k, s) in self.segs.iter().enumerate() {
            let name = if k > 0 {
                self.segs[k - 1].clone()
            } else {
                String::new()
            };
            out.push((Loc::Seg(k), s.clone(), format!("{name}_id")));
        }
        if let Some(q) = &self.query {
            for (k, (name, v)) in q.iter().enumerate() {
                if let Some(v) = v {
                    out.push((Loc::Query(k), v.clone(), name.clone()));
                }
            }
        }
        for (k, (name, v)) in self.headers.iter().enumerate() {
            if SKIP_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                continue;
            }
            for t in tokens(v) {
                out.push((Loc::Header(k), t.to_owned(), name.clone()));
            }
        }
        match &self.body {
            ReqBody::None => {}
            ReqBody::Form(pairs) => {
                for (k, (name, v)) in pairs.iter().enumerate() {
                    out.push((Loc::Form(k), v.clone(), name.clone()));
                }
            }
            ReqBody::Json(j) => {
                let mut path = Vec::new();
                json_leaves(j, &mut path, &mut out);
            }
            ReqBody::Raw(t) => {
                for tok in t.split(|c: char| !(c.is_ascii_alphanumeric() || "-_.~+/=".contains(c)))
                {
                    out.push((
                        Loc::Raw,
                        tok.trim_end_matches('=').to_owned(),
                        String::new(),
                    ));
                }
            }
        }
        out
    }

    /// Replaces `value` at `loc` with `{{var}}`.
    pub(crate) fn replace(&mut self, loc: &Loc, value: &str, var: &str) {
        let t = format!("{{{{{var}}}}}");
        match loc {
            Loc::Target => self.whole = Some(t),
            Loc::Seg(k) => self.segs[*k] = t,
            Loc::Query(k) => {
                if let Some(q) = self.query.as_mut() {
                    q[*k].1 = Some(t);
                }
            }
            Loc::Header(k) => {
                let v = &mut self.headers[*k].1;
                *v = v.replacen(value, &t, 1);
            }
            Loc::Form(k) => {
                if let ReqBody::Form(p) = &mut self.body {
                    p[*k].1 = t;
                }
            }
            Loc::Json(path) => {
                if let ReqBody::Json(j) = &mut self.body {
                    if let Some(leaf) = json_at(j, path) {
                        match leaf {
                            J::Num(_) => {
                                *leaf = J::Num(t);
                                self.json_number_template = true;
                            }
                            J::Str(s) => *s = s.replace(value, &t),
                            _ => {}
                        }
                    }
                }
            }
            Loc::Raw => {
                if let ReqBody::Raw(r) = &mut self.body {
                    *r = r.replace(value, &t);
                }
            }
        }
    }
}

/// Headers whose values are not worth tracing (they are the browser's,
/// or the cookie jar's).
const SKIP_HEADERS: &[&str] = &[
    "cookie",
    "referer",
    "origin",
    "user-agent",
    "accept",
    "accept-language",
    "accept-encoding",
    "content-type",
];

/// The parts of a header value a token could be: the whole, its words,
/// and the values of `k=v` words.
fn tokens(v: &str) -> Vec<&str> {
    let mut out = vec![v.trim()];
    for w in v.split([' ', ',', ';']).filter(|w| !w.is_empty()) {
        out.push(w);
        if let Some((_, val)) = w.split_once('=') {
            out.push(val.trim_matches('"'));
        }
    }
    out.dedup();
    out
}

fn json_leaves(j: &J, path: &mut Vec<PathSeg>, out: &mut Vec<(Loc, String, String)>) {
    let name = || match path.last() {
        Some(PathSeg::Key(k)) => k.clone(),
        _ => String::new(),
    };
    match j {
        J::Str(s) => out.push((Loc::Json(path.clone()), s.clone(), name())),
        J::Num(n) => out.push((Loc::Json(path.clone()), n.clone(), name())),
        J::Arr(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(PathSeg::Index(i));
                json_leaves(v, path, out);
                path.pop();
            }
        }
        J::Obj(items) => {
            for (k, v) in items {
                path.push(PathSeg::Key(k.clone()));
                json_leaves(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn json_at<'a>(j: &'a mut J, path: &[PathSeg]) -> Option<&'a mut J> {
    let Some((first, rest)) = path.split_first() else {
        return Some(j);
    };
    let next = match (j, first) {
        (J::Obj(items), PathSeg::Key(k)) => {
            items.iter_mut().find(|(n, _)| n == k).map(|(_, v)| v)?
        }
        (J::Arr(items), PathSeg::Index(i)) => items.get_mut(*i)?,
        _ => return None,
    };
    json_at(next, rest)
}

/// Could this value have been handed out by the server? Long enough to be
/// nobody's typing and random-looking; numbers (ids) only where a whole
/// field is theirs.
pub(crate) fn candidate(v: &str, loc: &Loc) -> bool {
    if v.len() > 4096 || v.contains("{{") {
        return false;
    }
    if let Loc::Target = loc {
        return false;
    }
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        let whole_field = matches!(
            loc,
            Loc::Seg(_) | Loc::Query(_) | Loc::Form(_) | Loc::Json(_)
        );
        return whole_field
            && (4..=18).contains(&v.len())
            && !v.bytes().all(|b| b == v.as_bytes()[0]);
    }
    if v.len() < 8 || v.contains(char::is_whitespace) || v.contains("://") || v.starts_with('/') {
        return false;
    }
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    let letters = v.bytes().filter(u8::is_ascii_alphabetic).count();
    if letters == 0 {
        return false;
    }
    // A date or a time is rarely a server's token, and often on a page.
    let b = v.as_bytes();
    if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' && b[..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    digits > 0 || v.len() >= 16
}

/// A variable name from a word: lower case, `_` between words.
pub(crate) fn var_name(word: &str) -> String {
    let mut out = String::new();
    for c in word.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out = out.trim_matches('_').to_owned();
    if out.is_empty() {
        out = "value".to_owned();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "v_");
    }
    if matches!(out.as_str(), "user" | "iteration" | "uuid" | "random") {
        out.push_str("_value");
    }
    out
}

/// A recorded response, indexed for [`find`]: the part a run reads (1
/// MiB), its runs of letters and digits (to rule a value out without
/// searching), and its JSON, parsed once.
pub(crate) struct Resp<'a> {
    pub e: &'a Entry,
    body: Option<&'a str>,
    runs: HashSet<&'a str>,
    json: OnceCell<Option<Value>>,
}

impl<'a> Resp<'a> {
    pub(crate) fn new(e: &'a Entry) -> Resp<'a> {
        let body = e.body.as_deref().map(|b| &b[..floor_boundary(b, 1 << 20)]);
        let runs = body
            .map(|b| {
                b.split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|r| !r.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Resp {
            e,
            body,
            runs,
            json: OnceCell::new(),
        }
    }

    /// False when the body cannot hold `value` as a token of its own: a
    /// run of letters and digits of it that is whole on both sides is not
    /// a whole run of the body.
    fn may_hold(&self, value: &str) -> bool {
        let pieces: Vec<&str> = value.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        match pieces.as_slice() {
            [one] => self.runs.contains(one),
            [_, inner @ .., _] => inner
                .iter()
                .filter(|p| !p.is_empty())
                .all(|p| self.runs.contains(p)),
            [] => false,
        }
    }
}

/// An extract for `value` in a response, and a name for it; `None`
/// when the response does not carry it where an extract can find it.
pub(crate) fn find(
    r: &Resp<'_>,
    value: &str,
    loc: &Loc,
    target: Option<&str>,
) -> Option<(Extract, String)> {
    let e = r.e;
    let make = |from: &'static str, what: String, name: &str| {
        Some((
            Extract {
                var: String::new(),
                from,
                what,
            },
            name.to_owned(),
        ))
    };
    if let Loc::Target = loc {
        // A redirect's Location, followed: the whole next request.
        let location = e.resp_header("location")?;
        let resolved = match super::entry::split_url(location) {
            Some((_, t)) => t,
            None if location.starts_with('/') => location.to_owned(),
            None => return None,
        };
        return (Some(resolved.as_str()) == target)
            .then(|| make("header", "Location".into(), "next"))?;
    }
    if let Some((name, _)) = e.set_cookies.iter().rev().find(|(_, v)| v == value) {
        return make("cookie", name.clone(), name);
    }
    for (name, v) in &e.resp_headers {
        let l = name.to_ascii_lowercase();
        if l == "set-cookie" || BORING_RESPONSE_HEADERS.contains(&l.as_str()) {
            continue;
        }
        if v.trim() == value {
            return make("header", name.clone(), name);
        }
    }
    let body = r.body?;
    if !r.may_hold(value) || !body.contains(value) {
        return None;
    }
    let looks_json = e.mime.contains("json") || body.trim_start().starts_with(['{', '[']);
    if looks_json {
        let parsed = r
            .json
            .get_or_init(|| serde_json::from_str::<Value>(body).ok());
        if let Some(v) = parsed {
            let mut path = String::from("$");
            let mut name = String::new();
            if json_path(v, value, &mut path, &mut name) {
                return make("json", path, &name);
            }
        }
    }
    if let Some((re, name)) = html_attribute(body, value) {
        return make("regex", re, &name);
    }
    let (re, name) = context_regex(body, value)?;
    make("regex", re, &name)
}

const BORING_RESPONSE_HEADERS: &[&str] = &[
    "date",
    "content-length",
    "content-type",
    "content-encoding",
    "server",
    "expires",
    "last-modified",
    "cache-control",
    "vary",
    "age",
    "connection",
    "keep-alive",
    "transfer-encoding",
];

fn floor_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Depth-first: the path of the first leaf equal to `value`.
fn json_path(v: &Value, value: &str, path: &mut String, name: &mut String) -> bool {
    match v {
        Value::String(s) if s == value => true,
        Value::Number(n) if n.to_string() == value => true,
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                if json_path(item, value, path, name) {
                    return true;
                }
                path.truncate(len);
            }
            false
        }
        Value::Object(map) => {
            for (k, item) in map {
                let len = path.len();
                let simple = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if simple {
                    path.push('.');
                    path.push_str(k);
                } else if !k.contains(['"', ']']) {
                    path.push_str(&format!("[\"{k}\"]"));
                } else {
                    continue;
                }
                let before = std::mem::replace(name, k.clone());
                if json_path(item, value, path, name) {
                    return true;
                }
                *name = before;
                path.truncate(len);
            }
            false
        }
        _ => false,
    }
}

/// The regex finds `value` first, as its group 1.
fn finds(re: &str, body: &str, value: &str) -> bool {
    Regex::new(re).ok().is_some_and(|r| {
        r.captures(body.as_bytes())
            .and_then(|c| c.get(1))
            .is_some_and(|m| m.as_bytes() == value.as_bytes())
    })
}

/// `value` as an attribute of an HTML tag that names itself (`<input
/// type="hidden" name="csrf_token" value="…">`, `<meta name="csrf-token"
/// content="…">`): a regex anchored on the tag's name or id, whatever
/// the order of its attributes.
fn html_attribute(body: &str, value: &str) -> Option<(String, String)> {
    let p = body.find(value)?;
    let before = &body[..p];
    let q = before.chars().last()?;
    if q != '"' && q != '\'' {
        return None;
    }
    if !body[p + value.len()..].starts_with(q) {
        return None;
    }
    let open = before.rfind('<')?;
    if before[open..].contains('>') {
        return None;
    }
    let close = p + body[p..].find('>')?;
    let tag_text = &body[open..=close];
    let tag: String = tag_text[1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    if tag.is_empty() {
        return None;
    }
    let attr_re =
        Regex::new(r#"([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)')"#).ok()?;
    let mut attrs = Vec::new();
    for c in attr_re.captures_iter(tag_text.as_bytes()) {
        let name = String::from_utf8_lossy(c.get(1)?.as_bytes()).to_ascii_lowercase();
        let (val, quote) = match (c.get(2), c.get(3)) {
            (Some(v), _) => (v, '"'),
            (_, Some(v)) => (v, '\''),
            _ => continue,
        };
        attrs.push((
            name,
            String::from_utf8_lossy(val.as_bytes()).into_owned(),
            quote,
            c.get(0)?.start(),
        ));
    }
    let (vattr, _, _, vpos) = attrs.iter().find(|(_, v, _, _)| v == value)?.clone();
    let (iattr, ival, iq, ipos) = ["name", "id", "property", "itemprop", "http-equiv"]
        .iter()
        .find_map(|want| {
            attrs.iter().find(|(n, v, _, _)| {
                n == want && *n != vattr && !v.is_empty() && v != value && !v.contains('&')
            })
        })?
        .clone();
    let ident = format!(
        r#"\b{}\s*=\s*{iq}{}{iq}"#,
        regex::escape(&iattr),
        regex::escape(&ival)
    );
    let capture = format!(r#"\b{}\s*=\s*{q}([^{q}]*){q}"#, regex::escape(&vattr));
    let re = if ipos < vpos {
        format!("<{tag}\\b[^>]*?{ident}[^>]*?{capture}")
    } else {
        format!("<{tag}\\b[^>]*?{capture}[^>]*?{ident}")
    };
    finds(&re, body, value).then_some((re, ival))
}

/// `value` after a few characters of fixed context: the shortest prefix
/// (of 6 to 48 characters) with which the regex finds it first.
fn context_regex(body: &str, value: &str) -> Option<(String, String)> {
    let p = body.find(value)?;
    let mut class = String::from("A-Za-z0-9");
    let mut odd = false;
    for c in value.chars() {
        if c.is_ascii_alphanumeric() {
            continue;
        }
        if c.is_whitespace() || "\"'<>&\\".contains(c) || !c.is_ascii() {
            odd = true;
            continue;
        }
        let esc = if "]^-[".contains(c) {
            format!("\\{c}")
        } else {
            c.to_string()
        };
        if !class.contains(&esc) {
            class.push_str(&esc);
        }
    }
    let after = &body[p + value.len()..];
    let next_in_class = after
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || value.contains(c));
    let suffix: String = after.chars().take(8).collect();
    let capture = if odd || next_in_class {
        if suffix.is_empty() {
            return None;
        }
        let cut: String = suffix.chars().take(if odd { 4 } else { 1 }).collect();
        format!("(.+?){}", regex::escape(&cut))
    } else {
        format!("([{class}]+)")
    };
    for n in [6, 12, 24, 48] {
        let mut start = p.saturating_sub(n);
        while !body.is_char_boundary(start) {
            start -= 1;
        }
        // Whole words read better: `__token = "`, not `en = "`.
        let b = body.as_bytes();
        while start > 0
            && p - start < n + 32
            && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_')
        {
            start -= 1;
        }
        let prefix = &body[start..p];
        if prefix.is_empty() {
            break;
        }
        let re = format!("{}{capture}", regex::escape(prefix));
        if finds(&re, body, value) {
            let mut wide = p.saturating_sub(64);
            while !body.is_char_boundary(wide) {
                wide -= 1;
            }
            return Some((re, last_word(&body[wide..p])));
        }
        if start == 0 {
            break;
        }
    }
    None
}

/// The last identifier-like word of the context before a value
/// (`"token": "` → `token`).
fn last_word(s: &str) -> String {
    let words: Vec<&str> = s
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        .collect();
    words.last().map_or_else(String::new, |w| (*w).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips() {
        let r = Req::new("/a/b?x=1&flag&y=", vec![], ReqBody::None);
        assert_eq!(r.url(), "/a/b?x=1&flag&y=");
        assert_eq!(Req::new("/", vec![], ReqBody::None).url(), "/");
        assert_eq!(Req::new("/a/", vec![], ReqBody::None).url(), "/a/");
    }

    #[test]
    fn candidates() {
        let q = Loc::Query(0);
        assert!(candidate("f3a9c2e17b", &q));
        assert!(candidate("48213", &q));
        assert!(!candidate("48213", &Loc::Header(0)));
        assert!(!candidate("1111", &q));
        assert!(!candidate("alice", &q));
        assert!(!candidate("checkout", &q));
        assert!(candidate("abcdefghijklmnopq", &q));
        assert!(!candidate("2024-05-14T10:00", &q));
        assert!(!candidate("https://x/y1234567", &q));
    }

    #[test]
    fn names() {
        assert_eq!(var_name("csrf-token"), "csrf_token");
        assert_eq!(var_name("X-CSRF-Token"), "x_csrf_token");
        assert_eq!(var_name("2fa"), "v_2fa");
        assert_eq!(var_name("user"), "user_value");
        assert_eq!(var_name("--"), "value");
    }

    #[test]
    fn hidden_inputs_in_any_order() {
        let html = r#"<form><input type="hidden" value="tok3n1234xyz" name="csrf_token"><input name="q" value="x"></form>"#;
        let (re, name) = html_attribute(html, "tok3n1234xyz").unwrap();
        assert_eq!(name, "csrf_token");
        assert!(finds(&re, html, "tok3n1234xyz"));
        // At run time, a new value is found.
        let fresh = html.replace("tok3n1234xyz", "other987654");
        assert!(finds(&re, &fresh, "other987654"), "{re}");
        let meta = r#"<meta content='abc123def456' name="csrf-token">"#;
        let (re, name) = html_attribute(meta, "abc123def456").unwrap();
        assert_eq!(name, "csrf-token");
        assert!(finds(&re, meta, "abc123def456"));
    }

    #[test]
    fn context_regexes_find_the_first() {
        let text = "var a = 'x'; window.__token = \"k8s9d8f7g6h5\"; other";
        let (re, name) = context_regex(text, "k8s9d8f7g6h5").unwrap();
        assert_eq!(name, "__token");
        assert!(finds(&re, text, "k8s9d8f7g6h5"));
        assert!(finds(
            &re,
            &text.replace("k8s9d8f7g6h5", "zzzz1111yyyy"),
            "zzzz1111yyyy"
        ));
        // The same context twice: a longer prefix tells them apart.
        let twice = "id=\"aaaa1111\" x; id=\"bbbb2222\" y";
        let (re, _) = context_regex(twice, "bbbb2222").unwrap();
        assert!(finds(&re, twice, "bbbb2222"), "{re}");
    }

    #[test]
    fn json_paths() {
        let v: Value =
            serde_json::from_str(r#"{"data":{"items":[{"id":48213}],"x.y":"tok12345678"}}"#)
                .unwrap();
        let mut p = String::from("$");
        let mut n = String::new();
        assert!(json_path(&v, "48213", &mut p, &mut n));
        assert_eq!((p.as_str(), n.as_str()), ("$.data.items[0].id", "id"));
        let mut p = String::from("$");
        assert!(json_path(&v, "tok12345678", &mut p, &mut n));
        assert_eq!(p, "$.data[\"x.y\"]");
    }
}
