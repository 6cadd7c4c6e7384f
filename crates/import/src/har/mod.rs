//! `yace import har`: a browser's capture (HAR 1.2) → a scenario file.
//!
//! One journey of the requests to one host (the first page's, or
//! `--host`), in the order they started; static assets and other hosts
//! left out unless asked for; think times from the gaps between requests;
//! request headers kept but for hop-by-hop ones and the browser's own
//! metadata; cookies that responses set left to each user's jar, the
//! others (and Authorization and other credentials) in `[vars]`; and
//! values the server handed out replaced by variables (see [`detect`]).

mod detect;
mod entry;

use crate::json;
use crate::text::{duration_text, form_pairs, quoted};
use crate::write::{Body, Check, Doc, Extract, Step};
use crate::{Error, Format, Output};
pub(crate) use detect::var_name;
use detect::{candidate, Loc, Req, ReqBody};
use entry::{Entry, Origin};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What `yace import har` keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarOptions {
    /// Keep static assets (images, CSS, scripts, fonts, media) as steps.
    pub keep_assets: bool,
    /// Write the requests to other hosts too, as commented-out steps (a
    /// run has one target).
    pub all_hosts: bool,
    /// The host to keep (`host` or `host:port`); default: the first
    /// page's.
    pub host: Option<String>,
    pub format: Format,
    /// The longest think time kept, ms (longer pauses are cut to it); 0:
    /// no think times.
    pub max_think_ms: u64,
}

impl Default for HarOptions {
    fn default() -> Self {
        HarOptions {
            keep_assets: false,
            all_hosts: false,
            host: None,
            format: Format::Toml,
            max_think_ms: 30_000,
        }
    }
}

/// Request headers never kept: hop-by-hop, written by yace itself, or an
/// HTTP/2 pseudo-header.
const HOP: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

/// The browser's own metadata and cache state: not the application's.
const NOISE: &[&str] = &[
    "upgrade-insecure-requests",
    "sec-gpc",
    "dnt",
    "priority",
    "purpose",
    "sec-purpose",
    "x-client-data",
    "cache-control",
    "pragma",
    "if-none-match",
    "if-modified-since",
    "if-range",
];

fn dropped_header(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.starts_with(':')
        || l.starts_with("sec-ch-")
        || l.starts_with("sec-fetch-")
        || HOP.contains(&l.as_str())
        || NOISE.contains(&l.as_str())
}

/// One piece of what a variable is, for the notes.
struct Found {
    var: String,
    step: usize,
    from: &'static str,
    uses: Vec<usize>,
}

