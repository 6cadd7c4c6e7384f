//! JSON kept as written: objects keep their key order and numbers their
//! text, so a request body imported from a capture is sent as the browser
//! sent it (serde_json's map would sort the keys).

use crate::text::{quoted, toml_key};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    Null,
    Bool(bool),
    /// The number's text, or a `{{var}}` standing for one.
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// Parses a whole JSON document; `None` when it is not one.
pub(crate) fn parse(text: &str) -> Option<J> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    (p.i == p.b.len()).then_some(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<J> {
        self.ws();
        self.depth += 1;
        if self.depth > 200 {
            return None;
        }
        let v = match *self.b.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut items = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.ws();
                        let k = self.string()?;
                        if !self.eat(b':') {
                            return None;
                        }
                        items.push((k, self.value()?));
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                J::Obj(items)
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value()?);
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                J::Arr(items)
            }
            b'"' => J::Str(self.string()?),
            b't' => self.word("true", J::Bool(true))?,
            b'f' => self.word("false", J::Bool(false))?,
            b'n' => self.word("null", J::Null)?,
            _ => {
                let start = self.i;
                while self.i < self.b.len()
                    && matches!(
                        self.b[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.b[start..self.i]).ok()?;
                // serde_json checks the grammar.
                serde_json::from_str::<serde_json::Number>(t).ok()?;
                J::Num(t.to_owned())
            }
        };
        self.depth -= 1;
        Some(v)
    }

    fn word(&mut self, w: &str, v: J) -> Option<J> {
        if self.b[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Some(v)
        } else {
            None
        }
    }

    fn string(&mut self) -> Option<String> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i;
        self.i += 1;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        self.i += 1;
        let raw = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        serde_json::from_str(raw).ok()
    }
}

impl J {
    /// Compact JSON, as `JSON.stringify` writes it; a `Num` is written as
    /// is (so `{{id}}` stands for a number).
    pub(crate) fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => out.push_str(n),
            J::Str(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
            J::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            J::Obj(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }

    /// As a TOML inline value; `None` when TOML cannot say it (null, a
    /// number outside TOML's, a key used twice).
    pub(crate) fn to_toml(&self) -> Option<String> {
        Some(match self {
            J::Null => return None,
            J::Bool(b) => b.to_string(),
            J::Num(n) => toml_number(n)?,
            J::Str(s) => quoted(s),
            J::Arr(items) => {
                let parts: Option<Vec<String>> = items.iter().map(J::to_toml).collect();
                format!("[{}]", parts?.join(", "))
            }
            J::Obj(items) => {
                if items.is_empty() {
                    return Some("{}".to_owned());
                }
                unique_keys(items)?;
                let parts: Option<Vec<String>> = items
                    .iter()
                    .map(|(k, v)| Some(format!("{} = {}", toml_key(k), v.to_toml()?)))
                    .collect();
                format!("{{ {} }}", parts?.join(", "))
            }
        })
    }

    /// As a YAML flow value (JSON text, which YAML reads); `None` where
    /// TOML's [`J::to_toml`] would be, so both formats say the same.
    pub(crate) fn to_yaml(&self) -> Option<String> {
        self.to_toml()?;
        Some(self.yaml_flow())
    }

    fn yaml_flow(&self) -> String {
        match self {
            J::Str(s) => quoted(s),
            J::Arr(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(J::yaml_flow)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            J::Obj(items) => format!(
                "{{{}}}",
                items
                    .iter()
                    .map(|(k, v)| format!("{}: {}", quoted(k), v.yaml_flow()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => other.to_json(),
        }
    }
}

fn unique_keys(items: &[(String, J)]) -> Option<()> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .all(|(k, _)| seen.insert(k.as_str()))
        .then_some(())
}

/// A JSON number's text as TOML's: integers that fit an i64, and floats.
fn toml_number(n: &str) -> Option<String> {
    if n.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        n.parse::<i64>().ok()?;
        return Some(n.to_owned());
    }
    let f = n.parse::<f64>().ok()?;
    if !f.is_finite() {
        return None;
    }
    // TOML wants digits on both sides of a point; JSON has them too.
    Some(n.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_number_text() {
        let v = parse(r#" {"z": 1.50, "a": [true, null, "x\"y"], "m": {}} "#).unwrap();
        assert_eq!(v.to_json(), r#"{"z":1.50,"a":[true,null,"x\"y"],"m":{}}"#);
        let J::Obj(items) = &v else { panic!() };
        assert_eq!(items[0].0, "z");
    }

    #[test]
    fn rejects_what_is_not_json() {
        for bad in ["", "{", "{a:1}", "[1,]", "01", "1 2", "\"x", "tru"] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn toml_and_yaml_forms() {
        let v = parse(r#"{"user": "a", "n": 3, "f": 2.5, "tags": ["x"], "o": {"k.1": false}}"#)
            .unwrap();
        assert_eq!(
            v.to_toml().unwrap(),
            r#"{ user = "a", n = 3, f = 2.5, tags = ["x"], o = { "k.1" = false } }"#
        );
        assert_eq!(
            v.to_yaml().unwrap(),
            r#"{"user": "a", "n": 3, "f": 2.5, "tags": ["x"], "o": {"k.1": false}}"#
        );
        assert!(parse(r#"{"a": null}"#).unwrap().to_toml().is_none());
        assert!(parse("123456789012345678901").unwrap().to_toml().is_none());
        assert!(parse(r#"{"a": 1, "a": 2}"#).unwrap().to_toml().is_none());
    }
}
