//! What the page's stream carries, built once per change for every
//! reader: the charts the report's renderer makes of the rows so far, as
//! a whole (`full`) and as the change since the version before (`tail`),
//! and at the end the report itself (`end`).
//!
//! A reader in step gets the tail (a few hundred bytes a second: each
//! line's newest point); one that was behind, or new, gets the whole
//! charts once and is in step again. So nothing queues up for a slow
//! reader: it skips the versions it missed.

use report::html::live::{self, Live};
use report::lang::Lang;
use serde_json::{json, Value};
use stats::{RunResult, SecondRow};
use std::sync::Arc;

/// The run as the page shows it before its first second.
#[derive(Debug, Clone)]
pub struct Run {
    /// The plan as outputs show it (redacted).
    pub plan: plan::Plan,
    pub threads: usize,
    pub cpus_allowed: usize,
    pub planned_s: Option<f64>,
    pub planned_requests: Option<u64>,
}

/// One event of the stream, shared by every reader it goes to.
pub type Event = Arc<[u8]>;

#[derive(Debug)]
pub struct Feed {
    run: Run,
    lang: Lang,
    rows: Vec<SecondRow>,
    result: Option<Box<RunResult>>,
    /// Grows with every change; a reader holds the version it was sent.
    version: u64,
    charts: Vec<report::html::Chart>,
    json: Vec<Value>,
    state: Value,
    /// The whole charts at `version`, made when a reader needs them.
    full: Option<Event>,
    /// From `version - 1` to `version`, when only figures changed.
    tail: Option<Event>,
    end: Option<Event>,
}

/// What a reader gets next.
#[derive(Debug)]
pub enum Next {
    /// An event, and the version the reader then holds.
    Event(Event, u64),
    /// The last event: the run has ended and this is its report.
    End(Event),
    /// Nothing new.
    Nothing,
}

impl Feed {
    pub fn new(run: Run, lang: Lang) -> Feed {
        let mut f = Feed {
            run,
            lang,
            rows: Vec::new(),
            result: None,
            version: 0,
            charts: Vec::new(),
            json: Vec::new(),
            state: Value::Null,
            full: None,
            tail: None,
            end: None,
        };
        f.rebuild();
        f
    }

    fn live(&self) -> Live<'_> {
        Live {
            plan: &self.run.plan,
            series: &self.rows,
            threads: self.run.threads,
            cpus_allowed: self.run.cpus_allowed,
            planned_s: self.run.planned_s,
            planned_requests: self.run.planned_requests,
            ended: self.result.as_deref(),
        }
    }

    /// More finished seconds.
    pub fn push(&mut self, rows: Vec<SecondRow>) {
        if rows.is_empty() || self.result.is_some() {
            return;
        }
        self.rows.extend(rows);
        self.rebuild();
    }

    /// The run has ended: the charts of its result, and its report.
    pub fn finish(&mut self, result: RunResult) {
        let mut html = Vec::new();
        report::html::report_in(&result, &mut html, self.lang).expect("writes to memory");
        let end = json!({
            "report": String::from_utf8(html).expect("the report is UTF-8"),
            "file": live::file_name(&result),
        });
        self.result = Some(Box::new(result));
        self.rows = Vec::new();
        self.rebuild();
        let mut end = end;
        end["status"] = self.state["status"].clone();
        end["cards"] = self.state["cards"].clone();
        self.end = Some(event("end", &end));
    }

    pub fn ended(&self) -> bool {
        self.end.is_some()
    }

    fn rebuild(&mut self) {
        let charts = live::charts(&self.live(), self.lang);
        let json: Vec<Value> = charts.iter().map(report::html::Chart::to_json).collect();
        let state = live::state(&self.live(), self.lang);
        self.tail = tails(&self.json, &json).map(|t| {
            let mut d = json!({"from": self.version, "v": self.version + 1, "tails": t});
            d["status"] = state["status"].clone();
            d["cards"] = state["cards"].clone();
            event("tail", &d)
        });
        self.version += 1;
        self.charts = charts;
        self.json = json;
        self.state = state;
        self.full = None;
    }

    fn full(&mut self) -> Event {
        if let Some(f) = &self.full {
            return f.clone();
        }
        let figures: serde_json::Map<String, Value> = self
            .charts
            .iter()
            .map(|c| (c.id.clone(), Value::from(live::figure(c, self.lang))))
            .collect();
        let mut d = json!({"v": self.version, "charts": self.json, "figures": figures});
        d["status"] = self.state["status"].clone();
        d["cards"] = self.state["cards"].clone();
        let e = event("full", &d);
        self.full = Some(e.clone());
        e
    }

    /// What a reader holding version `have` (0: nothing yet) gets next;
    /// `ended`: it was sent the end already.
    pub fn next(&mut self, have: u64, ended: bool) -> Next {
        if have < self.version {
            return match &self.tail {
                Some(t) if have + 1 == self.version => Next::Event(t.clone(), self.version),
                _ => Next::Event(self.full(), self.version),
            };
        }
        match &self.end {
            Some(e) if !ended => Next::End(e.clone()),
            _ => Next::Nothing,
        }
    }

    /// The page as it is now, with its controls.
    pub fn page(&self, controls: &live::Controls) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 * 1024);
        let version = env!("CARGO_PKG_VERSION");
        live::page_with(&mut out, &self.live(), self.lang, version, controls)
            .expect("writes to memory");
        out
    }
}