pub(crate) fn import(text: &str, opts: &HarOptions) -> Result<Output, Error> {
    let entries = entry::read(text)?;
    if entries.is_empty() {
        return Err(Error::new(
            "the HAR file has no requests (log.entries is empty)",
        ));
    }
    let origin = target_origin(&entries, opts)?;
    let mut notes = Vec::new();
    let mut warnings = Vec::new();

    // Which entries become steps.
    let (mut assets, mut failed, mut not_http) = (0, 0, 0);
    let mut hosts: BTreeMap<String, usize> = BTreeMap::new();
    let mut live: Vec<&Entry> = Vec::new();
    let mut others: Vec<&Entry> = Vec::new();
    for e in &entries {
        match &e.origin {
            None => not_http += 1,
            Some(_) if e.status == 0 => failed += 1,
            Some(_) if !opts.keep_assets && e.is_asset() => assets += 1,
            Some(o) if *o != origin => {
                let shown = if o.host == origin.host {
                    o.base()
                } else {
                    o.name()
                };
                *hosts.entry(shown).or_default() += 1;
                others.push(e);
            }
            Some(_) => {
                if literal_braces(e) {
                    warnings.push(format!(
                        "request {} ({} {}) holds '{{{{', which a scenario reads as a template: it \
                         is written commented out",
                        e.n, e.method, e.target
                    ));
                    others.push(e);
                } else {
                    live.push(e);
                }
            }
        }
    }
    let mut left_out = Vec::new();
    if assets > 0 {
        left_out.push(format!(
            "{assets} static asset{} (images, CSS, scripts, fonts; --assets keep keeps them)",
            plural(assets)
        ));
    }
    let other_count: usize = hosts.values().sum();
    if other_count > 0 {
        let list: Vec<String> = hosts.iter().map(|(h, n)| format!("{h} {n}")).collect();
        left_out.push(format!(
            "{other_count} to other hosts ({}; {})",
            list.join(", "),
            if opts.all_hosts {
                "written as commented-out steps: a run has one target"
            } else {
                "--all-hosts lists them, commented out: a run has one target"
            }
        ));
    }
    if failed > 0 {
        left_out.push(format!(
            "{failed} that got no response (blocked, failed or cancelled)"
        ));
    }
    if not_http > 0 {
        left_out.push(format!("{not_http} not http(s) (data:, blob:, websockets)"));
    }
    if live.is_empty() {
        return Err(Error::new(format!(
            "nothing to import: no request to {} is left{}",
            origin.name(),
            if left_out.is_empty() {
                String::new()
            } else {
                format!(" ({})", left_out.join("; "))
            }
        )));
    }
    notes.push(format!(
        "imported {} of {} requests, to {}, as steps{}",
        live.len(),
        entries.len(),
        origin.base(),
        if left_out.is_empty() {
            String::new()
        } else {
            format!("; left out: {}", left_out.join("; "))
        }
    ));

    // Requests as editable parts; cookies the jar will send are left out.
    let mut dropped: BTreeMap<String, ()> = BTreeMap::new();
    let mut jar: Vec<String> = Vec::new();
    let mut jar_used: Vec<String> = Vec::new();
    let mut reqs = Vec::new();
    let mut no_body = 0;
    let mut any_cookie = false;
    for e in &live {
        let mut headers: Vec<(String, String)> = Vec::new();
        for (n, v) in &e.req_headers {
            if dropped_header(n) {
                dropped.insert(n.to_ascii_lowercase(), ());
                continue;
            }
            let cookie = n.eq_ignore_ascii_case("cookie");
            any_cookie |= cookie;
            match headers.iter_mut().find(|(h, _)| h.eq_ignore_ascii_case(n)) {
                Some((_, old)) => {
                    old.push_str(if cookie { "; " } else { ", " });
                    old.push_str(v);
                }
                None => headers.push((n.clone(), v.clone())),
            }
        }
        if let Some(i) = headers
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case("cookie"))
        {
            let kept: Vec<&str> = headers[i]
                .1
                .split(';')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .filter(|c| {
                    let name = c.split('=').next().unwrap_or("");
                    let in_jar = jar.iter().any(|j| j == name);
                    if in_jar && !jar_used.iter().any(|j| j == name) {
                        jar_used.push(name.to_owned());
                    }
                    !in_jar
                })
                .collect();
            if kept.is_empty() {
                headers.remove(i);
            } else {
                headers[i].1 = kept.join("; ");
            }
        }
        for (name, _) in &e.set_cookies {
            any_cookie = true;
            if !jar.contains(name) {
                jar.push(name.clone());
            }
        }
        if e.body.is_none()
            && (200..300).contains(&e.status)
            && e.status != 204
            && e.method != "HEAD"
        {
            no_body += 1;
        }
        reqs.push(Req::new(&e.target, headers, request_body(e)));
    }

    // Values from earlier responses.
    let n = live.len();
    let resps: Vec<detect::Resp<'_>> = live.iter().map(|e| detect::Resp::new(e)).collect();
    let mut assigned: HashMap<String, String> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut extracts: Vec<Vec<Extract>> = vec![Vec::new(); n];
    let mut used: HashSet<String> = HashSet::new();
    let mut found: Vec<Found> = Vec::new();
    let new_var = |used: &mut HashSet<String>, preferred: &str, fallback: &str| {
        let base = if var_name(preferred) != "value" || fallback.is_empty() {
            var_name(preferred)
        } else {
            var_name(fallback)
        };
        let mut name = base.clone();
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        used.insert(name.clone());
        name
    };
    for (j, req) in reqs.iter_mut().enumerate() {
        let slots = req.slots();
        let mut whole = false;
        let dynamic_part = slots.iter().any(|(l, v, _)| {
            matches!(l, Loc::Seg(_) | Loc::Query(_))
                && candidate(v, l)
                && !seen.contains(v)
                && !assigned.contains_key(v)
        });
        if dynamic_part {
            let target = req.url();
            for i in (0..j).rev() {
                if let Some((mut ex, name)) =
                    detect::find(&resps[i], &target, &Loc::Target, Some(&target))
                {
                    let var = new_var(&mut used, &name, "location");
                    ex.var = var.clone();
                    extracts[i].push(ex);
                    req.replace(&Loc::Target, &target, &var);
                    found.push(Found {
                        var,
                        step: i,
                        from: "header",
                        uses: vec![j],
                    });
                    whole = true;
                    break;
                }
            }
        }
        for (loc, v, side) in &slots {
            if matches!(loc, Loc::Target) || (whole && matches!(loc, Loc::Seg(_) | Loc::Query(_))) {
                continue;
            }
            if !candidate(v, loc) {
                continue;
            }
            let var = if let Some(var) = assigned.get(v) {
                var.clone()
            } else if seen.contains(v) {
                continue;
            } else {
                let mut hit = None;
                for i in (0..j).rev() {
                    if let Some(f) = detect::find(&resps[i], v, loc, None) {
                        hit = Some((i, f));
                        break;
                    }
                }
                let Some((i, (mut ex, name))) = hit else {
                    continue;
                };
                let var = new_var(&mut used, &name, side);
                ex.var = var.clone();
                found.push(Found {
                    var: var.clone(),
                    step: i,
                    from: ex.from,
                    uses: Vec::new(),
                });
                extracts[i].push(ex);
                assigned.insert(v.clone(), var.clone());
                var
            };
            if let Some(f) = found.iter_mut().find(|f| f.var == var) {
                if !f.uses.contains(&j) {
                    f.uses.push(j);
                }
            }
            req.replace(loc, v, &var);
        }
        for (_, v, _) in slots {
            seen.insert(v);
        }
    }

    // Credentials that no response explains (headers, form and JSON
    // fields, query parameters named like secrets): [vars].
    let secrets = plan::secrets::Secrets::default();
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut cred_names: Vec<String> = Vec::new();
    let mut to_var = |name: &str, value: &mut String, used: &mut HashSet<String>| {
        if !secrets.header_is_secret(name) || value.is_empty() || value.contains("{{") {
            return;
        }
        let stem = var_name(name);
        let var = match vars
            .iter()
            .find(|(k, v)| v == value && k.starts_with(&stem))
        {
            Some((k, _)) => k.clone(),
            None => {
                let k = new_var(used, name, "");
                vars.push((k.clone(), value.clone()));
                k
            }
        };
        if !cred_names.iter().any(|c| c.eq_ignore_ascii_case(name)) {
            cred_names.push(name.to_owned());
        }
        *value = format!("{{{{{var}}}}}");
    };
    for r in &mut reqs {
        for (name, value) in &mut r.headers {
            to_var(name, value, &mut used);
        }
        if let Some(q) = &mut r.query {
            for (name, value) in q.iter_mut() {
                if let Some(v) = value {
                    to_var(name, v, &mut used);
                }
            }
        }
        match &mut r.body {
            ReqBody::Form(pairs) => {
                for (name, value) in pairs.iter_mut() {
                    to_var(name, value, &mut used);
                }
            }
            ReqBody::Json(j) => json_secrets(j, &mut |name, value| to_var(name, value, &mut used)),
            _ => {}
        }
    }

    // Think times: from the end of one step to the start of the next.
    let mut capped = Vec::new();
    let mut thinks: Vec<Option<u64>> = Vec::with_capacity(n);
    for k in 0..n {
        let gap = live
            .get(k + 1)
            .map(|next| next.start - (live[k].start + live[k].time))
            .filter(|g| g.is_finite())
            .unwrap_or(0.0);
        let ms = if gap < 200.0 {
            0
        } else if gap < 10_000.0 {
            ((gap / 100.0).round() * 100.0) as u64
        } else {
            ((gap / 1000.0).round() * 1000.0) as u64
        };
        let ms = if ms > opts.max_think_ms {
            if opts.max_think_ms > 0 {
                capped.push(format!("{} ({})", k + 1, duration_text(ms)));
            }
            opts.max_think_ms
        } else {
            ms
        };
        thinks.push((ms > 0).then_some(ms));
    }

    // Steps.
    let mut names: HashSet<String> = HashSet::new();
    let mut steps: Vec<(f64, Step, bool)> = Vec::new();
    for (k, (e, r)) in live.iter().zip(&mut reqs).enumerate() {
        let mut comments = vec![format!(
            "{}. {} {} → {}{}",
            k + 1,
            e.method,
            secrets.url(&e.url),
            e.status,
            if e.mime.is_empty() {
                String::new()
            } else {
                format!(" {}", e.mime)
            }
        )];
        if e.mime == "x-unknown" {
            comments[0] = comments[0].trim_end_matches(" x-unknown").to_owned();
        }
        let reads_body = extracts[k]
            .iter()
            .any(|x| x.from == "json" || x.from == "regex");
        if reads_body {
            let before = r.headers.len();
            r.headers
                .retain(|(h, _)| !h.eq_ignore_ascii_case("accept-encoding"));
            if r.headers.len() != before {
                comments.push(
                    "Accept-Encoding left out: the extracts read the body, which yace does not \
                     decompress"
                        .to_owned(),
                );
            }
        }
        let path = e.target.split('?').next().unwrap_or("/");
        let short: String = if path.chars().count() > 60 {
            format!("{}…", path.chars().take(59).collect::<String>())
        } else {
            path.to_owned()
        };
        let mut name = format!("{} {short}", e.method);
        let mut c = 2;
        while names.contains(&name) {
            name = format!("{} {short} #{c}", e.method);
            c += 1;
        }
        names.insert(name.clone());
        let check = if e.status == 304 {
            Check::StatusIn(vec![200, 304])
        } else {
            Check::Status(e.status)
        };
        let body = match std::mem::replace(&mut r.body, ReqBody::None) {
            ReqBody::None => Body::None,
            ReqBody::Form(p) => Body::Form(p),
            ReqBody::Raw(t) => Body::Raw(t),
            ReqBody::Json(j) => {
                if !r.json_number_template && j.to_toml().is_some() {
                    Body::Json(j)
                } else if r.json_number_template || j.to_json().contains("{{") {
                    Body::Raw(j.to_json())
                } else {
                    Body::Raw(e.post.as_ref().map(|p| p.text.clone()).unwrap_or_default())
                }
            }
        };
        steps.push((
            e.start,
            Step {
                comments,
                name,
                method: e.method.clone(),
                url: r.url(),
                headers: r.headers.clone(),
                body,
                extract: extracts[k].clone(),
                check: vec![check],
                think: thinks[k].map(duration_text),
            },
            true,
        ));
    }
    if opts.all_hosts {
        for e in &others {
            let mut headers = Vec::new();
            for (n, v) in &e.req_headers {
                if !dropped_header(n)
                    && !headers
                        .iter()
                        .any(|(h, _): &(String, String)| h.eq_ignore_ascii_case(n))
                {
                    let v = if secrets.header_is_secret(n) {
                        "***".to_owned()
                    } else {
                        v.clone()
                    };
                    headers.push((n.clone(), v));
                }
            }
            let body = match &e.post {
                Some(p) if !p.text.is_empty() => Body::Raw(p.text.clone()),
                _ => Body::None,
            };
            steps.push((
                e.start,
                Step {
                    comments: vec![format!(
                        "{} {} → {}: another host, not part of this run (a run has one target)",
                        e.method,
                        secrets.url(&e.url),
                        e.status
                    )],
                    name: format!("{} {}", e.method, e.target.split('?').next().unwrap_or("/")),
                    method: e.method.clone(),
                    url: secrets.url(&e.url),
                    headers,
                    body,
                    extract: Vec::new(),
                    check: Vec::new(),
                    think: None,
                },
                false,
            ));
        }
        steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    }

    // Headers every step sends alike go to the top.
    let mut common: Vec<(String, String)> = Vec::new();
    let live_steps: Vec<&Step> = steps.iter().filter(|s| s.2).map(|s| &s.1).collect();
    if live_steps.len() >= 2 {
        for (h, v) in &live_steps[0].headers {
            let everywhere = live_steps.iter().all(|s| {
                s.headers
                    .iter()
                    .any(|(h2, v2)| h2.eq_ignore_ascii_case(h) && v2 == v)
            });
            let safe = !v.contains("{{") || vars.iter().any(|(k, _)| *v == format!("{{{{{k}}}}}"));
            if everywhere && safe {
                common.push((h.clone(), v.clone()));
            }
        }
    }
    let is_var = |v: &str| vars.iter().any(|(k, _)| v == format!("{{{{{k}}}}}"));
    for (_, s, live) in &mut steps {
        if *live {
            s.headers.retain(|(h, v)| {
                !common
                    .iter()
                    .any(|(c, cv)| c.eq_ignore_ascii_case(h) && cv == v)
            });
            for (h, v) in &s.headers {
                if is_var(v) {
                    s.comments.push(format!("{h}: *** (captured: see [vars])"));
                }
            }
        }
    }

    // Notes.
    const SHOWN: usize = 20;
    for f in found.iter().take(SHOWN) {
        let uses: Vec<String> = f.uses.iter().map(|u| (u + 1).to_string()).collect();
        notes.push(format!(
            "{{{{{}}}}}: handed out by step {} ({}, extracted by {}), sent back by step{} {}",
            f.var,
            f.step + 1,
            steps_name(&steps, f.step),
            f.from,
            plural(f.uses.len()),
            uses.join(", ")
        ));
    }
    if found.len() > SHOWN {
        notes.push(format!(
            "… and {} more variables (their extracts are in the file)",
            found.len() - SHOWN
        ));
    }
    if !jar_used.is_empty() {
        notes.push(format!(
            "cookies that responses set ({}) are left to each user's cookie jar",
            jar_used.join(", ")
        ));
    }
    if !vars.is_empty() {
        notes.push(format!(
            "the scenario keeps the credentials the browser sent ({}) in [vars], in clear: yace \
             shows them as *** in its outputs, but the file has them; a session may still be \
             valid, so keep the file private",
            cred_names.join(", ")
        ));
    }
    if !dropped.is_empty() {
        let list: Vec<&str> = dropped.keys().map(String::as_str).collect();
        notes.push(format!(
            "request headers left out (hop-by-hop, HTTP/2 pseudo-headers, the browser's own \
             metadata and cache state): {}",
            list.join(", ")
        ));
    }
    if !capped.is_empty() {
        notes.push(format!(
            "think times longer than {} were cut to it, after step{} {}",
            duration_text(opts.max_think_ms),
            plural(capped.len()),
            capped.join(", ")
        ));
    }
    if no_body > 0 {
        notes.push(format!(
            "{no_body} response{} in the HAR have no body: values they carried cannot be traced \
             (export the HAR with content)",
            plural(no_body)
        ));
    }
    if !any_cookie {
        notes.push(
            "the HAR has no cookies: if the site needs a login, it may be a sanitized export \
             (Chrome leaves out cookies and Authorization unless you choose \"Export HAR (with \
             sensitive data)\")"
                .to_owned(),
        );
    }

    // The file.
    let think_total: u64 = thinks.iter().flatten().sum();
    let hold_s = (think_total / 1000 + n as u64).max(30).div_ceil(10) * 10;
    let mut vars_comments = Vec::new();
    if !vars.is_empty() {
        vars_comments.push(format!(
            "Credentials the browser sent ({}), in clear: keep this file private.",
            cred_names.join(", ")
        ));
        vars_comments.push(
            "yace shows them as *** in its summary, --dry-run and results. A captured session"
                .to_owned(),
        );
        vars_comments.push("or token expires: put fresh values here before a run.".to_owned());
    }
    let doc = Doc {
        comments: vec![
            format!(
                "Imported by `yace import har`: {} of {} requests, to {}.",
                n,
                entries.len(),
                origin.base()
            ),
            "Check it with `yace run -f FILE --dry-run`; run it against another base with"
                .to_owned(),
            "`yace run -f FILE http://host:port` (the URL replaces `base`).".to_owned(),
        ],
        base: origin.base(),
        headers: common,
        load: vec![
            ("users".into(), "1".into()),
            ("hold".into(), quoted(&format!("{hold_s}s"))),
        ],
        load_comments: vec![
            "One user walks the recorded journey, with its think times. For load, raise".to_owned(),
            "`users` and add `ramp_up` (docs/scenario.md).".to_owned(),
        ],
        vars,
        vars_comments,
        steps: steps.into_iter().map(|(_, s, live)| (s, live)).collect(),
        trailer: Vec::new(),
    };
    Ok(Output {
        text: doc.write(opts.format),
        warnings,
        notes,
    })
}

