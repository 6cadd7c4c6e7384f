//! Prometheus text exposition format (0.0.4) and OpenMetrics text (1.0):
//! samples, which are counters, a filter on metric names, and the turning of
//! matching samples into a [`Reading`].
//!
//! Both formats are `name{label="value",…} value [timestamp]` lines with
//! `# HELP`, `# TYPE` (and in OpenMetrics `# UNIT` and a final `# EOF`)
//! comments. A sample is a counter when its family is a counter
//! (`foo_total` in either format, OpenMetrics' family `foo` included), a
//! histogram's `_bucket`/`_count`/`_sum` or a summary's `_count`/`_sum`,
//! or, with no type said (no TYPE line, `untyped`, `unknown`), when its name
//! ends in `_total`. OpenMetrics' `_created` samples (the family's creation
//! time, not a value) are left out. Timestamps and exemplars are checked
//! and dropped: the sampler keeps its own clock.

use std::collections::{HashMap, HashSet};

use crate::reading::Reading;

use super::{excerpt, looks_like_markup};

/// One sample of an exposition.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    /// In the order the exposition gives them, unescaped.
    pub labels: Vec<(String, String)>,
    pub value: f64,
    /// Cumulative (see the module's doc): the sampler shows its rate.
    pub counter: bool,
}

/// A metric family's type, from its `# TYPE` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Counter,
    Gauge,
    Histogram,
    GaugeHistogram,
    Summary,
    Info,
    StateSet,
    /// `untyped` (0.0.4), `unknown` (OpenMetrics) or a type this parser does
    /// not know: says nothing.
    Unknown,
}

impl Type {
    fn from_word(word: &str) -> Type {
        match word.to_ascii_lowercase().as_str() {
            "counter" => Type::Counter,
            "gauge" => Type::Gauge,
            "histogram" => Type::Histogram,
            "gaugehistogram" => Type::GaugeHistogram,
            "summary" => Type::Summary,
            "info" => Type::Info,
            "stateset" => Type::StateSet,
            _ => Type::Unknown,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
            Type::Histogram => "histogram",
            Type::GaugeHistogram => "gaugehistogram",
            Type::Summary => "summary",
            Type::Info => "info",
            Type::StateSet => "stateset",
            Type::Unknown => "untyped",
        }
    }

    /// The suffixes a family of this type adds to its name in samples.
    fn suffixes(self) -> &'static [&'static str] {
        match self {
            Type::Counter => &["_total", "_created"],
            Type::Histogram => &["_bucket", "_count", "_sum", "_created"],
            Type::GaugeHistogram => &["_bucket", "_gcount", "_gsum"],
            Type::Summary => &["_count", "_sum", "_created"],
            Type::Info => &["_info"],
            Type::Gauge | Type::StateSet | Type::Unknown => &[],
        }
    }
}

/// What a sample line says, before its family's type is known.
struct Line {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

/// Parses an exposition. A malformed line is an error naming it
/// (`line 7: …`); lines after `# EOF` are ignored.
pub fn parse(body: &str) -> Result<Vec<Sample>, String> {
    if looks_like_markup(body) {
        return Err(
            "got an HTML page, not Prometheus text: the URL should be the exporter's metrics \
             endpoint (usually /metrics)"
                .to_string(),
        );
    }
    let mut types: HashMap<String, (Type, usize)> = HashMap::new();
    let mut lines: Vec<Line> = Vec::new();
    for (i, raw) in body.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_matches(|c| c == ' ' || c == '\t');
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim_start_matches([' ', '\t']);
            if comment == "EOF" {
                break;
            }
            if let Some(rest) = comment.strip_prefix("TYPE") {
                if rest.is_empty() || rest.starts_with([' ', '\t']) {
                    let (name, t) = type_line(rest).map_err(|e| format!("line {n}: {e}"))?;
                    match types.get(&name) {
                        Some(&(was, at)) if was != t => {
                            return Err(format!(
                                "line {n}: a second TYPE line for «{name}» says {}, \
                                 line {at} said {}",
                                t.word(),
                                was.word()
                            ))
                        }
                        Some(_) => {}
                        None => {
                            types.insert(name, (t, n));
                        }
                    }
                }
            }
            // HELP, UNIT and other comments say nothing this needs.
            continue;
        }
        lines.push(sample_line(line).map_err(|e| format!("line {n}: {e}"))?);
    }

    let mut samples = Vec::with_capacity(lines.len());
    for line in lines {
        let counter = match kind(&line.name, &types) {
            Some(counter) => counter,
            None => continue, // a `_created` sample
        };
        samples.push(Sample {
            name: line.name,
            labels: line.labels,
            value: line.value,
            counter,
        });
    }
    Ok(samples)
}

