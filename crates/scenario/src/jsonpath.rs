//! A practical subset of JSONPath: `$`, `.key`, `["key"]`, `['key']`,
//! `[index]` (negative counts from the end), nested. No wildcards, filters or
//! recursive descent: an extract or a check names one value.

use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonPath {
    text: String,
    segs: Vec<Seg>,
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl JsonPath {
    /// The error carries the byte offset of the problem.
    pub(crate) fn parse(text: &str) -> Result<JsonPath, (usize, String)> {
        let b = text.as_bytes();
        if b.first() != Some(&b'$') {
            return Err((0, "a JSON path starts with '$', as in $.token".to_owned()));
        }
        let mut segs = Vec::new();
        let mut i = 1;
        while i < b.len() {
            match b[i] {
                b'.' => {
                    let start = i + 1;
                    let end = text[start..]
                        .find(['.', '['])
                        .map_or(text.len(), |e| start + e);
                    if end == start {
                        return Err((i, "empty key after '.'".to_owned()));
                    }
                    segs.push(Seg::Key(text[start..end].to_owned()));
                    i = end;
                }
                b'[' => {
                    let close = text[i..]
                        .find(']')
                        .map(|c| i + c)
                        .ok_or((i, "'[' is never closed".to_owned()))?;
                    let inner = text[i + 1..close].trim();
                    let quoted = inner.len() >= 2
                        && ((inner.starts_with('"') && inner.ends_with('"'))
                            || (inner.starts_with('\'') && inner.ends_with('\'')));
                    if quoted {
                        segs.push(Seg::Key(inner[1..inner.len() - 1].to_owned()));
                    } else if let Ok(n) = inner.parse::<i64>() {
                        segs.push(Seg::Index(n));
                    } else {
                        return Err((
                            i,
                            format!("'[{inner}]' is neither an index nor a quoted key"),
                        ));
                    }
                    i = close + 1;
                }
                _ => return Err((i, format!("expected '.' or '[' at '{}'", &text[i..]))),
            }
        }
        Ok(JsonPath {
            text: text.to_owned(),
            segs,
        })
    }

    pub(crate) fn get<'v>(&self, mut v: &'v Value) -> Option<&'v Value> {
        for s in &self.segs {
            v = match (s, v) {
                (Seg::Key(k), Value::Object(m)) => m.get(k)?,
                (Seg::Index(n), Value::Array(a)) => {
                    let i = if *n < 0 { a.len() as i64 + n } else { *n };
                    a.get(usize::try_from(i).ok()?)?
                }
                _ => return None,
            };
        }
        Some(v)
    }
}

/// A JSON value as a template variable: strings bare, the rest as JSON text.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Equality where 1 and 1.0 are the same number.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn get(path: &str, v: &Value) -> Option<Value> {
        JsonPath::parse(path).unwrap().get(v).cloned()
    }

    #[test]
    fn walks_keys_and_indices() {
        let v = json!({"token": "abc", "a": {"b c": [1, {"d": true}]}, "list": [1, 2, 3]});
        assert_eq!(get("$", &v), Some(v.clone()));
        assert_eq!(get("$.token", &v), Some(json!("abc")));
        assert_eq!(get("$.a[\"b c\"][1].d", &v), Some(json!(true)));
        assert_eq!(get("$['a']['b c'][0]", &v), Some(json!(1)));
        assert_eq!(get("$.list[-1]", &v), Some(json!(3)));
        assert_eq!(get("$.list[3]", &v), None);
        assert_eq!(get("$.list[-4]", &v), None);
        assert_eq!(get("$.missing", &v), None);
        assert_eq!(get("$.token.x", &v), None);
        assert_eq!(get("$[0]", &json!([7])), Some(json!(7)));
    }

    #[test]
    fn rejects_what_it_does_not_support() {
        assert_eq!(JsonPath::parse("token").unwrap_err().0, 0);
        assert_eq!(JsonPath::parse("$.").unwrap_err().0, 1);
        assert_eq!(JsonPath::parse("$.a[").unwrap_err().0, 3);
        assert!(JsonPath::parse("$.a[*]").is_err());
        assert!(JsonPath::parse("$..a").is_err());
        assert!(JsonPath::parse("$a").is_err());
    }

    #[test]
    fn values_and_equality() {
        assert_eq!(value_text(&json!("x")), "x");
        assert_eq!(value_text(&json!(12)), "12");
        assert_eq!(value_text(&json!({"a": 1})), "{\"a\":1}");
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(json_equal(&json!({"a": [1]}), &json!({"a": [1.0]})));
        assert!(!json_equal(&json!("1"), &json!(1)));
    }
}
