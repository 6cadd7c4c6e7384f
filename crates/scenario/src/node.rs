//! One tree for both file formats, every node carrying its place in the file.
//!
//! serde's derive stops at the first problem and forgets where values came
//! from, so TOML and YAML are first read into this positioned tree, and the
//! schema is then checked by hand (`build`), collecting every problem with its
//! line and column. TOML comes from `toml`'s spanned document, YAML from
//! `yaml-rust2`'s marked events (serde_yaml can place a syntax error but not a
//! value, so it could not point at, say, an unknown template variable).

use crate::diag::Pos;
use std::collections::HashMap;
use toml::de::{DeTable, DeValue};
use toml::Spanned;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Text),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    /// A TOML date or time; no key takes one.
    Datetime(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub text: String,
    /// Where `text` starts when it appears verbatim on one line of the file
    /// (no escapes, no folding), so that a problem inside it (a template
    /// variable, say) can be pointed at exactly.
    pub verbatim: Option<Pos>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_pos: Pos,
    pub value: Node,
}

impl Node {
    /// "a string", "a table" …, for type errors.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "empty",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) => "an integer",
            Kind::Float(_) => "a float",
            Kind::Str(_) => "a string",
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a table",
            Kind::Datetime(_) => "a date",
        }
    }

    /// The place of the character at `offset` (in bytes) of a string node,
    /// or the node's own place when the string is not verbatim on one line.
    pub fn pos_in(&self, offset: usize) -> Pos {
        match &self.kind {
            Kind::Str(Text {
                text,
                verbatim: Some(p),
            }) => {
                let before = text.get(..offset.min(text.len())).unwrap_or("");
                Pos::new(p.line, p.col + before.chars().count())
            }
            _ => self.pos,
        }
    }
}

/// Byte offsets to lines and columns.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }

    pub fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let col = self
            .text
            .get(start..offset)
            .map_or(1, |s| s.chars().count() + 1);
        Pos::new(line + 1, col)
    }

    fn line(&self, line: usize) -> &'a str {
        let start = self.starts[line - 1];
        let end = self.starts.get(line).map_or(self.text.len(), |&e| e);
        &self.text[start..end]
    }

    /// Where `content` starts if the scalar at `pos` spells it verbatim.
    fn verbatim(&self, pos: Pos, content: &str) -> Option<Pos> {
        if content.contains('\n') || pos.line == 0 || pos.line > self.starts.len() {
            return None;
        }
        let line = self.line(pos.line);
        let at = line.char_indices().nth(pos.col - 1)?.0;
        let rest = &line[at..];
        ["\"", "'", ""].iter().find_map(|q| {
            let inner = rest.strip_prefix(q)?;
            inner
                .starts_with(content)
                .then(|| Pos::new(pos.line, pos.col + q.len()))
        })
    }

    fn text(&self, pos: Pos, text: String) -> Kind {
        let verbatim = self.verbatim(pos, &text);
        Kind::Str(Text { text, verbatim })
    }
}

/// A syntax error: where, and what.
pub type SyntaxError = (Pos, String);

pub fn from_toml(text: &str) -> Result<Node, Vec<SyntaxError>> {
    let lines = Lines::new(text);
    let (doc, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        return Err(errors
            .iter()
            .map(|e| {
                let pos = e.span().map_or(Pos::new(1, 1), |s| lines.pos(s.start));
                let msg = e.message().trim().lines().next().unwrap_or("").to_owned();
                (pos, format!("TOML syntax: {msg}"))
            })
            .collect());
    }
    let span = doc.span();
    Ok(Node {
        pos: lines.pos(span.start),
        kind: toml_table(&lines, doc.get_ref()),
    })
}

fn toml_table(lines: &Lines<'_>, table: &DeTable<'_>) -> Kind {
    Kind::Map(
        table
            .iter()
            .map(|(k, v)| Entry {
                key: k.get_ref().to_string(),
                key_pos: lines.pos(k.span().start),
                value: toml_value(lines, v),
            })
            .collect(),
    )
}

fn toml_value(lines: &Lines<'_>, v: &Spanned<DeValue<'_>>) -> Node {
    let pos = lines.pos(v.span().start);
    let kind = match v.get_ref() {
        DeValue::String(s) => lines.text(pos, s.to_string()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Kind::Int(n),
            Err(_) => Kind::Float(i.as_str().parse().unwrap_or(f64::INFINITY)),
        },
        DeValue::Float(f) => Kind::Float(f.as_str().parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => Kind::Bool(*b),
        DeValue::Datetime(d) => Kind::Datetime(d.to_string()),
        DeValue::Array(a) => Kind::Seq(a.iter().map(|e| toml_value(lines, e)).collect()),
        DeValue::Table(t) => toml_table(lines, t),
    };
    Node { pos, kind }
}

/// Aliases are copied; this bounds what a "billion laughs" file can cost.
const MAX_YAML_NODES: usize = 1_000_000;

pub fn from_yaml(text: &str) -> Result<Node, Vec<SyntaxError>> {
    let lines = Lines::new(text);
    let mut b = YamlBuilder {
        lines: &lines,
        stack: Vec::new(),
        anchors: HashMap::new(),
        root: None,
        errors: Vec::new(),
        documents: 0,
        nodes: 0,
    };
    let mut parser = Parser::new_from_str(text);
    if let Err(e) = parser.load(&mut b, true) {
        let m = e.marker();
        b.errors.push((
            Pos::new(m.line(), m.col() + 1),
            format!("YAML syntax: {}", e.info()),
        ));
    }
    if !b.errors.is_empty() {
        return Err(b.errors);
    }
    Ok(b.root.unwrap_or(Node {
        pos: Pos::new(1, 1),
        kind: Kind::Null,
    }))
}

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        entries: Vec<Entry>,
        key: Option<(String, Pos)>,
    },
}

