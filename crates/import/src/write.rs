//! Scenario steps and files, written as TOML or YAML (docs/scenario.md):
//! the importers build a [`Doc`] and this writes it.

use crate::json::J;
use crate::text::{quoted, toml_key, toml_str, yaml_str};
use crate::Format;

/// One `[[step]]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Step {
    /// Comment lines written above the step (without `# `).
    pub comments: Vec<String>,
    pub name: String,
    pub method: String,
    /// A template: a path (relative to base) or `{{var}}`.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    pub extract: Vec<Extract>,
    pub check: Vec<Check>,
    pub think: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) enum Body {
    #[default]
    None,
    Raw(String),
    /// `body_file`, and whether it may be outside the scenario's folder.
    File(String, bool),
    Form(Vec<(String, String)>),
    Json(J),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Extract {
    pub var: String,
    /// `json`, `regex`, `header` or `cookie`.
    pub from: &'static str,
    pub what: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    Status(u16),
    StatusIn(Vec<u16>),
}

/// A whole scenario file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Doc {
    pub comments: Vec<String>,
    pub base: String,
    pub headers: Vec<(String, String)>,
    /// `[load]` keys with their values already written (`1`, `"30s"`).
    pub load: Vec<(String, String)>,
    pub load_comments: Vec<String>,
    pub vars: Vec<(String, String)>,
    pub vars_comments: Vec<String>,
    /// Steps, and steps written commented out (other hosts).
    pub steps: Vec<(Step, bool)>,
    /// Comment lines at the end.
    pub trailer: Vec<String>,
}

fn comment_lines(out: &mut String, indent: &str, lines: &[String]) {
    for l in lines {
        for part in l.lines() {
            if part.is_empty() {
                out.push_str(indent);
                out.push_str("#\n");
            } else {
                out.push_str(&format!("{indent}# {part}\n"));
            }
        }
    }
}

/// Prefixes every line with `# `.
fn commented(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "#\n".to_owned()
            } else {
                format!("# {l}\n")
            }
        })
        .collect()
}

impl Doc {
    pub(crate) fn write(&self, format: Format) -> String {
        match format {
            Format::Toml => self.toml(),
            Format::Yaml => self.yaml(),
        }
    }

    fn toml(&self) -> String {
        let mut out = String::new();
        comment_lines(&mut out, "", &self.comments);
        out.push_str(&format!("base = {}\n", quoted(&self.base)));
        let inline = toml_inline(&self.headers);
        if !self.headers.is_empty() && inline.len() <= INLINE_MAX {
            out.push_str(&format!("headers = {inline}\n"));
        }
        out.push('\n');
        if !self.headers.is_empty() && inline.len() > INLINE_MAX {
            out.push_str("# Sent by every step.\n[headers]\n");
            for (k, v) in &self.headers {
                out.push_str(&format!("{} = {}\n", toml_key(k), quoted(v)));
            }
            out.push('\n');
        }
        if !self.load.is_empty() || !self.load_comments.is_empty() {
            out.push_str("[load]\n");
            for (k, v) in &self.load {
                out.push_str(&format!("{k} = {v}\n"));
            }
            comment_lines(&mut out, "", &self.load_comments);
            out.push('\n');
        }
        if !self.vars.is_empty() {
            comment_lines(&mut out, "", &self.vars_comments);
            out.push_str("[vars]\n");
            for (k, v) in &self.vars {
                out.push_str(&format!("{} = {}\n", toml_key(k), quoted(v)));
            }
            out.push('\n');
        }
        for (step, live) in &self.steps {
            let text = step.toml();
            if *live {
                out.push_str(&text);
            } else {
                out.push_str(&commented(&text));
            }
            out.push('\n');
        }
        comment_lines(&mut out, "", &self.trailer);
        out
    }

    fn yaml(&self) -> String {
        let mut out = String::new();
        comment_lines(&mut out, "", &self.comments);
        out.push_str(&format!("base: {}\n", yaml_str(&self.base)));
        if !self.headers.is_empty() {
            out.push_str("headers:\n");
            for (k, v) in &self.headers {
                out.push_str(&format!("  {}: {}\n", yaml_str(k), yaml_str(v)));
            }
        }
        if !self.load.is_empty() || !self.load_comments.is_empty() {
            out.push_str("\nload:\n");
            for (k, v) in &self.load {
                out.push_str(&format!("  {k}: {v}\n"));
            }
            comment_lines(&mut out, "  ", &self.load_comments);
        }
        if !self.vars.is_empty() {
            out.push('\n');
            comment_lines(&mut out, "", &self.vars_comments);
            out.push_str("vars:\n");
            for (k, v) in &self.vars {
                out.push_str(&format!("  {}: {}\n", yaml_str(k), yaml_str(v)));
            }
        }
        out.push_str("\nstep:\n");
        for (step, live) in &self.steps {
            let text = step.yaml("  ");
            if *live {
                out.push_str(&text);
            } else {
                for l in commented(&text).lines() {
                    out.push_str("  ");
                    out.push_str(l);
                    out.push('\n');
                }
            }
            out.push('\n');
        }
        comment_lines(&mut out, "", &self.trailer);
        out
    }
}

/// `{ A = "1", "B-c" = "2" }`.
fn toml_inline(pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return "{}".to_owned();
    }
    let items: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{} = {}", toml_key(k), quoted(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// Inline tables longer than this are written as sub-tables.
const INLINE_MAX: usize = 90;

