//! The whole result inside the page, so that a report mailed around can be
//! read back (`yace report report.html`), re-rendered and compared.
//!
//! Each result sits in a `<script type="application/x-yace-result">`
//! element (never run by a browser) as base64 of gzip of a JSON document:
//! the result with its per-second rows turned into columns (one array per
//! field, or `{"from", "step"}` for the seconds: a 24-hour run compresses
//! several times better so), which [`read`] turns back into the very same
//! result. By hand: `base64 -d | gunzip` gives that JSON.
//!
//! The columns follow the rows' own serialized fields, so a field added to
//! the series later is carried without a change here.

use base64::Engine as _;
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use serde::ser::{Impossible, Serialize, SerializeStruct, Serializer};
use serde_json::{Map, Value};
use stats::{RunResult, SecondRow};
use std::fmt::Write as _;
use std::io::{Read, Write};

/// The element's type; nothing else on the page uses it.
pub(crate) const TYPE: &str = "application/x-yace-result";
/// The embedded document's own tag (what the columns mean).
const FORMAT: &str = "yace.embedded.v1";
/// Most latency intervals a page carries (a 20-minute run's 5-second ones;
/// longer runs' are merged evenly).
const MAX_INTERVALS: usize = 240;
/// Most bytes a decompressed document may have (a 24-hour run is ~10 MB).
const MAX_INFLATED: u64 = 1 << 30;

/// The series as columns: field names in first-seen order, and per field
/// one value per row (null where a row skips the field).
struct Columns {
    names: Vec<&'static str>,
    values: Vec<Vec<Value>>,
    rows: usize,
}

impl Columns {
    fn push(&mut self, row: &SecondRow) {
        let mut fields = Fields(Vec::with_capacity(self.names.len()));
        row.serialize(&mut fields)
            .expect("a per-second row serializes");
        for (name, v) in fields.0 {
            let at = match self.names.iter().position(|n| *n == name) {
                Some(at) => at,
                None => {
                    self.names.push(name);
                    self.values.push(vec![Value::Null; self.rows]);
                    self.names.len() - 1
                }
            };
            let col = &mut self.values[at];
            col.resize(self.rows, Value::Null);
            col.push(v);
        }
        self.rows += 1;
    }

    fn into_json(self) -> Map<String, Value> {
        let rows = self.rows;
        self.names
            .into_iter()
            .zip(self.values)
            .map(|(name, mut col)| {
                col.resize(rows, Value::Null);
                (name.to_string(), squeeze(col))
            })
            .collect()
    }
}

/// Captures a struct's serialized fields in order, each as a JSON value.
struct Fields(Vec<(&'static str, Value)>);

#[derive(Debug)]
struct NotAStruct(String);

impl std::fmt::Display for NotAStruct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAStruct {}

impl serde::ser::Error for NotAStruct {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        NotAStruct(msg.to_string())
    }
}

fn not_a_struct<T>() -> Result<T, NotAStruct> {
    Err(NotAStruct("only a struct's fields are captured".into()))
}

impl SerializeStruct for &mut Fields {
    type Ok = ();
    type Error = NotAStruct;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), NotAStruct> {
        let v = serde_json::to_value(value).map_err(|e| NotAStruct(e.to_string()))?;
        self.0.push((key, v));
        Ok(())
    }

    fn end(self) -> Result<(), NotAStruct> {
        Ok(())
    }
}