struct YamlBuilder<'a> {
    lines: &'a Lines<'a>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    errors: Vec<SyntaxError>,
    documents: usize,
    nodes: usize,
}

impl YamlBuilder<'_> {
    fn wants_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    fn finish(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq { items, pos, .. }) => {
                *pos = (*pos).min(node.pos);
                items.push(node);
            }
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                Some((k, key_pos)) => {
                    if entries.iter().any(|e| e.key == k) {
                        self.errors
                            .push((key_pos, format!("key '{k}' appears twice in this mapping")));
                    }
                    entries.push(Entry {
                        key: k,
                        key_pos,
                        value: node,
                    });
                }
                None => self.errors.push((
                    node.pos,
                    "a mapping key must be plain text, not a list or mapping".to_owned(),
                )),
            },
        }
    }

    fn count(node: &Node) -> usize {
        1 + match &node.kind {
            Kind::Seq(items) => items.iter().map(Self::count).sum(),
            Kind::Map(entries) => entries.iter().map(|e| Self::count(&e.value)).sum(),
            _ => 0,
        }
    }
}

impl MarkedEventReceiver for YamlBuilder<'_> {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        // yaml-rust2 lines count from 1, columns from 0.
        let pos = Pos::new(mark.line(), mark.col() + 1);
        match ev {
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents == 2 {
                    self.errors.push((
                        pos,
                        "a scenario is one YAML document; remove the second".into(),
                    ));
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                if self.wants_key() {
                    if let Some(Frame::Map { key, pos: at, .. }) = self.stack.last_mut() {
                        // A block mapping's start mark is after its first
                        // key; the mapping is where that key is.
                        *at = (*at).min(pos);
                        *key = Some((value, pos));
                    }
                    return;
                }
                let kind = yaml_scalar(self.lines, pos, value, style, tag.as_ref());
                self.finish(Node { pos, kind }, anchor);
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Seq {
                pos,
                anchor,
                items: Vec::new(),
            }),
            Event::MappingStart(anchor, _) => self.stack.push(Frame::Map {
                pos,
                anchor,
                entries: Vec::new(),
                key: None,
            }),
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Seq { pos, anchor, items }) => (
                        Node {
                            pos,
                            kind: Kind::Seq(items),
                        },
                        anchor,
                    ),
                    Some(Frame::Map {
                        pos,
                        anchor,
                        entries,
                        ..
                    }) => (
                        Node {
                            pos,
                            kind: Kind::Map(entries),
                        },
                        anchor,
                    ),
                    None => return,
                };
                self.finish(node, anchor);
            }
            Event::Alias(id) => {
                if self.wants_key() {
                    self.errors
                        .push((pos, "an alias cannot be a mapping key".into()));
                    return;
                }
                match self.anchors.get(&id) {
                    Some(node) => {
                        let mut node = node.clone();
                        self.nodes += Self::count(&node);
                        if self.nodes > MAX_YAML_NODES {
                            self.errors
                                .push((pos, "aliases expand to too many values".into()));
                            node.kind = Kind::Null;
                        }
                        self.finish(node, 0);
                    }
                    None => self.errors.push((pos, "unknown alias".into())),
                }
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }
}

/// YAML 1.2 core schema: plain scalars may be null, booleans or numbers;
/// quoted and block scalars are always strings.
fn yaml_scalar(
    lines: &Lines<'_>,
    pos: Pos,
    value: String,
    style: TScalarStyle,
    tag: Option<&Tag>,
) -> Kind {
    if let Some(tag) = tag {
        if tag.suffix == "str" {
            return lines.text(pos, value);
        }
    }
    if style != TScalarStyle::Plain {
        return lines.text(pos, value);
    }
    match value.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Kind::Null,
        "true" | "True" | "TRUE" => return Kind::Bool(true),
        "false" | "False" | "FALSE" => return Kind::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Kind::Float(f64::INFINITY)
        }
        "-.inf" | "-.Inf" | "-.INF" => return Kind::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Kind::Float(f64::NAN),
        _ => {}
    }
    if let Some(n) = yaml_int(&value) {
        return Kind::Int(n);
    }
    if is_yaml_float(&value) {
        if let Ok(f) = value.parse::<f64>() {
            return Kind::Float(f);
        }
    }
    lines.text(pos, value)
}