impl Extract {
    fn toml(&self) -> String {
        format!(
            "{{ var = {}, {} = {} }}",
            quoted(&self.var),
            self.from,
            toml_str(&self.what)
        )
    }
    fn yaml(&self) -> String {
        format!(
            "{{ var: {}, {}: {} }}",
            yaml_str(&self.var),
            self.from,
            yaml_str(&self.what)
        )
    }
}

impl Check {
    fn text(&self, sep: &str) -> String {
        match self {
            Check::Status(s) => format!("{{ status{sep}{s} }}"),
            Check::StatusIn(v) => format!(
                "{{ status_in{sep}[{}] }}",
                v.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

impl Step {
    /// The step as a `[[step]]` table; tables too long for one line
    /// (headers, a form, a JSON object) follow as `[step.x]` sub-tables.
    pub(crate) fn toml(&self) -> String {
        let mut out = String::new();
        comment_lines(&mut out, "", &self.comments);
        out.push_str("[[step]]\n");
        out.push_str(&format!("name = {}\n", quoted(&self.name)));
        if self.method != "GET" {
            out.push_str(&format!("method = {}\n", quoted(&self.method)));
        }
        out.push_str(&format!("url = {}\n", quoted(&self.url)));
        let mut subtables: Vec<(&str, Vec<(String, String)>)> = Vec::new();
        if !self.headers.is_empty() {
            let inline = toml_inline(&self.headers);
            if inline.len() <= INLINE_MAX {
                out.push_str(&format!("headers = {inline}\n"));
            } else {
                let rows = self
                    .headers
                    .iter()
                    .map(|(k, v)| (toml_key(k), quoted(v)))
                    .collect();
                subtables.push(("headers", rows));
            }
        }
        match &self.body {
            Body::None => {}
            Body::Raw(t) => out.push_str(&format!("body = {}\n", quoted(t))),
            Body::File(p, outside) => {
                out.push_str(&format!("body_file = {}\n", quoted(p)));
                if *outside {
                    out.push_str("allow_outside = true\n");
                }
            }
            Body::Form(pairs) => {
                let inline = toml_inline(pairs);
                if inline.len() <= INLINE_MAX {
                    out.push_str(&format!("form = {inline}\n"));
                } else {
                    let rows = pairs
                        .iter()
                        .map(|(k, v)| (toml_key(k), quoted(v)))
                        .collect();
                    subtables.push(("form", rows));
                }
            }
            Body::Json(j) => {
                let inline = j.to_toml().unwrap_or_default();
                match j {
                    J::Obj(items) if inline.len() > INLINE_MAX => {
                        let rows = items
                            .iter()
                            .map(|(k, v)| (toml_key(k), v.to_toml().unwrap_or_default()))
                            .collect();
                        subtables.push(("json", rows));
                    }
                    _ => out.push_str(&format!("json = {inline}\n")),
                }
            }
        }
        match self.extract.as_slice() {
            [] => {}
            [one] => out.push_str(&format!("extract = [{}]\n", one.toml())),
            many => {
                out.push_str("extract = [\n");
                for e in many {
                    out.push_str(&format!("  {},\n", e.toml()));
                }
                out.push_str("]\n");
            }
        }
        if !self.check.is_empty() {
            let items: Vec<String> = self.check.iter().map(|c| c.text(" = ")).collect();
            out.push_str(&format!("check = [{}]\n", items.join(", ")));
        }
        if let Some(t) = &self.think {
            out.push_str(&format!("think = {}\n", quoted(t)));
        }
        for (name, rows) in subtables {
            out.push_str(&format!("\n  [step.{name}]\n"));
            for (k, v) in rows {
                out.push_str(&format!("  {k} = {v}\n"));
            }
        }
        out
    }

    /// The step as an item of a YAML `step:` list, indented by `indent`.
    pub(crate) fn yaml(&self, indent: &str) -> String {
        let mut out = String::new();
        comment_lines(&mut out, indent, &self.comments);
        let i2 = format!("{indent}  ");
        out.push_str(&format!("{indent}- name: {}\n", yaml_str(&self.name)));
        if self.method != "GET" {
            out.push_str(&format!("{i2}method: {}\n", yaml_str(&self.method)));
        }
        out.push_str(&format!("{i2}url: {}\n", yaml_str(&self.url)));
        let map = |out: &mut String, key: &str, pairs: &[(String, String)]| {
            out.push_str(&format!("{i2}{key}:\n"));
            for (k, v) in pairs {
                out.push_str(&format!("{i2}  {}: {}\n", yaml_str(k), yaml_str(v)));
            }
        };
        if !self.headers.is_empty() {
            map(&mut out, "headers", &self.headers);
        }
        match &self.body {
            Body::None => {}
            Body::Raw(t) => out.push_str(&format!("{i2}body: {}\n", quoted(t))),
            Body::File(p, outside) => {
                out.push_str(&format!("{i2}body_file: {}\n", yaml_str(p)));
                if *outside {
                    out.push_str(&format!("{i2}allow_outside: true\n"));
                }
            }
            Body::Form(pairs) => map(&mut out, "form", pairs),
            Body::Json(j) => {
                out.push_str(&format!("{i2}json: {}\n", j.to_yaml().unwrap_or_default()))
            }
        }
        if !self.extract.is_empty() {
            out.push_str(&format!("{i2}extract:\n"));
            for e in &self.extract {
                out.push_str(&format!("{i2}  - {}\n", e.yaml()));
            }
        }
        if !self.check.is_empty() {
            let items: Vec<String> = self.check.iter().map(|c| c.text(": ")).collect();
            out.push_str(&format!("{i2}check: [{}]\n", items.join(", ")));
        }
        if let Some(t) = &self.think {
            out.push_str(&format!("{i2}think: {}\n", yaml_str(t)));
        }
        out
    }
}
