//! One request step: method, url, headers, body, extracts, checks, think.

use crate::build::{Builder, Known};
use crate::diag::Pos;
use crate::ident::is_ident;
use crate::jsonpath::JsonPath;
use crate::load;
use crate::node::{Kind, Node};
use crate::program::{Body, Check, CheckKind, Extract, ExtractFrom, HeaderTest, Step};
use crate::read::{self, Fields};
use crate::template::{encode, Enc, Part, Template};
use crate::think::show;
use crate::{Capture, StepInfo};
use plan::Target;
use regex::bytes::Regex;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const STEP_KEYS: [&str; 16] = [
    "name",
    "method",
    "url",
    "headers",
    "body",
    "body_file",
    "allow_outside",
    "form",
    "json",
    "extract",
    "check",
    "think",
    "thresholds",
    "abort_on_fail",
    "weight",
    "choice",
];
const BODY_KEYS: [&str; 4] = ["body", "body_file", "form", "json"];
const EXTRACT_KEYS: [&str; 6] = ["var", "json", "header", "regex", "cookie", "group"];
const EXTRACT_FROM: [&str; 4] = ["json", "header", "regex", "cookie"];
const CHECK_KEYS: [&str; 9] = [
    "status",
    "status_in",
    "body_contains",
    "regex",
    "json",
    "equals",
    "header",
    "contains",
    "max_latency",
];
const CHECK_KINDS: [&str; 7] = [
    "status",
    "status_in",
    "body_contains",
    "regex",
    "json",
    "header",
    "max_latency",
];
/// Headers yace writes itself.
const RESERVED: [&str; 3] = ["host", "content-length", "transfer-encoding"];

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Builder<'_> {
    /// Compiles a request step; returns its id, its dry-run JSON and the
    /// variables it extracts.
    pub(crate) fn step(
        &mut self,
        journey: &str,
        group: Option<&str>,
        item: &Node,
        known: &Known,
        names: &mut BTreeMap<String, Pos>,
    ) -> Option<(u16, Value, Vec<String>)> {
        let what = if group.is_some() {
            "a choice option"
        } else {
            "a step"
        };
        let f = read::table(self.s, item, what, &STEP_KEYS)?;
        if group.is_some() {
            if let Some(p) = f.key_pos("choice") {
                self.s.err(p, "a choice option cannot itself be a choice");
            }
        } else if let Some(p) = f.key_pos("weight") {
            self.s.hint(
                p,
                "`weight` applies to the options of a `choice`",
                "put the alternatives in choice = [ {…}, {…} ], each with a weight",
            );
        }
        let id = self.infos.len();
        if id > usize::from(u16::MAX) {
            self.s.err(item.pos, "a scenario has at most 65536 steps");
            return None;
        }
        let id = id as u16;
        let mut ok = true;

        let method = match f.get("method") {
            None => Some("GET".to_owned()),
            Some(m) => read::string(self.s, m, "`method`").and_then(|t| {
                if is_token(t) {
                    Some(t.to_ascii_uppercase())
                } else {
                    self.s.err(m.pos, format!("'{t}' is not an HTTP method"));
                    None
                }
            }),
        };
        let method = method.unwrap_or_else(|| {
            ok = false;
            "GET".into()
        });
        let url_node = f.require(self.s, "url", what);
        let url = url_node.and_then(|n| self.url(n, known));
        let url_text = match url_node.map(|n| &n.kind) {
            Some(Kind::Str(t)) => t.text.clone(),
            _ => String::new(),
        };
        let name = match f.get("name") {
            Some(n) => read::string(self.s, n, "`name`").map(str::to_owned),
            None => Some(format!("{method} {url_text}")),
        };
        let name = name.unwrap_or_default();
        let name_pos = f.get("name").map_or(item.pos, |n| n.pos);
        if let Some(first) = names.insert(name.clone(), name_pos) {
            self.s.hint(
                name_pos,
                format!(
                    "step name '{name}' is used twice in journey '{journey}' (first on line {})",
                    first.line
                ),
                "step names label per-step statistics; give each a `name`",
            );
        }

        let headers = self.headers(&f, known);
        let body = self.body(&f, known);
        let (extracts, extracted, ex_json) = self.extracts(&f, id);
        let (checks, ck_json) = self.checks(&f, id);
        let think = match f.get("think") {
            Some(n) => load::think(self.s, n, "`think`"),
            None => Some(self.default_think()),
        };
        let thresholds = f
            .get("thresholds")
            .map(|n| read::strings(self.s, n, "`thresholds`"))
            .unwrap_or_default();
        let abort_on_fail = f
            .get("abort_on_fail")
            .map(|n| read::boolean(self.s, n, "`abort_on_fail`"));

        let (Some((url, dynamic)), Some(headers), Some((body, content_type, body_json))) =
            (url, headers, body)
        else {
            return None;
        };
        let (Some(extracts), Some(checks), Some(think), true) = (extracts, checks, think, ok)
        else {
            return None;
        };
        let abort_on_fail = match abort_on_fail {
            None => false,
            Some(Some(b)) => b,
            Some(None) => return None,
        };
        let mut capture = if self.cookies() {
            Capture::Head
        } else {
            Capture::None
        };
        for e in &extracts {
            capture = capture.max(e.from.capture());
        }
        for c in &checks {
            capture = capture.max(c.kind.capture());
        }
        let has = |n: &str| headers.0.iter().any(|(h, _)| h.eq_ignore_ascii_case(n));
        let user_agent = has("user-agent");
        let accept = has("accept");
        let content_type = if has("content-type") {
            None
        } else {
            content_type
        };
        let (headers, cookie, headers_json) = headers;
        let json = json!({
            "id": id,
            "name": name,
            "method": method,
            "url": url_text,
            "headers": headers_json,
            "body": body_json,
            "extract": ex_json,
            "check": ck_json,
            "think": crate::think::think_text(&think),
            "thresholds": thresholds,
            "abort_on_fail": abort_on_fail,
        });
        let m = method.clone();
        let m = m.as_str();
        self.steps.push(Step {
            head: m == "HEAD",
            idempotent: plan::method::is_idempotent(m.as_bytes()),
            send_length: matches!(m, "POST" | "PUT" | "PATCH"),
            method,
            url,
            dynamic,
            headers,
            cookie,
            user_agent,
            accept,
            content_type,
            body,
            extracts,
            checks,
            think,
            capture,
            abort_on_fail,
        });
        self.infos.push(StepInfo {
            id,
            name,
            journey: journey.to_owned(),
            thresholds,
            group: group.map(str::to_owned),
            method: m.to_owned(),
            url: url_text,
        });
        Some((id, json, extracted))
    }

    /// The request target: relative to base (its path is put in front), or
    /// absolute to base's own host and port, or starting with a template
    /// (then fixed at run time).
    fn url(&mut self, node: &Node, known: &Known) -> Option<(Template, bool)> {
        let text = read::string(self.s, node, "`url`")?.to_owned();
        let base = self.base.clone();
        let prefix = base
            .as_ref()
            .map_or("", |b| b.path.trim_end_matches('/'))
            .to_owned();
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let after = text.find("://").unwrap_or(0) + 3;
            let end = text[after..]
                .find(['/', '?'])
                .map_or(text.len(), |e| after + e);
            if text[..end].contains("{{") {
                self.s.err(
                    node.pos,
                    "`url`: the host of an absolute url cannot come from a template",
                );
                return None;
            }
            let other = match Target::parse(&text[..end]) {
                Ok(t) => t,
                Err(e) => {
                    self.s.err(node.pos, format!("`url`: {e}"));
                    return None;
                }
            };
            let base = base?;
            if other.host != base.host || other.port != base.port || other.scheme != base.scheme {
                self.s.hint(
                    node.pos,
                    format!(
                        "`url` points at {}, but this run's target is {} (`base`)",
                        other.host_header, base.host_header
                    ),
                    "a run has one connection target; make the url relative to base",
                );
                return None;
            }
            let rest = &text[end..];
            let mut parts = Vec::new();
            if !rest.starts_with('/') {
                parts.push(Part::Lit(b"/".to_vec()));
            }
            parts.extend(self.parts(node, rest, end, "`url`", Enc::Url, known)?);
            return Some((Template::new(&text, Enc::Url, parts), false));
        }
        if text.starts_with("{{") {
            let parts = self.parts(node, &text, 0, "`url`", Enc::Url, known)?;
            return Some((Template::new(&text, Enc::Url, parts), true));
        }
        if !text.starts_with('/') {
            self.s.hint(
                node.pos,
                format!("`url` '{text}' must start with '/' (it is relative to `base`)"),
                format!("write \"/{text}\""),
            );
            return None;
        }
        let mut parts = vec![Part::Lit(prefix.into_bytes())];
        parts.extend(self.parts(node, &text, 0, "`url`", Enc::Url, known)?);
        Some((Template::new(&text, Enc::Url, parts), false))
    }

    /// The scenario's `headers` overlaid with the step's (same name,
    /// any case: the step's wins).
    #[allow(clippy::type_complexity)]
    fn headers(
        &mut self,
        f: &Fields<'_>,
        known: &Known,
    ) -> Option<(Vec<(String, Template)>, Option<Template>, Vec<Value>)> {
        let mut list: Vec<(String, Pos, &Node)> = Vec::new();
        let own = match f.get("headers") {
            Some(n) => read::any_table(self.s, n, "`headers`")?,
            None => &[],
        };
        for (name, pos, node) in self.headers.clone() {
            if !own.iter().any(|e| e.key.eq_ignore_ascii_case(name)) {
                list.push((name.to_owned(), pos, node));
            }
        }
        for e in own {
            list.push((e.key.clone(), e.key_pos, &e.value));
        }
        let mut ok = true;
        let mut out = Vec::new();
        let mut cookie = None;
        let mut js = Vec::new();
        for (name, pos, node) in list {
            if !is_token(&name) {
                self.s.err(pos, format!("'{name}' is not a header name"));
                ok = false;
                continue;
            }
            if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
                self.s.hint(
                    pos,
                    format!("yace writes `{name}` itself"),
                    "remove this header",
                );
                ok = false;
                continue;
            }
            let what = format!("header `{name}`");
            if let Some(Kind::Str(t)) = Some(&node.kind) {
                if t.text.contains(['\r', '\n']) {
                    self.s.err(
                        node.pos,
                        format!("{what} spans lines; a header value is one line"),
                    );
                    ok = false;
                    continue;
                }
            }
            let Some(t) = self.template(node, &what, Enc::Header, known) else {
                ok = false;
                continue;
            };
            js.push(json!([name, t.source]));
            if name.eq_ignore_ascii_case("cookie") {
                cookie = Some(t);
            } else {
                out.push((name, t));
            }
        }
        ok.then_some((out, cookie, js))
    }

    fn body(
        &mut self,
        f: &Fields<'_>,
        known: &Known,
    ) -> Option<(Body, Option<&'static str>, Value)> {
        let mut given: Vec<(&str, Pos)> = BODY_KEYS
            .iter()
            .filter_map(|k| f.key_pos(k).map(|p| (*k, p)))
            .collect();
        given.sort_by_key(|(_, p)| *p);
        if let Some(((first, _), rest)) = given.split_first() {
            if !rest.is_empty() {
                for (k, p) in rest {
                    self.s.hint(
                        *p,
                        format!("`{k}` and `{first}` both give the body"),
                        "keep one of body, body_file, form, json",
                    );
                }
                return None;
            }
        }
        if let (Some(p), false) = (f.key_pos("allow_outside"), f.has("body_file")) {
            self.s.err(p, "`allow_outside` applies to `body_file`");
            return None;
        }
        let Some((kind, _)) = given.first() else {
            return Some((Body::None, None, Value::Null));
        };
        let node = f.get(kind)?;
        match *kind {
            "body" => {
                let t = self.template(node, "`body`", Enc::Raw, known)?;
                let js = json!({"text": t.source});
                Some((Body::Template(t), None, js))
            }
            "body_file" => {
                let rel = read::string(self.s, node, "`body_file`")?;
                let outside = match f.get("allow_outside") {
                    Some(n) => read::boolean(self.s, n, "`allow_outside`")?,
                    None => false,
                };
                let bytes = self.read_file(node, rel, outside)?;
                let js = json!({"file": rel, "bytes": bytes.len()});
                Some((Body::Bytes(bytes), None, js))
            }
            "form" => {
                let entries = read::any_table(self.s, node, "`form`")?;
                let mut parts = Vec::new();
                let mut ok = true;
                let mut js = serde_json::Map::new();
                for (i, e) in entries.iter().enumerate() {
                    let mut lit = Vec::new();
                    if i > 0 {
                        lit.push(b'&');
                    }
                    encode(Enc::Form, e.key.as_bytes(), &mut lit);
                    lit.push(b'=');
                    parts.push(Part::Lit(lit));
                    let what = format!("form field `{}`", e.key);
                    let Some(text) = read::scalar_text(self.s, &e.value, &what) else {
                        ok = false;
                        continue;
                    };
                    match self.parts(&e.value, &text, 0, &what, Enc::Form, known) {
                        Some(p) => parts.extend(p),
                        None => ok = false,
                    }
                    js.insert(e.key.clone(), Value::String(text));
                }
                ok.then(|| {
                    (
                        Body::Template(Template::new("form", Enc::Form, parts)),
                        Some("application/x-www-form-urlencoded"),
                        json!({"form": js}),
                    )
                })
            }
            _ => {
                let mut parts = Vec::new();
                self.json_parts(node, known, &mut parts)?;
                let shown = read::to_json(self.s, node)?;
                Some((
                    Body::Template(Template::new("json", Enc::Json, parts)),
                    Some("application/json"),
                    json!({"json": shown}),
                ))
            }
        }
    }

    /// A `json` body: the structure is literal, string leaves are
    /// templates whose values are escaped as JSON.
    fn json_parts(&mut self, node: &Node, known: &Known, out: &mut Vec<Part>) -> Option<()> {
        let lit = |out: &mut Vec<Part>, s: &str| out.push(Part::Lit(s.as_bytes().to_vec()));
        match &node.kind {
            Kind::Str(t) => {
                lit(out, "\"");
                let parts = self.parts(node, &t.text, 0, "`json`", Enc::Json, known)?;
                out.extend(parts);
                lit(out, "\"");
            }
            Kind::Seq(items) => {
                lit(out, "[");
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        lit(out, ",");
                    }
                    ok &= self.json_parts(item, known, out).is_some();
                }
                lit(out, "]");
                if !ok {
                    return None;
                }
            }
            Kind::Map(entries) => {
                lit(out, "{");
                let mut ok = true;
                for (i, e) in entries.iter().enumerate() {
                    if i > 0 {
                        lit(out, ",");
                    }
                    lit(out, &serde_json::to_string(&e.key).ok()?);
                    lit(out, ":");
                    ok &= self.json_parts(&e.value, known, out).is_some();
                }
                lit(out, "}");
                if !ok {
                    return None;
                }
            }
            _ => {
                let v = read::to_json(self.s, node)?;
                lit(out, &v.to_string());
            }
        }
        Some(())
    }

    #[allow(clippy::type_complexity)]
    fn extracts(
        &mut self,
        f: &Fields<'_>,
        step: u16,
    ) -> (Option<Vec<Extract>>, Vec<String>, Vec<Value>) {
        let mut out = Vec::new();
        let mut vars = Vec::new();
        let mut js = Vec::new();
        let Some(n) = f.get("extract") else {
            return (Some(out), vars, js);
        };
        let Some(items) = read::list(self.s, n, "`extract`") else {
            return (None, vars, js);
        };
        let mut ok = true;
        for item in items {
            match self.extract(item, step) {
                Some((e, var)) => {
                    js.push(read::to_json(self.s, item).unwrap_or_default());
                    vars.push(var.clone());
                    let slot = self
                        .slots
                        .iter()
                        .position(|s| *s == var)
                        .unwrap_or_else(|| {
                            self.slots.push(var);
                            self.slots.len() - 1
                        });
                    out.push(Extract { slot, ..e });
                }
                None => ok = false,
            }
        }
        (ok.then_some(out), vars, js)
    }

    fn extract(&mut self, item: &Node, step: u16) -> Option<(Extract, String)> {
        let what = "an extract";
        let f = read::table(self.s, item, what, &EXTRACT_KEYS)?;
        let var = f.require(self.s, "var", what).and_then(|n| {
            let t = read::string(self.s, n, "`var`")?;
            if !is_ident(t) {
                self.s.hint(
                    n.pos,
                    format!("'{t}' is not a variable name"),
                    "letters, digits, '_' and '-'",
                );
                return None;
            }
            Some(t.to_owned())
        });
        let from = self.one_of(&f, &EXTRACT_FROM, what)?;
        let node = f.get(from)?;
        let group = f.get("group");
        if let (Some(g), false) = (group, from == "regex") {
            self.s.err(g.pos, "`group` applies to `regex`");
            return None;
        }
        let source = match from {
            "json" => ExtractFrom::Json(self.json_path(node)?),
            "header" => ExtractFrom::Header(self.header_name(node)?),
            "cookie" => ExtractFrom::Cookie(read::string(self.s, node, "`cookie`")?.to_owned()),
            _ => {
                let re = self.regex(node)?;
                let groups = re.captures_len() - 1;
                let g = match group {
                    Some(g) => {
                        let g = read::uint(self.s, g, "`group`", 0)? as usize;
                        if g > groups {
                            self.s.err(
                                f.get("group")?.pos,
                                format!("the regex has {groups} capture groups, not {g}"),
                            );
                            return None;
                        }
                        g
                    }
                    None => usize::from(groups > 0),
                };
                ExtractFrom::Regex(re, g)
            }
        };
        let var = var?;
        self.counters.push((step, format!("extract {var}")));
        Some((
            Extract {
                slot: 0,
                from: source,
                counter: self.counters.len() - 1,
            },
            var,
        ))
    }

    /// Exactly one of `keys` must be present; returns it.
    fn one_of(
        &mut self,
        f: &Fields<'_>,
        keys: &[&'static str],
        what: &str,
    ) -> Option<&'static str> {
        let mut given: Vec<(&'static str, Pos)> = keys
            .iter()
            .filter_map(|k| f.key_pos(k).map(|p| (*k, p)))
            .collect();
        given.sort_by_key(|(_, p)| *p);
        let list = keys
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        match given.as_slice() {
            [] => {
                self.s.err(f.pos, format!("{what} needs one of {list}"));
                None
            }
            [(k, _)] => Some(k),
            [(first, _), rest @ ..] => {
                for (k, p) in rest {
                    self.s.hint(
                        *p,
                        format!(
                            "`{k}` and `{first}` in one {}",
                            what.trim_start_matches("a ").trim_start_matches("an ")
                        ),
                        format!("{what} takes one of {list}; write a separate one for each"),
                    );
                }
                None
            }
        }
    }

    fn json_path(&mut self, node: &Node) -> Option<JsonPath> {
        let t = read::string(self.s, node, "`json`")?;
        match JsonPath::parse(t) {
            Ok(p) => Some(p),
            Err((offset, msg)) => {
                self.s.hint(
                    node.pos_in(offset),
                    format!("bad JSON path '{t}': {msg}"),
                    "supported: $, .key, [\"key\"], [index], nested",
                );
                None
            }
        }
    }

    fn regex(&mut self, node: &Node) -> Option<Regex> {
        let t = read::string(self.s, node, "`regex`")?;
        match Regex::new(t) {
            Ok(r) => Some(r),
            Err(e) => {
                let detail = e.to_string();
                let last = detail.lines().last().unwrap_or("").trim();
                let last = last.strip_prefix("error: ").unwrap_or(last);
                self.s.err(node.pos, format!("bad regex '{t}': {last}"));
                None
            }
        }
    }

    fn header_name(&mut self, node: &Node) -> Option<String> {
        let t = read::string(self.s, node, "`header`")?;
        if !is_token(t) {
            self.s.err(node.pos, format!("'{t}' is not a header name"));
            return None;
        }
        Some(t.to_owned())
    }

    fn checks(&mut self, f: &Fields<'_>, step: u16) -> (Option<Vec<Check>>, Vec<Value>) {
        let mut out = Vec::new();
        let mut js = Vec::new();
        let Some(n) = f.get("check") else {
            return (Some(out), js);
        };
        let Some(items) = read::list(self.s, n, "`check`") else {
            return (None, js);
        };
        let mut ok = true;
        for item in items {
            match self.check(item) {
                Some((kind, name)) => {
                    js.push(Value::String(name.clone()));
                    self.counters.push((step, name));
                    out.push(Check {
                        kind,
                        counter: self.counters.len() - 1,
                    });
                }
                None => ok = false,
            }
        }
        (ok.then_some(out), js)
    }

    fn check(&mut self, item: &Node) -> Option<(CheckKind, String)> {
        let what = "a check";
        let f = read::table(self.s, item, what, &CHECK_KEYS)?;
        let kind = self.one_of(&f, &CHECK_KINDS, what)?;
        for (extra, allowed) in [
            ("equals", &["json", "header"][..]),
            ("contains", &["header"]),
        ] {
            if let (Some(p), false) = (f.key_pos(extra), allowed.contains(&kind)) {
                self.s.err(
                    p,
                    format!(
                        "`{extra}` goes with {}",
                        allowed
                            .iter()
                            .map(|a| format!("`{a}`"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                );
                return None;
            }
        }
        let node = f.get(kind)?;
        let status = |b: &mut Self, n: &Node| -> Option<u16> {
            let v = read::uint(b.s, n, "a status", 100)?;
            if v > 599 {
                b.s.err(n.pos, format!("{v} is not an HTTP status (100–599)"));
                return None;
            }
            Some(v as u16)
        };
        Some(match kind {
            "status" => {
                let s = status(self, node)?;
                (CheckKind::Status(s), format!("status == {s}"))
            }
            "status_in" => {
                let items = read::list(self.s, node, "`status_in`")?;
                if items.is_empty() {
                    self.s.err(node.pos, "`status_in` is empty");
                    return None;
                }
                let v: Vec<u16> = items
                    .iter()
                    .map(|i| status(self, i))
                    .collect::<Option<_>>()?;
                let shown = v.iter().map(u16::to_string).collect::<Vec<_>>().join(", ");
                (CheckKind::StatusIn(v), format!("status in [{shown}]"))
            }
            "body_contains" => {
                let t = read::string(self.s, node, "`body_contains`")?;
                if t.is_empty() {
                    self.s.err(node.pos, "`body_contains` is empty");
                    return None;
                }
                let re = Regex::new(&regex::escape(t)).ok()?;
                (CheckKind::BodyContains(re), format!("body contains {t:?}"))
            }
            "regex" => {
                let re = self.regex(node)?;
                let name = format!("body matches /{}/", re.as_str());
                (CheckKind::BodyMatches(re), name)
            }
            "json" => {
                let p = self.json_path(node)?;
                match f.get("equals") {
                    Some(e) => {
                        let v = read::to_json(self.s, e)?;
                        let name = format!("json {p} == {v}");
                        (CheckKind::Json(p, Some(v)), name)
                    }
                    None => {
                        let name = format!("json {p} exists");
                        (CheckKind::Json(p, None), name)
                    }
                }
            }
            "header" => {
                let h = self.header_name(node)?;
                let (test, name) = match (f.get("equals"), f.get("contains")) {
                    (Some(_), Some(_)) => {
                        self.s.err(
                            f.key_pos("contains")?,
                            "`equals` and `contains` in one check; write two",
                        );
                        return None;
                    }
                    (Some(e), None) => {
                        let v = read::scalar_text(self.s, e, "`equals`")?;
                        let name = format!("header {h} == {v:?}");
                        (HeaderTest::Equals(v), name)
                    }
                    (None, Some(c)) => {
                        let v = read::scalar_text(self.s, c, "`contains`")?;
                        let name = format!("header {h} contains {v:?}");
                        (HeaderTest::Contains(v), name)
                    }
                    (None, None) => (HeaderTest::Exists, format!("header {h} exists")),
                };
                (CheckKind::Header(h, test), name)
            }
            _ => {
                let d = read::duration(self.s, node, "`max_latency`")?;
                (CheckKind::MaxLatency(d), format!("latency <= {}", show(d)))
            }
        })
    }
}