/// An event as the stream sends it. JSON holds no raw line break, so the
/// data is one line.
fn event(name: &str, data: &Value) -> Event {
    format!("event: {name}\ndata: {data}\n\n")
        .into_bytes()
        .into()
}

/// A chart without its figures: what must be the same for a tail to do.
fn shape(chart: &Value) -> Value {
    let mut c = chart.clone();
    if let Some(o) = c.as_object_mut() {
        o.remove("x");
    }
    if let Some(series) = c.get_mut("series").and_then(Value::as_array_mut) {
        for s in series.iter_mut().filter_map(Value::as_object_mut) {
            for k in ["values", "lo", "hi"] {
                if let Some(v) = s.get_mut(k) {
                    *v = Value::Bool(true);
                }
            }
        }
    }
    c
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Where two arrays start to differ (the shorter one's length when one
/// begins the other).
fn first_difference(a: &[Value], b: &[Value]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

/// What turns `old` charts into `new` when only their figures changed:
/// for each chart that changed, `{chart, at, x, series: [{values, lo,
/// hi}…]}` with each array's items from `at` on. None when the charts
/// are not the same charts with the same lines.
fn tails(old: &[Value], new: &[Value]) -> Option<Vec<Value>> {
    if old.len() != new.len() || old.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (i, (o, n)) in old.iter().zip(new).enumerate() {
        if shape(o) != shape(n) {
            return None;
        }
        let (os, ns) = (array(o, "series"), array(n, "series"));
        let mut pairs = vec![(array(o, "x"), array(n, "x"))];
        for (a, b) in os.iter().zip(ns) {
            for k in ["values", "lo", "hi"] {
                pairs.push((array(a, k), array(b, k)));
            }
        }
        if pairs.iter().all(|(a, b)| a == b) {
            continue;
        }
        let at = pairs
            .iter()
            .filter(|(a, b)| a != b)
            .map(|(a, b)| first_difference(a, b))
            .min()
            .unwrap_or(0);
        let from = |v: &Value, k: &str| Value::from(array(v, k).get(at..).unwrap_or(&[]).to_vec());
        let series: Vec<Value> = ns
            .iter()
            .map(|s| {
                let mut t = serde_json::Map::new();
                for k in ["values", "lo", "hi"] {
                    if s.get(k).is_some() {
                        t.insert(k.into(), from(s, k));
                    }
                }
                Value::Object(t)
            })
            .collect();
        out.push(json!({"chart": i, "at": at, "x": from(n, "x"), "series": series}));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(x: &[f64], v: &[f64], labels: &[&str]) -> Value {
        json!({
            "id": "throughput", "kind": "time", "x": x,
            "series": labels.iter().map(|l| json!({"label": l, "values": v})).collect::<Vec<_>>(),
        })
    }

    /// What the page's script does with a tail (assets/live.js).
    fn apply(old: &mut [Value], tails: &[Value]) {
        let splice = |to: &mut Value, at: usize, from: &Value| {
            let a = to.as_array_mut().unwrap();
            a.truncate(at);
            a.extend(from.as_array().unwrap().iter().cloned());
        };
        for t in tails {
            let c = &mut old[t["chart"].as_u64().unwrap() as usize];
            let at = t["at"].as_u64().unwrap() as usize;
            splice(&mut c["x"], at, &t["x"]);
            for (k, s) in t["series"].as_array().unwrap().iter().enumerate() {
                for key in ["values", "lo", "hi"] {
                    if let Some(v) = s.get(key) {
                        splice(&mut c["series"][k][key], at, v);
                    }
                }
            }
        }
    }

    #[test]
    fn a_tail_carries_the_new_points_and_rebuilds_the_charts() {
        let old = vec![chart(&[0.0, 1.0], &[10.0, 11.0], &["a", "b"])];
        // A new second, and the last one's figure revised.
        let new = vec![chart(&[0.0, 1.0, 2.0], &[10.0, 12.0, 13.0], &["a", "b"])];
        let t = tails(&old, &new).expect("same lines");
        assert_eq!(t.len(), 1);
        assert_eq!(t[0]["at"], 1);
        assert_eq!(t[0]["x"], json!([1.0, 2.0]));
        let mut got = old.clone();
        apply(&mut got, &t);
        assert_eq!(got, new);
        // Nothing changed: nothing to send.
        assert_eq!(tails(&new, &new), Some(vec![]));
        // Shorter (a wider bucket): cut, and the new points.
        let fewer = vec![chart(&[0.0], &[11.5], &["a", "b"])];
        let mut got = new.clone();
        apply(&mut got, &tails(&new, &fewer).unwrap());
        assert_eq!(got, fewer);
    }

    #[test]
    fn new_lines_or_charts_need_the_whole_charts() {
        let old = vec![chart(&[0.0], &[1.0], &["a"])];
        assert!(tails(&old, &[chart(&[0.0], &[1.0], &["a", "c"])]).is_none());
        assert!(tails(&old, &[old[0].clone(), old[0].clone()]).is_none());
        assert!(tails(&[], &old).is_none());
    }
}