/// Whether the sample `name` is a counter, or `None` when it is to be left
/// out (a family's `_created`).
fn kind(name: &str, types: &HashMap<String, (Type, usize)>) -> Option<bool> {
    let said = |t: Type| t != Type::Unknown;
    if let Some(&(t, _)) = types.get(name) {
        if said(t) {
            // A family's own name as a sample: a counter in 0.0.4
            // (`foo_total` typed counter), a summary's quantiles, a gauge.
            return Some(t == Type::Counter);
        }
    }
    for (base, suffix) in [
        "_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info",
    ]
    .iter()
    .filter_map(|s| name.strip_suffix(s).map(|b| (b, *s)))
    {
        let Some(&(t, _)) = types.get(base) else {
            continue;
        };
        if !t.suffixes().contains(&suffix) {
            continue;
        }
        return match (t, suffix) {
            (_, "_created") => None,
            (Type::Counter | Type::Histogram | Type::Summary, _) => Some(true),
            _ => Some(false),
        };
    }
    Some(name.ends_with("_total"))
}

/// `# TYPE` line's rest: the family's name and type.
fn type_line(rest: &str) -> Result<(String, Type), String> {
    let rest = rest.trim_start_matches([' ', '\t']);
    let (name, after) = if rest.starts_with('"') {
        let mut cur = Cursor::new(rest);
        let name = cur.quoted("the metric name")?;
        (name, cur.rest())
    } else {
        let end = rest.find([' ', '\t']).unwrap_or(rest.len());
        (rest[..end].to_string(), &rest[end..])
    };
    if name.is_empty() {
        return Err("TYPE line without a metric name (expected `# TYPE name counter`)".into());
    }
    let word = after.trim_matches([' ', '\t']);
    if word.is_empty() {
        return Err(format!(
            "TYPE line for «{name}» without a type (expected `# TYPE {name} counter`, gauge, \
             histogram, summary, untyped …)"
        ));
    }
    Ok((name, Type::from_word(word)))
}

/// `name{labels} value [timestamp] [# exemplar]`.
fn sample_line(line: &str) -> Result<Line, String> {
    let mut cur = Cursor::new(line);
    let mut name = cur.name(true);
    if name.is_none() && cur.peek() != Some('{') {
        return Err(format!(
            "expected a metric name at the start of «{}»",
            excerpt(line, 60)
        ));
    }
    cur.blanks();
    let mut labels: Vec<(String, String)> = Vec::new();
    if cur.eat('{') {
        loop {
            cur.blanks();
            if cur.eat('}') {
                break;
            }
            if cur.at_end() {
                return Err(format!(
                    "'{{' without '}}' in «{}» (the line was cut short?)",
                    excerpt(line, 60)
                ));
            }
            let label = if cur.peek() == Some('"') {
                let quoted = cur.quoted("a quoted name")?;
                cur.blanks();
                if cur.peek() != Some('=') {
                    // `{"my.metric", …}`: a name outside the legacy charset.
                    if name.is_some() {
                        return Err(format!(
                            "«{}» has a metric name both before and inside the braces",
                            excerpt(line, 60)
                        ));
                    }
                    name = Some(quoted);
                    if !cur.eat(',') && cur.peek() != Some('}') {
                        return Err(after_label(&cur, line));
                    }
                    continue;
                }
                quoted
            } else {
                cur.name(false).ok_or_else(|| {
                    format!("expected a label name at «{}»", excerpt(cur.rest(), 40))
                })?
            };
            cur.blanks();
            if !cur.eat('=') {
                return Err(format!("label «{label}» has no '=' and value"));
            }
            cur.blanks();
            if cur.peek() != Some('"') {
                return Err(format!(
                    "label «{label}»'s value is not in double quotes (at «{}»)",
                    excerpt(cur.rest(), 40)
                ));
            }
            let value = cur.quoted(&format!("label «{label}»'s value"))?;
            if labels.iter().any(|(l, _)| *l == label) {
                return Err(format!("label «{label}» is given twice"));
            }
            labels.push((label, value));
            cur.blanks();
            if !cur.eat(',') && cur.peek() != Some('}') {
                return Err(after_label(&cur, line));
            }
        }
    }
    let Some(name) = name else {
        return Err(format!(
            "«{}» has no metric name inside its braces",
            excerpt(line, 60)
        ));
    };

    let mut tokens = cur.rest().split([' ', '\t']).filter(|t| !t.is_empty());
    let value = match tokens.next() {
        None => return Err(format!("«{name}» has no value (the line was cut short?)")),
        Some(t) => number(t)
            .ok_or_else(|| format!("the value «{}» of «{name}» is not a number", excerpt(t, 30)))?,
    };
    match tokens.next() {
        None => {}
        Some(t) if t.starts_with('#') => {} // an OpenMetrics exemplar
        Some(t) => {
            number(t).ok_or_else(|| {
                format!(
                    "the timestamp «{}» of «{name}» is not a number",
                    excerpt(t, 30)
                )
            })?;
            match tokens.next() {
                None => {}
                Some(t) if t.starts_with('#') => {}
                Some(t) => {
                    return Err(format!(
                        "unexpected «{}» after the value and timestamp of «{name}»",
                        excerpt(t, 30)
                    ))
                }
            }
        }
    }
    Ok(Line {
        name,
        labels,
        value,
    })
}