/// Calls `f` on every string of `j` under a key (its name and value).
fn json_secrets(j: &mut json::J, f: &mut dyn FnMut(&str, &mut String)) {
    match j {
        json::J::Obj(items) => {
            for (k, v) in items.iter_mut() {
                match v {
                    json::J::Str(s) => f(k, s),
                    other => json_secrets(other, f),
                }
            }
        }
        json::J::Arr(items) => {
            for v in items {
                json_secrets(v, f);
            }
        }
        _ => {}
    }
}

fn steps_name(steps: &[(f64, Step, bool)], k: usize) -> String {
    steps
        .iter()
        .filter(|s| s.2)
        .nth(k)
        .map_or_else(String::new, |s| format!("'{}'", s.1.name))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A literal `{{` in what would be a step: no scenario can say it.
fn literal_braces(e: &Entry) -> bool {
    e.target.contains("{{")
        || e.req_headers
            .iter()
            .any(|(n, v)| !dropped_header(n) && v.contains("{{"))
        || e.post.as_ref().is_some_and(|p| p.text.contains("{{"))
}

fn request_body(e: &Entry) -> ReqBody {
    let Some(p) = &e.post else {
        return ReqBody::None;
    };
    if p.text.is_empty() {
        return ReqBody::None;
    }
    let mime = p.mime.to_ascii_lowercase();
    if mime.contains("x-www-form-urlencoded") {
        if let Some(pairs) = form_pairs(&p.text) {
            let mut keys = HashSet::new();
            if pairs.iter().all(|(k, _)| keys.insert(k.clone())) {
                return ReqBody::Form(pairs);
            }
        }
        return ReqBody::Raw(p.text.clone());
    }
    let t = p.text.trim_start();
    if mime.contains("json") || t.starts_with('{') || t.starts_with('[') {
        if let Some(j) = json::parse(&p.text) {
            return ReqBody::Json(j);
        }
    }
    ReqBody::Raw(p.text.clone())
}

/// The host to keep: `--host`, else the first page's (the first HTML
/// document answered with a 2xx), else the first request's.
fn target_origin(entries: &[Entry], opts: &HarOptions) -> Result<Origin, Error> {
    let http: Vec<&Origin> = entries.iter().filter_map(|e| e.origin.as_ref()).collect();
    if http.is_empty() {
        return Err(Error::new(
            "the HAR file has no http:// or https:// request",
        ));
    }
    if let Some(h) = &opts.host {
        let want = h
            .trim()
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_ascii_lowercase();
        return http
            .iter()
            .find(|o| o.name() == want || o.host == want)
            .map(|o| (*o).clone())
            .ok_or_else(|| {
                let mut names: Vec<String> = http.iter().map(|o| o.name()).collect();
                names.sort();
                names.dedup();
                Error::new(format!(
                    "--host {h}: no request in the HAR goes there; its hosts are {}",
                    names.join(", ")
                ))
            });
    }
    let page = entries.iter().find(|e| {
        e.origin.is_some()
            && (200..300).contains(&e.status)
            && (e.mime == "text/html" || e.resource_type == "document")
    });
    Ok(page
        .and_then(|e| e.origin.clone())
        .unwrap_or_else(|| http[0].clone()))
}

#[cfg(test)]
mod tests;
