//! The JSON result: the versioned contract (`stats::SCHEMA`).

use stats::RunResult;
use std::io::{self, Write};

/// Writes the result as pretty JSON followed by a newline.
pub fn write(r: &RunResult, mut w: impl Write) -> io::Result<()> {
    // From keeps the underlying I/O error (a full disk stays ENOSPC).
    serde_json::to_writer_pretty(&mut w, r).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

/// A document's `schema` tag, read without building the rest (None: it
/// has none); an error when the text is not JSON.
pub fn schema(text: &str) -> Result<Option<String>, String> {
    #[derive(serde::Deserialize)]
    struct Tag {
        schema: Option<serde_json::Value>,
    }
    // A result is a JSON object: anything else (an access log, whose
    // `127.0.0.1` reads as the number 127.0) is said so, not in serde's
    // words about the struct it was read into.
    if !text.trim_start().starts_with('{') {
        return Err("not a yace result: it is not a JSON object (a result starts with '{')".into());
    }
    let tag: Tag = serde_json::from_str(text).map_err(|e| {
        if e.is_data() {
            "not a yace result: its \"schema\" is not a name".to_string()
        } else {
            // Syntax and end of file: the place is what helps.
            format!("not JSON: {e}")
        }
    })?;
    Ok(tag.schema.and_then(|s| s.as_str().map(str::to_string)))
}

/// Reads a result written by [`write()`], checking its schema tag.
pub fn read(text: &str) -> Result<RunResult, String> {
    match schema(text)?.as_deref() {
        Some(stats::SCHEMA) => {}
        Some(other) => return Err(format!("schema '{other}' is not '{}'", stats::SCHEMA)),
        None => return Err("not a yace result (no \"schema\" field)".into()),
    }
    serde_json::from_str(text).map_err(|e| format!("does not match {}: {e}", stats::SCHEMA))
}