fn after_label(cur: &Cursor<'_>, line: &str) -> String {
    if cur.at_end() {
        format!(
            "'{{' without '}}' in «{}» (the line was cut short?)",
            excerpt(line, 60)
        )
    } else {
        format!(
            "expected ',' or '}}' between labels, found «{}»",
            excerpt(cur.rest(), 30)
        )
    }
}

/// A value or timestamp: a float as Go's ParseFloat reads it (exponents,
/// `NaN`, `+Inf`, `-Inf`).
fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok()
}

/// Reads a line left to right.
struct Cursor<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { s, at: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn at_end(&self) -> bool {
        self.at >= self.s.len()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn blanks(&mut self) {
        while self.eat(' ') || self.eat('\t') {}
    }

    /// A metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`) or, without colons, a
    /// label name.
    fn name(&mut self, colons: bool) -> Option<String> {
        let ok = |c: char, first: bool| {
            c == '_'
                || c.is_ascii_alphabetic()
                || (!first && c.is_ascii_digit())
                || (colons && c == ':')
        };
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(i, c)| !ok(c, i == 0))
            .map_or(rest.len(), |(i, _)| i);
        if len == 0 {
            return None;
        }
        self.at += len;
        Some(rest[..len].to_string())
    }

    /// A double-quoted string with `\\`, `\"` and `\n` escapes; `what` names
    /// it in errors.
    fn quoted(&mut self, what: &str) -> Result<String, String> {
        if !self.eat('"') {
            return Err(format!("{what} should start with '\"'"));
        }
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, '\\')) => out.push('\\'),
                    Some((_, '"')) => out.push('"'),
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, other)) => {
                        return Err(format!(
                            "unknown escape «\\{other}» in {what} (only \\\\, \\\" and \\n are allowed)"
                        ))
                    }
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err(format!(
            "{what} has no closing '\"' (the line was cut short?)"
        ))
    }
}

/// Which metric names to read: comma-separated glob patterns where `*`
/// matches any run of characters (`php_*,nginx_http_requests_total`); an
/// empty spec matches every name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    spec: String,
    patterns: Vec<String>,
}

impl Filter {
    pub fn new(spec: &str) -> Result<Filter, String> {
        let mut patterns = Vec::new();
        for p in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(c) = p.chars().find(|c| matches!(c, '{' | '}' | '=' | '"')) {
                return Err(format!(
                    "filter pattern «{p}» has «{c}»: a filter matches metric names only, not \
                     labels (e.g. `node_cpu_*,http_requests_total`)"
                ));
            }
            if let Some(c) = p.chars().find(|c| matches!(c, '?' | '[' | ']')) {
                return Err(format!(
                    "filter pattern «{p}» has «{c}»: only * is a wildcard (it matches any run \
                     of characters)"
                ));
            }
            if p.chars().any(char::is_whitespace) {
                return Err(format!(
                    "filter pattern «{p}» has a space: separate patterns with commas"
                ));
            }
            patterns.push(p.to_string());
        }
        Ok(Filter {
            spec: spec.trim().to_string(),
            patterns,
        })
    }

    /// Whether the metric `name` is read.
    pub fn matches(&self, name: &str) -> bool {
        self.patterns.is_empty() || self.patterns.iter().any(|p| glob(p, name))
    }

    fn describe(&self) -> String {
        if self.patterns.is_empty() {
            "(everything)".to_string()
        } else {
            format!("«{}»", self.spec)
        }
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of bytes.
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    // Where the last `*` was, and the name position it was tried against.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            // Let the `*` take one more byte and try again.
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

/// `name{a="b",c="d"}` with the labels in the sample's order and their
/// values escaped as in the exposition, or `name` alone. Names outside the
/// legacy charset are quoted (`{"my.metric",a="b"}`).
pub fn series_name(s: &Sample) -> String {
    let mut out = String::new();
    let legacy = is_legacy(&s.name, true);
    if legacy {
        out.push_str(&s.name);
        if s.labels.is_empty() {
            return out;
        }
        out.push('{');
    } else {
        out.push('{');
        push_quoted(&mut out, &s.name);
        if !s.labels.is_empty() {
            out.push(',');
        }
    }
    for (i, (label, value)) in s.labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if is_legacy(label, false) {
            out.push_str(label);
        } else {
            push_quoted(&mut out, label);
        }
        out.push('=');
        push_quoted(&mut out, value);
    }
    out.push('}');
    out
}

