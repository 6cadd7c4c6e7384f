//! The replay plan as a scenario file (docs/scenario.md): a weighted
//! journey per URL, written one a line, and an open-model `[load]` — a
//! `rate` held for the log's length, or `rate_stages`, one per second of
//! the log.

use crate::text::{duration_text, quoted, toml_key, yaml_str};
use crate::Format;

/// One URL of the mix.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub method: String,
    /// A url template (a path, `{{var}}` for redacted values).
    pub url: String,
    pub weight: u64,
    /// Comment at the end of its line (its share of the requests).
    pub note: String,
}

/// One stage of a timed replay.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stage {
    pub duration_ms: u64,
    pub rate: f64,
    pub note: String,
}

#[derive(Debug, Clone)]
pub(crate) enum Load {
    /// A rate held for `hold_ms`.
    Mix {
        rate: f64,
        hold_ms: u64,
    },
    Timed(Vec<Stage>),
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub comments: Vec<String>,
    pub base: Option<String>,
    pub entries: Vec<Entry>,
    /// Comment lines after the last journey.
    pub entries_after: Vec<String>,
    pub vars: Vec<(String, String)>,
    pub vars_comments: Vec<String>,
    pub load: Load,
    pub load_comments: Vec<String>,
}

fn comment(out: &mut String, indent: &str, lines: &[String]) {
    for l in lines {
        if l.is_empty() {
            out.push_str(&format!("{indent}#\n"));
        } else {
            out.push_str(&format!("{indent}# {l}\n"));
        }
    }
}

/// A rate as written: whole numbers bare, others with six significant
/// digits (a mean rate; not summed again).
pub(crate) fn rate_text(r: f64) -> String {
    if r.fract() == 0.0 && r.abs() < 1e15 {
        return format!("{}", r as i64);
    }
    let magnitude = r.abs().log10().floor() as i32;
    let decimals = (5 - magnitude).clamp(1, 12) as usize;
    let s = format!("{r:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A stage's rate, exactly: rate × duration must give back the second's
/// count, so the shortest text that reads back as the same `f64`.
fn exact_rate(r: f64) -> String {
    if r.fract() == 0.0 && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

impl Plan {
    pub(crate) fn write(&self, format: Format) -> String {
        match format {
            Format::Toml => self.toml(),
            Format::Yaml => self.yaml(),
        }
    }

    fn toml(&self) -> String {
        let mut out = String::new();
        comment(&mut out, "", &self.comments);
        if let Some(b) = &self.base {
            out.push_str(&format!("base = {}\n", quoted(b)));
        }
        out.push_str("\njourney = [\n");
        for e in &self.entries {
            let method = if e.method == "GET" {
                String::new()
            } else {
                format!("method = {}, ", quoted(&e.method))
            };
            out.push_str(&format!(
                "  {{ name = {}, weight = {}, step = [{{ {method}url = {} }}] }},  # {}\n",
                quoted(&format!("{} {}", e.method, e.url)),
                e.weight,
                quoted(&e.url),
                e.note
            ));
        }
        comment(&mut out, "  ", &self.entries_after);
        out.push_str("]\n");
        if !self.vars.is_empty() {
            out.push('\n');
            comment(&mut out, "", &self.vars_comments);
            out.push_str("[vars]\n");
            for (k, v) in &self.vars {
                out.push_str(&format!("{} = {}\n", toml_key(k), quoted(v)));
            }
        }
        out.push_str("\n[load]\n");
        comment(&mut out, "", &self.load_comments);
        match &self.load {
            Load::Mix { rate, hold_ms } => {
                out.push_str(&format!("rate = {}\n", rate_text(*rate)));
                out.push_str(&format!("hold = {}\n", quoted(&duration_text(*hold_ms))));
            }
            Load::Timed(stages) => {
                out.push_str("rate_stages = [\n");
                for s in stages {
                    out.push_str(&format!(
                        "  {{ duration = {}, rate = {} }},  # {}\n",
                        quoted(&duration_text(s.duration_ms)),
                        exact_rate(s.rate),
                        s.note
                    ));
                }
                out.push_str("]\n");
            }
        }
        out
    }

    fn yaml(&self) -> String {
        let mut out = String::new();
        comment(&mut out, "", &self.comments);
        if let Some(b) = &self.base {
            out.push_str(&format!("base: {}\n", yaml_str(b)));
        }
        out.push_str("\njourney:\n");
        for e in &self.entries {
            let method = if e.method == "GET" {
                String::new()
            } else {
                format!("method: {}, ", yaml_str(&e.method))
            };
            out.push_str(&format!(
                "  - {{ name: {}, weight: {}, step: [{{ {method}url: {} }}] }}  # {}\n",
                yaml_str(&format!("{} {}", e.method, e.url)),
                e.weight,
                yaml_str(&e.url),
                e.note
            ));
        }
        comment(&mut out, "  ", &self.entries_after);
        if !self.vars.is_empty() {
            out.push('\n');
            comment(&mut out, "", &self.vars_comments);
            out.push_str("vars:\n");
            for (k, v) in &self.vars {
                out.push_str(&format!("  {}: {}\n", yaml_str(k), yaml_str(v)));
            }
        }
        out.push_str("\nload:\n");
        comment(&mut out, "  ", &self.load_comments);
        match &self.load {
            Load::Mix { rate, hold_ms } => {
                out.push_str(&format!("  rate: {}\n", rate_text(*rate)));
                out.push_str(&format!("  hold: {}\n", yaml_str(&duration_text(*hold_ms))));
            }
            Load::Timed(stages) => {
                out.push_str("  rate_stages:\n");
                for s in stages {
                    out.push_str(&format!(
                        "    - {{ duration: {}, rate: {} }}  # {}\n",
                        yaml_str(&duration_text(s.duration_ms)),
                        exact_rate(s.rate),
                        s.note
                    ));
                }
            }
        }
        out
    }
}