fn yaml_int(s: &str) -> Option<i64> {
    if let Some(h) = s.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(o) = s.strip_prefix("0o") {
        return i64::from_str_radix(o, 8).ok();
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty());
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exp_ok && (mantissa.contains('.') || exp.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(n: &'a Node, key: &str) -> &'a Node {
        match &n.kind {
            Kind::Map(es) => &es.iter().find(|e| e.key == key).unwrap().value,
            _ => panic!("not a map"),
        }
    }

    fn key_pos(n: &Node, key: &str) -> Pos {
        match &n.kind {
            Kind::Map(es) => es.iter().find(|e| e.key == key).unwrap().key_pos,
            _ => panic!("not a map"),
        }
    }

    #[test]
    fn toml_positions() {
        let src = "base = \"http://x\"\n\n[load]\nusers = 5\nthink = 'uniform(1s, 2s)'\n\n[[journey]]\nname = \"a\"\n  [[journey.step]]\n  url = \"/x?id={{id}}\"\n";
        let root = from_toml(src).unwrap();
        assert_eq!(get(&root, "base").pos, Pos::new(1, 8));
        assert_eq!(key_pos(&root, "load"), Pos::new(3, 2));
        let load = get(&root, "load");
        assert_eq!(get(load, "users").kind, Kind::Int(5));
        assert_eq!(get(load, "users").pos, Pos::new(4, 9));
        assert_eq!(key_pos(load, "think"), Pos::new(5, 1));
        let think = get(load, "think");
        assert_eq!(think.pos_in(0), Pos::new(5, 10));
        let journeys = get(&root, "journey");
        let Kind::Seq(js) = &journeys.kind else {
            panic!()
        };
        let steps = get(&js[0], "step");
        let Kind::Seq(ss) = &steps.kind else { panic!() };
        let url = get(&ss[0], "url");
        assert_eq!(url.pos, Pos::new(10, 9));
        assert_eq!(url.pos_in(6), Pos::new(10, 16));
    }

    #[test]
    fn toml_syntax_errors_are_placed() {
        let errs = from_toml("a = 1\nb = = 2\n").unwrap_err();
        assert_eq!(errs[0].0.line, 2, "{errs:?}");
        let errs = from_toml("a = 1\na = 2\n").unwrap_err();
        assert_eq!(errs[0].0.line, 2, "{errs:?}");
    }

    #[test]
    fn yaml_positions_and_types() {
        let src = "base: http://x\nload:\n  users: 5\n  rate: 1.5\n  think: \"uniform(1s, 2s)\"\n  cookies: false\n  none: ~\njourney:\n  - name: a\n    step:\n      - url: /x?id={{id}}\n        headers: { A: 'b' }\n";
        let root = from_yaml(src).unwrap();
        assert_eq!(get(&root, "base").pos, Pos::new(1, 7));
        let load = get(&root, "load");
        assert_eq!(key_pos(load, "users"), Pos::new(3, 3));
        assert_eq!(get(load, "users").kind, Kind::Int(5));
        assert_eq!(get(load, "rate").kind, Kind::Float(1.5));
        assert_eq!(get(load, "cookies").kind, Kind::Bool(false));
        assert_eq!(get(load, "none").kind, Kind::Null);
        let think = get(load, "think");
        assert_eq!(think.pos, Pos::new(5, 10));
        assert_eq!(think.pos_in(0), Pos::new(5, 11));
        let Kind::Seq(js) = &get(&root, "journey").kind else {
            panic!()
        };
        assert_eq!(js[0].pos, Pos::new(9, 5));
        let Kind::Seq(ss) = &get(&js[0], "step").kind else {
            panic!()
        };
        let url = get(&ss[0], "url");
        assert_eq!(url.pos, Pos::new(11, 14));
        assert_eq!(url.pos_in(6), Pos::new(11, 20));
        let a = get(get(&ss[0], "headers"), "A");
        assert_eq!(a.pos, Pos::new(12, 23));
        assert_eq!(a.pos_in(0), Pos::new(12, 24));
    }

    #[test]
    fn yaml_errors() {
        let errs = from_yaml("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(errs[0].0.line >= 2, "{errs:?}");
        let errs = from_yaml("a: 1\na: 2\n").unwrap_err();
        assert_eq!(errs[0].0, Pos::new(2, 1), "{errs:?}");
        let errs = from_yaml("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(errs[0].0.line, 2, "{errs:?}");
    }

    #[test]
    fn yaml_aliases_copy() {
        let root = from_yaml("a: &x {k: 1}\nb: *x\n").unwrap();
        assert_eq!(get(get(&root, "b"), "k").kind, Kind::Int(1));
    }

    #[test]
    fn yaml_numbers() {
        assert_eq!(yaml_int("-12"), Some(-12));
        assert_eq!(yaml_int("0x1f"), Some(31));
        assert_eq!(yaml_int("1-5"), None);
        assert!(is_yaml_float("1.5e3"));
        assert!(is_yaml_float(".5"));
        assert!(!is_yaml_float("1.2.3"));
        assert!(!is_yaml_float("5"));
        assert!(!is_yaml_float("e5"));
    }
}