fn is_legacy(name: &str, colons: bool) -> bool {
    let mut cur = Cursor::new(name);
    cur.name(colons).is_some() && cur.at_end()
}

fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The samples whose metric name `filter` matches, one field each named by
/// [`series_name`] (unit `1`): counters as counters, the rest as gauges. A
/// series repeated in the exposition is read once (the first); a value that
/// is NaN or infinite is left out of this reading (it has no number to
/// show) but still counts as a series. More than `limit` matching series,
/// or none, is an error saying what to change.
pub fn to_reading(samples: &[Sample], filter: &Filter, limit: usize) -> Result<Reading, String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut per_name: HashMap<&str, usize> = HashMap::new();
    let mut r = Reading::new();
    for s in samples.iter().filter(|s| filter.matches(&s.name)) {
        let series = series_name(s);
        if seen.contains(&series) {
            continue;
        }
        *per_name.entry(&s.name).or_insert(0) += 1;
        if s.value.is_finite() {
            if s.counter {
                r.counter(series.clone(), "1", s.value);
            } else {
                r.gauge(series.clone(), "1", s.value);
            }
        }
        seen.insert(series);
    }

    if seen.is_empty() {
        if samples.is_empty() {
            return Err("the endpoint exposes no metrics (an empty page)".to_string());
        }
        let mut distinct: HashSet<&str> = HashSet::new();
        let names: Vec<&str> = samples
            .iter()
            .map(|s| s.name.as_str())
            .filter(|n| distinct.insert(n))
            .collect();
        let shown: Vec<&str> = names.iter().take(5).copied().collect();
        let more = match names.len().saturating_sub(5) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return Err(format!(
            "no metric matches the filter {}; the endpoint has {}{more}",
            filter.describe(),
            shown.join(", ")
        ));
    }
    if seen.len() > limit {
        let mut per_name: Vec<(&str, usize)> = per_name.into_iter().collect();
        per_name.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let top: Vec<String> = per_name
            .iter()
            .take(3)
            .map(|(n, c)| format!("{n} ({c})"))
            .collect();
        return Err(format!(
            "{} series match the filter {}, more than the limit of {limit}: name fewer \
             metrics in a narrower filter (the most series: {})",
            seen.len(),
            filter.describe(),
            top.join(", ")
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::Kind;

    const NODE: &str = include_str!("fixtures/node_exporter.txt");
    const PYTHON: &str = include_str!("fixtures/prom_client_python.txt");
    const OPENMETRICS: &str = include_str!("fixtures/openmetrics_python.txt");
    const FPM: &str = include_str!("fixtures/fpm_status_openmetrics.txt");

    fn find<'a>(samples: &'a [Sample], series: &str) -> &'a Sample {
        samples
            .iter()
            .find(|s| series_name(s) == series)
            .unwrap_or_else(|| panic!("no {series}"))
    }

    fn all(spec: &str) -> Filter {
        Filter::new(spec).unwrap()
    }

    #[test]
    fn real_node_exporter() {
        let samples = parse(NODE).unwrap();
        let lines = NODE
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count();
        assert_eq!(samples.len(), lines);
        let cpu = find(&samples, r#"node_cpu_seconds_total{cpu="0",mode="user"}"#);
        assert_eq!(cpu.value, 6259.52);
        assert!(cpu.counter);
        let mem = find(&samples, "node_memory_MemTotal_bytes");
        assert_eq!(mem.value, 2.5276502016e10);
        assert!(!mem.counter);
        // node_exporter types /proc/net/netstat's counters as untyped.
        assert!(!find(&samples, "node_netstat_Tcp_RetransSegs").counter);
        // A summary: quantiles are gauges, _sum and _count counters.
        assert!(!find(&samples, r#"go_gc_duration_seconds{quantile="0.5"}"#).counter);
        assert!(find(&samples, "go_gc_duration_seconds_sum").counter);
        assert!(find(&samples, "go_gc_duration_seconds_count").counter);
        let uname = samples
            .iter()
            .find(|s| s.name == "node_uname_info")
            .unwrap();
        assert_eq!(uname.labels[0], ("domainname".into(), "(none)".into()));
        assert_eq!(
            uname.labels.iter().find(|(l, _)| l == "version").unwrap().1,
            "#1 SMP PREEMPT_DYNAMIC @0"
        );
        assert!(
            find(
                &samples,
                r#"promhttp_metric_handler_requests_total{code="200"}"#
            )
            .counter
        );
    }

    #[test]
    fn real_python_client_0_0_4() {
        let samples = parse(PYTHON).unwrap();
        let get = |s: &str| find(&samples, s);
        let weird = r#"app_requests_total{method="POST",path="/say \"hi\"\\now\nnext"}"#;
        assert_eq!(get(weird).value, 3.0);
        assert_eq!(get(weird).labels[1].1, "/say \"hi\"\\now\nnext");
        assert!(get(weird).counter);
        assert_eq!(get("app_bytes_total").value, 1.5e12);
        // 0.0.4 has no _created in a counter family: the client types it gauge.
        assert!(!get(r#"app_requests_created{method="GET",path="/"}"#).counter);
        assert!(get("app_temperature_celsius{sensor=\"nan\"}")
            .value
            .is_nan());
        assert_eq!(
            get("app_temperature_celsius{sensor=\"hot\"}").value,
            f64::INFINITY
        );
        assert_eq!(
            get("app_temperature_celsius{sensor=\"cold\"}").value,
            f64::NEG_INFINITY
        );
        assert_eq!(
            get("app_temperature_celsius{sensor=\"tiny\"}").value,
            1.25e-7
        );
        let bucket = get(r#"app_request_duration_seconds_bucket{le="+Inf"}"#);
        assert_eq!(bucket.value, 6.0);
        assert!(bucket.counter);
        assert!(get("app_request_duration_seconds_count").counter);
        assert!(get("app_request_duration_seconds_sum").counter);
        assert!(get("app_job_seconds_count").counter);
        assert!(!get("app_queue_depth").counter);
        assert!(!get(r#"app_build_info{commit="abc123",version="1.2.3"}"#).counter);
    }

    #[test]
    fn real_openmetrics() {
        let samples = parse(OPENMETRICS).unwrap();
        assert!(samples.iter().all(|s| !s.name.ends_with("_created")));
        let get = |s: &str| find(&samples, s);
        assert!(get(r#"app_requests_total{method="GET",path="/"}"#).counter);
        assert_eq!(
            get(r#"app_requests_total{method="GET",path="/"}"#).value,
            1027.0
        );
        assert!(get("app_bytes_total").counter);
        assert!(get(r#"app_request_duration_seconds_bucket{le="0.005"}"#).counter);
        assert!(get("app_request_duration_seconds_sum").counter);
        assert!(get("app_job_seconds_count").counter);
        assert!(!get("app_queue_depth").counter);
        assert!(!get(r#"app_build_info{commit="abc123",version="1.2.3"}"#).counter);
        // Same samples as the 0.0.4 page, less its _created gauges.
        let old = parse(PYTHON).unwrap();
        let old: Vec<&Sample> = old
            .iter()
            .filter(|s| !s.name.ends_with("_created"))
            .collect();
        assert_eq!(old.len(), samples.len());
        for (a, b) in old.iter().zip(&samples) {
            assert_eq!(series_name(a), series_name(b));
            assert_eq!(a.counter, b.counter, "{}", a.name);
        }
    }

    #[test]
    fn real_php_fpm_openmetrics() {
        // php-fpm's counters lack _total and one TYPE comes before its HELP.
        let samples = parse(FPM).unwrap();
        assert_eq!(samples.len(), 12);
        let get = |s: &str| find(&samples, s);
        assert!(get("phpfpm_accepted_connections").counter);
        assert!(get("phpfpm_max_children_reached").counter);
        assert!(!get("phpfpm_listen_queue").counter);
        assert_eq!(get("phpfpm_listen_queue_length").value, 4096.0);
        assert!(!get("phpfpm_listen_queue_length").counter);
    }

    #[test]
    fn numbers_timestamps_and_exemplars() {
        let body = "a 1e3\nb -1.5E-2 1712345678901\nc +Inf\nd -Inf\ne NaN\nf 0x10\n\
                    g 12 1712345678.901\nh_bucket{le=\"0.1\"} 3 # {trace_id=\"x\"} 0.05 123\n\
                    i 7 # {} 1\nj 6.02e+23\nk .5\nl 1_000\n";
        let e = parse(body).unwrap_err();
        assert_eq!(e, "line 6: the value «0x10» of «f» is not a number");
        let e = parse(&body.replace("f 0x10\n", "")).unwrap_err();
        assert_eq!(e, "line 11: the value «1_000» of «l» is not a number");
        let samples = parse(&body.replace("f 0x10\n", "").replace("l 1_000\n", "")).unwrap();
        let v: Vec<f64> = samples.iter().map(|s| s.value).collect();
        assert_eq!(v[0], 1000.0);
        assert_eq!(v[1], -0.015);
        assert_eq!(v[2], f64::INFINITY);
        assert_eq!(v[3], f64::NEG_INFINITY);
        assert!(v[4].is_nan());
        assert_eq!(v[5], 12.0);
        assert_eq!(v[6], 3.0);
        assert_eq!(v[7], 7.0);
        assert_eq!(v[8], 6.02e23);
        assert_eq!(v[9], 0.5);
    }

    #[test]
    fn blanks_comments_crlf_and_eof() {
        let body = "\r\n# just a comment\r\n#HELP odd\r\n  \t\r\n# HELP x Help with \\n escapes\r\n\
                    # TYPE x gauge\r\n# UNIT x seconds\r\n\tx{a=\"1\"}\t 2 \r\n# EOF\r\ngarbage after eof\n";
        let samples = parse(body).unwrap();
        assert_eq!(samples.len(), 1);
        assert_eq!(samples[0].name, "x");
        assert_eq!(samples[0].labels, vec![("a".to_string(), "1".to_string())]);
        assert_eq!(samples[0].value, 2.0);
        assert!(parse("").unwrap().is_empty());
        assert!(parse("# EOF\n").unwrap().is_empty());
    }

    #[test]
    fn labels_in_all_their_forms() {
        let body = "a{} 1\nb{x=\"1\",} 2\nc { x = \"1\" , y=\"\" } 3\n\
                    d{path=\"C:\\\\dir\\\\\",q=\"say \\\"hi\\\"\",m=\"l1\\nl2\",u=\"é\u{1F600}\"} 4\n\
                    {\"my.metric\",\"my.label\"=\"v\"} 5\n{\"only.name\"} 6\nns:sub:m 7\n";
        let s = parse(body).unwrap();
        assert_eq!(series_name(&s[0]), "a");
        assert_eq!(series_name(&s[1]), "b{x=\"1\"}");
        assert_eq!(series_name(&s[2]), "c{x=\"1\",y=\"\"}");
        assert_eq!(
            s[3].labels,
            vec![
                ("path".to_string(), "C:\\dir\\".to_string()),
                ("q".to_string(), "say \"hi\"".to_string()),
                ("m".to_string(), "l1\nl2".to_string()),
                ("u".to_string(), "é\u{1F600}".to_string()),
            ]
        );
        // Re-escaped as it was written.
        assert_eq!(
            series_name(&s[3]),
            "d{path=\"C:\\\\dir\\\\\",q=\"say \\\"hi\\\"\",m=\"l1\\nl2\",u=\"é\u{1F600}\"}"
        );
        assert_eq!(s[4].name, "my.metric");
        assert_eq!(s[4].labels, vec![("my.label".to_string(), "v".to_string())]);
        assert_eq!(series_name(&s[4]), "{\"my.metric\",\"my.label\"=\"v\"}");
        assert_eq!(series_name(&s[5]), "{\"only.name\"}");
        assert_eq!(s[6].name, "ns:sub:m");
    }

    #[test]
    fn type_lines_decide_counters() {
        let body = "# TYPE requests counter\nrequests_total 1\nrequests_created 5\n\
                    # TYPE bytes_total gauge\nbytes_total 2\n\
                    hits_total 3\n\
                    # TYPE legacy_total untyped\nlegacy_total 4\n\
                    # TYPE odd_total unknown\nodd_total 4\n\
                    # TYPE depth gauge\ndepth_total 5\n\
                    # TYPE lat histogram\nlat_bucket{le=\"1\"} 1\nlat_count 1\nlat_sum 0.5\nlat_created 9\n\
                    # TYPE q summary\nq{quantile=\"0.9\"} 0.2\nq_count 3\nq_sum 1\n\
                    # TYPE gh gaugehistogram\ngh_bucket{le=\"1\"} 1\ngh_gcount 1\ngh_gsum 2\n\
                    # TYPE build info\nbuild_info{v=\"1\"} 1\n\
                    # TYPE st stateset\nst{st=\"a\"} 1\n\
                    # TYPE weird_total frobnicator\nweird_total 1\n\
                    # TYPE \"dotted.c\" counter\n{\"dotted.c_total\"} 1\n";
        let s = parse(body).unwrap();
        let counter = |n: &str| {
            s.iter()
                .find(|x| x.name == n)
                .unwrap_or_else(|| panic!("no {n}"))
                .counter
        };
        assert!(counter("requests_total"));
        assert!(!s.iter().any(|x| x.name.ends_with("_created")));
        assert!(!counter("bytes_total"), "TYPE gauge says otherwise");
        assert!(counter("hits_total"), "no TYPE: by the name");
        assert!(counter("legacy_total"), "untyped says nothing");
        assert!(counter("odd_total"), "unknown says nothing");
        assert!(counter("depth_total"), "not of the gauge family depth");
        assert!(counter("lat_bucket"));
        assert!(counter("lat_count"));
        assert!(counter("lat_sum"));
        assert!(!counter("q"));
        assert!(counter("q_count"));
        assert!(counter("q_sum"));
        assert!(!counter("gh_bucket"));
        assert!(!counter("gh_gcount"));
        assert!(!counter("gh_gsum"));
        assert!(!counter("build_info"));
        assert!(!counter("st"));
        assert!(counter("weird_total"), "an unknown type says nothing");
        assert!(counter("dotted.c_total"));
    }

    #[test]
    fn type_lines_misused() {
        let e = parse("# TYPE a counter\n# TYPE a gauge\na 1\n").unwrap_err();
        assert_eq!(
            e,
            "line 2: a second TYPE line for «a» says gauge, line 1 said counter"
        );
        assert!(parse("# TYPE a counter\n# TYPE a counter\na 1\n").is_ok());
        let e = parse("# TYPE a\n").unwrap_err();
        assert!(
            e.starts_with("line 1: TYPE line for «a» without a type"),
            "{e}"
        );
        let e = parse("# TYPE \n").unwrap_err();
        assert!(
            e.starts_with("line 1: TYPE line without a metric name"),
            "{e}"
        );
        // `# TYPEfoo` is only a comment.
        assert!(parse("# TYPEfoo\n").unwrap().is_empty());
    }

    #[test]
    fn malformed_lines_are_reported_by_number() {
        let cases = [
            ("a 1\nb\n", "line 2: «b» has no value (the line was cut short?)"),
            ("a 1\n\nb{x=\"1\"} one\n", "line 3: the value «one» of «b» is not a number"),
            ("a 1 noon\n", "line 1: the timestamp «noon» of «a» is not a number"),
            ("a 1 2 3\n", "line 1: unexpected «3» after the value and timestamp of «a»"),
            ("1a 1\n", "line 1: expected a metric name at the start of «1a 1»"),
            ("=1\n", "line 1: expected a metric name at the start of «=1»"),
            ("a{x=\"1\" 2\n", "line 1: expected ',' or '}' between labels, found «2»"),
            ("a{x=1} 2\n", "line 1: label «x»'s value is not in double quotes (at «1} 2»)"),
            ("a{x} 2\n", "line 1: label «x» has no '=' and value"),
            ("a{,} 2\n", "line 1: expected a label name at «,} 2»"),
            ("a{x=\"1\",x=\"2\"} 2\n", "line 1: label «x» is given twice"),
            (
                "a{x=\"\\t\"} 2\n",
                "line 1: unknown escape «\\t» in label «x»'s value (only \\\\, \\\" and \\n are allowed)",
            ),
            ("{} 1\n", "line 1: «{} 1» has no metric name inside its braces"),
            ("a{\"b\"} 1\n", "line 1: «a{\"b\"} 1» has a metric name both before and inside the braces"),
        ];
        for (body, want) in cases {
            assert_eq!(parse(body).unwrap_err(), want, "{body:?}");
        }
    }

    #[test]
    fn truncated_bodies() {
        // Cut inside a label value, after a label, inside the braces.
        let at = NODE.find("mode=\"iowait\"").unwrap() + 8;
        let e = parse(&NODE[..at]).unwrap_err();
        assert!(
            e.ends_with("has no closing '\"' (the line was cut short?)"),
            "{e}"
        );
        assert!(
            e.starts_with(&format!("line {}:", NODE[..at].lines().count())),
            "{e}"
        );
        let e = parse("a{x=\"1\",").unwrap_err();
        assert_eq!(
            e,
            "line 1: '{' without '}' in «a{x=\"1\",» (the line was cut short?)"
        );
        let e = parse("a{x=\"1\"").unwrap_err();
        assert_eq!(
            e,
            "line 1: '{' without '}' in «a{x=\"1\"» (the line was cut short?)"
        );
        let e = parse("a{x=\"1\\").unwrap_err();
        assert!(e.contains("no closing"), "{e}");
        // Cut after a name: no value.
        let at = NODE.find("\nnode_load5").unwrap() + "\nnode_load5".len();
        let e = parse(&NODE[..at]).unwrap_err();
        assert!(
            e.ends_with("«node_load5» has no value (the line was cut short?)"),
            "{e}"
        );
        // Cut inside a number: a shorter number, which no parser can tell.
        let at = NODE.find("\nnode_load1 ").unwrap() + "\nnode_load1 0.".len();
        assert!(parse(&NODE[..at]).is_ok());
    }

    #[test]
    fn html_and_garbage() {
        let e = parse("<!DOCTYPE html><html><body>Login</body></html>").unwrap_err();
        assert!(e.contains("HTML") && e.contains("/metrics"), "{e}");
        let e = parse("{\"status\":\"success\",\"data\":{}}").unwrap_err();
        assert!(e.starts_with("line 1: "), "{e}");
        let e = parse("Active connections: 1 \n").unwrap_err();
        assert!(
            e.starts_with("line 1: the value «connections:» of «Active»"),
            "{e}"
        );
        let e = parse(include_str!("fixtures/apache_auto_event.txt")).unwrap_err();
        assert_eq!(
            e,
            "line 1: expected a metric name at the start of «127.0.0.1»"
        );
    }

    #[test]
    fn filters() {
        assert!(all("").matches("anything"));
        assert!(all(" , ").matches("anything"));
        let f = all("php_*, nginx_http_requests_total");
        assert!(f.matches("php_fpm_up"));
        assert!(f.matches("php_"));
        assert!(f.matches("nginx_http_requests_total"));
        assert!(!f.matches("nginx_http_requests_total_x"));
        assert!(!f.matches("xphp_a"));
        let f = all("*_bytes,node_*_seconds_total,*");
        assert!(f.matches("x"));
        let f = all("node_*_seconds_*");
        assert!(f.matches("node_cpu_seconds_total"));
        assert!(f.matches("node_a_seconds_b_seconds_c"));
        assert!(!f.matches("node_cpu_seconds"));
        assert!(all("a*b*c").matches("abc"));
        assert!(all("a*b*c").matches("axxbyyc"));
        assert!(!all("a*b*c").matches("axxbyy"));
        assert!(all("**").matches(""));
        assert!(!all("a").matches(""));
        assert!(all("*é*").matches("xéy"));

        let e = Filter::new("node_cpu{mode=\"idle\"}").unwrap_err();
        assert!(e.contains("metric names only, not labels"), "{e}");
        let e = Filter::new("node_?").unwrap_err();
        assert!(e.contains("only * is a wildcard"), "{e}");
        let e = Filter::new("php_* nginx_*").unwrap_err();
        assert!(e.contains("separate patterns with commas"), "{e}");
    }

    #[test]
    fn series_names() {
        let s = Sample {
            name: "m".into(),
            labels: vec![("b".into(), "2".into()), ("a".into(), "x\"y\\z\n".into())],
            value: 1.0,
            counter: false,
        };
        assert_eq!(series_name(&s), r#"m{b="2",a="x\"y\\z\n"}"#);
        let s = Sample {
            labels: vec![],
            ..s
        };
        assert_eq!(series_name(&s), "m");
    }

    #[test]
    fn reading_from_a_filter() {
        let samples = parse(PYTHON).unwrap();
        let r = to_reading(&samples, &all("app_requests_total,app_queue_depth"), 10).unwrap();
        let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                r#"app_requests_total{method="GET",path="/"}"#,
                r#"app_requests_total{method="POST",path="/say \"hi\"\\now\nnext"}"#,
                "app_queue_depth",
            ]
        );
        assert!(r.fields.iter().all(|f| f.unit == "1"));
        assert_eq!(r.fields[0].kind, Kind::Counter);
        assert_eq!(r.fields[2].kind, Kind::Gauge);
        assert_eq!(r.get("app_queue_depth"), Some(7.0));

        // NaN and ±Inf have no number to show: left out, still counted.
        let r = to_reading(&samples, &all("app_temperature_*"), 4).unwrap();
        assert_eq!(r.fields.len(), 1);
        assert_eq!(
            r.get(r#"app_temperature_celsius{sensor="tiny"}"#),
            Some(1.25e-7)
        );
        let e = to_reading(&samples, &all("app_temperature_*"), 3).unwrap_err();
        assert!(e.starts_with("4 series match"), "{e}");
    }

    #[test]
    fn reading_limits_and_misses() {
        let samples = parse(NODE).unwrap();
        let e = to_reading(&samples, &all(""), 100).unwrap_err();
        let n = samples.len();
        assert!(
            e.starts_with(&format!(
                "{n} series match the filter (everything), more than the limit of 100"
            )),
            "{e}"
        );
        assert!(e.contains("narrower filter"), "{e}");
        assert!(e.contains("node_cpu_seconds_total (16)"), "{e}");

        let e = to_reading(&samples, &all("nginx_*,php_*"), 100).unwrap_err();
        assert!(e.starts_with("no metric matches the filter «nginx_*,php_*»; the endpoint has go_gc_duration_seconds, "), "{e}");
        assert!(e.contains(" more"), "{e}");

        let e = to_reading(&[], &all(""), 100).unwrap_err();
        assert!(e.contains("no metrics"), "{e}");

        let r = to_reading(&samples, &all("node_load*"), 3).unwrap();
        assert_eq!(r.fields.len(), 3);
        assert_eq!(r.get("node_load1"), Some(0.45));

        // A repeated series is read once.
        let samples = parse("a 1\na 2\nb{x=\"1\"} 3\nb{x=\"1\"} 4\n").unwrap();
        let r = to_reading(&samples, &all(""), 2).unwrap();
        assert_eq!(r.get("a"), Some(1.0));
        assert_eq!(r.get("b{x=\"1\"}"), Some(3.0));
        assert_eq!(r.fields.len(), 2);

        let e = to_reading(&samples, &all("zzz"), 2).unwrap_err();
        assert_eq!(
            e,
            "no metric matches the filter «zzz»; the endpoint has a, b"
        );
    }
}
