//! Typed reads from the positioned tree. Each reports its own problem to the
//! sink and returns `None`, so the caller carries on and every problem in the
//! file is found in one pass.

use crate::diag::{did_you_mean, Pos, Sink};
use crate::node::{Entry, Kind, Node};
use std::time::Duration;

/// The entries of one table, with what keys it may hold.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'n> {
    pub pos: Pos,
    entries: &'n [Entry],
}

impl<'n> Fields<'n> {
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|e| e.key == key).map(|e| &e.value)
    }

    pub fn key_pos(&self, key: &str) -> Option<Pos> {
        self.entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.key_pos)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn entries(&self) -> &'n [Entry] {
        self.entries
    }

    /// A key that must be there; reported at the table otherwise.
    pub fn require(&self, s: &mut Sink, key: &str, what: &str) -> Option<&'n Node> {
        let v = self.get(key);
        if v.is_none() {
            s.err(self.pos, format!("{what} has no `{key}`"));
        }
        v
    }
}

/// A table whose keys must all be in `allowed`.
pub fn table<'n>(s: &mut Sink, node: &'n Node, what: &str, allowed: &[&str]) -> Option<Fields<'n>> {
    let Kind::Map(entries) = &node.kind else {
        wrong_type(s, node, what, "a table");
        return None;
    };
    for e in entries {
        if !allowed.contains(&e.key.as_str()) {
            let hint = match did_you_mean(&e.key, allowed) {
                Some(m) => format!("did you mean `{m}`?"),
                None => format!("{what} takes {}", list_keys(allowed)),
            };
            s.hint(
                e.key_pos,
                format!("unknown key `{}` in {what}", e.key),
                hint,
            );
        }
    }
    Some(Fields {
        pos: node.pos,
        entries,
    })
}

/// A table with any keys (headers, vars, form fields).
pub fn any_table<'n>(s: &mut Sink, node: &'n Node, what: &str) -> Option<&'n [Entry]> {
    match &node.kind {
        Kind::Map(entries) => Some(entries),
        _ => {
            wrong_type(s, node, what, "a table");
            None
        }
    }
}

fn list_keys(keys: &[&str]) -> String {
    let v: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    v.join(", ")
}

pub fn wrong_type(s: &mut Sink, node: &Node, what: &str, want: &str) {
    s.err(
        node.pos,
        format!("{what} must be {want}, not {}", node.type_name()),
    );
}

pub fn string<'n>(s: &mut Sink, node: &'n Node, what: &str) -> Option<&'n str> {
    match &node.kind {
        Kind::Str(t) => Some(&t.text),
        _ => {
            wrong_type(s, node, what, "a string");
            None
        }
    }
}

/// A string, or a number or boolean written without quotes.
pub fn scalar_text(s: &mut Sink, node: &Node, what: &str) -> Option<String> {
    match &node.kind {
        Kind::Str(t) => Some(t.text.clone()),
        Kind::Int(n) => Some(n.to_string()),
        Kind::Float(f) => Some(f.to_string()),
        Kind::Bool(b) => Some(b.to_string()),
        _ => {
            wrong_type(s, node, what, "a string");
            None
        }
    }
}

pub fn boolean(s: &mut Sink, node: &Node, what: &str) -> Option<bool> {
    match node.kind {
        Kind::Bool(b) => Some(b),
        _ => {
            wrong_type(s, node, what, "true or false");
            None
        }
    }
}

/// A whole number of at least `min`.
pub fn uint(s: &mut Sink, node: &Node, what: &str, min: u64) -> Option<u64> {
    match node.kind {
        Kind::Int(n) if n >= 0 && n as u64 >= min => Some(n as u64),
        Kind::Int(n) => {
            s.err(node.pos, format!("{what} must be at least {min}, not {n}"));
            None
        }
        _ => {
            wrong_type(s, node, what, "a whole number");
            None
        }
    }
}

/// A number above zero.
pub fn positive(s: &mut Sink, node: &Node, what: &str) -> Option<f64> {
    let v = match node.kind {
        Kind::Int(n) => n as f64,
        Kind::Float(f) => f,
        _ => {
            wrong_type(s, node, what, "a number");
            return None;
        }
    };
    if v > 0.0 && v.is_finite() {
        Some(v)
    } else {
        s.err(node.pos, format!("{what} must be above 0, not {v}"));
        None
    }
}

pub fn duration(s: &mut Sink, node: &Node, what: &str) -> Option<Duration> {
    let text = match &node.kind {
        Kind::Str(t) => t.text.clone(),
        Kind::Int(n) if *n >= 0 => n.to_string(),
        _ => {
            wrong_type(s, node, what, "a duration such as \"30s\"");
            return None;
        }
    };
    match crate::think::parse_duration(&text) {
        Ok(d) => Some(d),
        Err(e) => {
            s.hint(
                node.pos,
                format!("{what}: {e}"),
                "use a number with a unit: 500ms, 30s, 2m, 1h",
            );
            None
        }
    }
}

pub fn list<'n>(s: &mut Sink, node: &'n Node, what: &str) -> Option<&'n [Node]> {
    match &node.kind {
        Kind::Seq(items) => Some(items),
        _ => {
            wrong_type(s, node, what, "a list");
            None
        }
    }
}

/// A list of non-empty strings (thresholds).
pub fn strings(s: &mut Sink, node: &Node, what: &str) -> Vec<String> {
    let mut out = Vec::new();
    for item in list(s, node, what).unwrap_or_default() {
        if let Some(t) = string(s, item, what) {
            if t.trim().is_empty() {
                s.err(item.pos, format!("{what}: an entry is empty"));
            } else {
                out.push(t.trim().to_owned());
            }
        }
    }
    out
}

/// A TOML/YAML value as JSON (for `json` bodies and `equals`).
pub fn to_json(s: &mut Sink, node: &Node) -> Option<serde_json::Value> {
    use serde_json::Value;
    Some(match &node.kind {
        Kind::Null => Value::Null,
        Kind::Bool(b) => Value::Bool(*b),
        Kind::Int(n) => Value::from(*n),
        Kind::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => Value::Number(n),
            None => {
                s.err(node.pos, "JSON has no infinity or NaN");
                return None;
            }
        },
        Kind::Str(t) => Value::String(t.text.clone()),
        Kind::Datetime(d) => Value::String(d.clone()),
        Kind::Seq(items) => {
            Value::Array(items.iter().map(|i| to_json(s, i)).collect::<Option<_>>()?)
        }
        Kind::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|e| Some((e.key.clone(), to_json(s, &e.value)?)))
                .collect::<Option<_>>()?,
        ),
    })
}