impl Serializer for &mut Fields {
    type Ok = ();
    type Error = NotAStruct;
    type SerializeSeq = Impossible<(), NotAStruct>;
    type SerializeTuple = Impossible<(), NotAStruct>;
    type SerializeTupleStruct = Impossible<(), NotAStruct>;
    type SerializeTupleVariant = Impossible<(), NotAStruct>;
    type SerializeMap = Impossible<(), NotAStruct>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), NotAStruct>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, NotAStruct> {
        Ok(self)
    }
    fn serialize_bool(self, _: bool) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_i8(self, _: i8) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_i16(self, _: i16) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_i32(self, _: i32) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_i64(self, _: i64) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_u8(self, _: u8) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_u16(self, _: u16) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_u32(self, _: u32) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_u64(self, _: u64) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_f32(self, _: f32) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_f64(self, _: f64) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_char(self, _: char) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_str(self, _: &str) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_none(self) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_unit(self) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), NotAStruct> {
        not_a_struct()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAStruct> {
        not_a_struct()
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotAStruct> {
        not_a_struct()
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotAStruct> {
        not_a_struct()
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotAStruct> {
        not_a_struct()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAStruct> {
        not_a_struct()
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotAStruct> {
        not_a_struct()
    }
}

/// `r` as the element's content.
pub(crate) fn encode(r: &RunResult) -> String {
    let mut columns = Columns {
        names: Vec::new(),
        values: Vec::new(),
        rows: 0,
    };
    for row in &r.series {
        columns.push(row);
    }
    // A page keeps at most MAX_INTERVALS latency intervals (merged evenly,
    // still exact to merge): an hour's 5-second intervals would double it.
    let mut histograms = r.histograms.clone();
    histograms.intervals = stats::hist::coarsen_intervals(&histograms.intervals, MAX_INTERVALS);
    let mut rest = serde_json::to_value(RunResult {
        series: Vec::new(),
        histograms,
        ..r.clone()
    })
    .expect("a result serializes");
    if let Value::Object(m) = &mut rest {
        m.remove("series");
    }
    let doc = serde_json::json!({
        "format": FORMAT,
        "rows": columns.rows,
        "result": rest,
        "series": columns.into_json(),
    });
    // Whole, then compressed: the compressor is slow with many tiny writes.
    // Level 4: a 24-hour page is 10% larger than at the default level, and
    // rendered in a third of the time.
    let text = serde_json::to_vec(&doc).expect("a result serializes");
    let mut gz = GzEncoder::new(Vec::with_capacity(text.len() / 4), Compression::new(4));
    gz.write_all(&text).expect("writing to memory");
    let bytes = gz.finish().expect("writing to memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A column of whole numbers in steps of one size (the seconds: 0, 1, 2,
/// …) as `{"from": a, "step": d}`; any other column as it is.
fn squeeze(mut col: Vec<Value>) -> Value {
    // Whole floats as integers (6911.0 as 6911): they read back as the
    // same f64, in fewer characters.
    for v in &mut col {
        if let Some(f) = v
            .as_f64()
            .filter(|f| v.is_f64() && f.fract() == 0.0 && f.abs() < 9e15)
        {
            *v = Value::from(f as i64);
        }
    }
    let ints: Option<Vec<i64>> = col.iter().map(Value::as_i64).collect();
    if let Some(v) = ints.filter(|v| v.len() >= 2) {
        let step = v[1].wrapping_sub(v[0]);
        if v.windows(2).all(|w| w[1].wrapping_sub(w[0]) == step) {
            return serde_json::json!({"from": v[0], "step": step});
        }
    }
    Value::Array(col)
}

/// The inverse of [`squeeze`], for `n` rows.
fn unsqueeze(name: &str, col: Value, n: usize) -> Result<Vec<Value>, String> {
    let col = match col {
        Value::Array(col) => col,
        Value::Object(m) => {
            let (Some(from), Some(step)) = (
                m.get("from").and_then(Value::as_i64),
                m.get("step").and_then(Value::as_i64),
            ) else {
                return Err(format!("embedded column {name} is not a column"));
            };
            (0..n as i64)
                .map(|i| Value::from(from + i * step))
                .collect()
        }
        _ => return Err(format!("embedded column {name} is not a column")),
    };
    if col.len() != n {
        return Err(format!(
            "embedded column {name} has {} values for {n} rows",
            col.len()
        ));
    }
    Ok(col)
}

/// The result held by one element's content.
fn decode(b64: &str) -> Result<RunResult, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|e| format!("the embedded result is not base64: {e}"))?;
    let mut text = Vec::new();
    GzDecoder::new(&bytes[..])
        .take(MAX_INFLATED)
        .read_to_end(&mut text)
        .map_err(|e| format!("the embedded result does not decompress: {e}"))?;
    let mut doc: Value = serde_json::from_slice(&text)
        .map_err(|e| format!("the embedded result is not JSON: {e}"))?;
    if doc.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("the embedded result is not {FORMAT}"));
    }
    let n = doc.get("rows").and_then(Value::as_u64).unwrap_or(0) as usize;
    let columns = match doc.get_mut("series") {
        Some(Value::Object(m)) => std::mem::take(m),
        _ => Map::new(),
    };
    let mut names = Vec::with_capacity(columns.len());
    let mut cols = Vec::with_capacity(columns.len());
    for (name, col) in columns {
        cols.push(unsqueeze(&name, col, n)?);
        names.push(serde_json::to_string(&name).expect("a string serializes"));
    }
    // The rows as JSON text, parsed once into typed rows.
    let mut rows = String::with_capacity(n * 32 * names.len().max(1));
    rows.push('[');
    for i in 0..n {
        rows.push_str(if i == 0 { "{" } else { ",{" });
        let mut first = true;
        for (name, col) in names.iter().zip(&cols) {
            if col[i].is_null() {
                continue;
            }
            let _ = write!(rows, "{}{name}:{}", if first { "" } else { "," }, col[i]);
            first = false;
        }
        rows.push('}');
    }
    rows.push(']');
    let series: Vec<SecondRow> = serde_json::from_str(&rows)
        .map_err(|e| format!("the embedded per-second rows do not read: {e}"))?;
    let mut result = doc.get_mut("result").map(Value::take).unwrap_or_default();
    if let Value::Object(m) = &mut result {
        m.insert("series".into(), Value::Array(Vec::new()));
    }
    let mut r = crate::json::read(&result.to_string())?;
    r.series = series;
    Ok(r)
}

/// Every result a page holds, with the label it was shown under, in order.
pub fn read(page: &str) -> Result<Vec<(String, RunResult)>, String> {
    let open = format!("<script type=\"{TYPE}\"");
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find(&open) {
        rest = &rest[at + open.len()..];
        let head_end = rest.find('>').ok_or("an embedded result is cut short")?;
        let label = attr(&rest[..head_end], "data-label").unwrap_or_default();
        rest = &rest[head_end + 1..];
        let end = rest
            .find("</script>")
            .ok_or("an embedded result is cut short")?;
        out.push((label, decode(&rest[..end])?));
        rest = &rest[end..];
    }
    if out.is_empty() {
        return Err("this page holds no yace result (not a yace HTML report?)".into());
    }
    Ok(out)
}

/// An attribute's value in an element's head, unescaped.
fn attr(head: &str, name: &str) -> Option<String> {
    let key = format!("{name}=\"");
    let from = head.find(&key)? + key.len();
    let to = head[from..].find('"')? + from;
    Some(super::unescape(&head[from..to]))
}

/// Writes the element for `r`.
pub(crate) fn element(w: &mut impl Write, label: &str, r: &RunResult) -> std::io::Result<()> {
    writeln!(
        w,
        "<script type=\"{TYPE}\" data-label=\"{}\">{}</script>",
        super::esc(label),
        encode(r)
    )
}
