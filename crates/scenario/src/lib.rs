//! Scenario files for yace: virtual users that repeat a journey of named
//! steps, with cookies, variables, extraction, checks and think time.
//!
//! Pure: [`load`]/[`parse`] read and validate a TOML or YAML file, reporting
//! every problem at once with its line and column; [`Scenario::runner`] gives
//! each worker a [`Runner`] that, per [`User`], writes the next HTTP/1.1
//! request and digests responses. No sockets, threads or clocks: the engine
//! sends the bytes, waits the think times, and reports what came back. The
//! file format is documented in `docs/scenario.md`.

// Pure: no I/O beyond what std offers safely, and no unsafe code.
#![forbid(unsafe_code)]

mod build;
mod data;
mod diag;
mod ident;
mod jsonpath;
mod load;
mod node;
mod program;
mod read;
mod runner;
mod step;
mod template;
mod think;

/// The positioned document that scenario files are read into, and the
/// typed readers that report every problem with its file:line:col — for
/// other files of yace's (the lab's experiments) to say their problems the
/// same way.
pub mod doc {
    pub use crate::diag::{did_you_mean, Pos, Sink};
    pub use crate::node::{Entry, Kind, Node, Text};
    pub use crate::read::{
        any_table, boolean, duration, list, positive, scalar_text, string, strings, table, to_json,
        uint, wrong_type, Fields,
    };
    pub use crate::Format;
    use plan::Diagnostics;

    /// Parses `text` (TOML or YAML) into the positioned tree; syntax errors
    /// come back as diagnostics in `origin`.
    pub fn parse(text: &str, format: Format, origin: &str) -> Result<Node, Diagnostics> {
        let root = match format {
            Format::Toml => crate::node::from_toml(text),
            Format::Yaml => crate::node::from_yaml(text),
        };
        root.map_err(|errors| {
            let mut sink = Sink::new(origin);
            for (pos, msg) in errors {
                sink.err(pos, msg);
            }
            sink.finish()
        })
    }
}

pub use data::DataMode;
pub use load::{LoadSpec, Overrides, Source, Stage, ENV};
pub use plan::Think;
pub use plan::{Diagnostic, Diagnostics};
pub use runner::{Action, Capture, CheckCount, Runner, User};
pub use sample::Captured;

use diag::{Pos, Sink};
use program::Program;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The two spellings of one schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Yaml,
}

impl Format {
    /// By extension: `.toml`, `.yaml` or `.yml`.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "toml" => Some(Format::Toml),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// One request step, as the statistics see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepInfo {
    /// Dense: steps are numbered 0..n in file order.
    pub id: u16,
    pub name: String,
    pub journey: String,
    /// Per-step thresholds, unparsed (`"p95<300ms"`).
    pub thresholds: Vec<String>,
    /// The `choice` this step is an option of.
    pub group: Option<String>,
    pub method: String,
    /// The url as written (a template).
    pub url: String,
}

/// A validated scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    prog: Arc<Program>,
    load: LoadSpec,
    steps: Vec<StepInfo>,
    base: Base,
}

/// Where a scenario's target came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The file's `base`.
    File,
    /// Given by the caller (the command line's URL, or the embedded
    /// target's): it replaces the file's `base` everywhere — the address,
    /// the Host header and the path in front of each step's url.
    Given,
    /// Neither: the file has no `base` and none was given. Such a scenario
    /// validates (for `--dry-run`) but has no target to run against.
    Missing,
}

/// Reads a scenario file against `base` (a URL) instead of the file's own
/// `base`; see [`load`].
pub fn load_with_base(
    path: &Path,
    env: &BTreeMap<String, String>,
    base: Option<&str>,
) -> Result<Scenario, Diagnostics> {
    read_file(path, env, base)
}

/// Reads a scenario file; the format follows the extension. `env` is the
/// process environment (or a test's): `YACE_*` variables override `[load]`.
pub fn load(path: &Path, env: &BTreeMap<String, String>) -> Result<Scenario, Diagnostics> {
    read_file(path, env, None)
}

fn read_file(
    path: &Path,
    env: &BTreeMap<String, String>,
    base: Option<&str>,
) -> Result<Scenario, Diagnostics> {
    let origin = path.display().to_string();
    let fail = |message: String, hint: Option<&str>| {
        Diagnostics(vec![Diagnostic {
            source: plan::Source::File {
                file: origin.clone(),
                line: 0,
                column: 0,
            },
            problem: message,
            hint: hint.map(str::to_owned),
        }])
    };
    let format = Format::from_path(path).ok_or_else(|| {
        fail(
            "a scenario file must end in .toml, .yaml or .yml".into(),
            Some("rename it, so its format is known"),
        )
    })?;
    let text =
        std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}"), None))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    parse_with_base(&text, format, &origin, dir, env, base)
}

/// Parses and validates scenario text. `origin` names it in diagnostics;
/// files it names (data sets, bodies) are read relative to `dir`.
pub fn parse(
    text: &str,
    format: Format,
    origin: &str,
    dir: &Path,
    env: &BTreeMap<String, String>,
) -> Result<Scenario, Diagnostics> {
    parse_with_base(text, format, origin, dir, env, None)
}

/// [`parse`], against `base` (a URL) instead of the text's own `base`.
pub fn parse_with_base(
    text: &str,
    format: Format,
    origin: &str,
    dir: &Path,
    env: &BTreeMap<String, String>,
    base: Option<&str>,
) -> Result<Scenario, Diagnostics> {
    let mut sink = Sink::new(origin);
    let root = match format {
        Format::Toml => node::from_toml(text),
        Format::Yaml => node::from_yaml(text),
    };
    let root = match root {
        Ok(r) => r,
        Err(errors) => {
            for (pos, msg) in errors {
                sink.err(pos, msg);
            }
            return Err(sink.finish());
        }
    };
    match build::build(&root, origin, dir, env, base, &mut sink) {
        Some(b) if sink.is_empty() => Ok(Scenario {
            prog: Arc::new(b.prog),
            load: b.load,
            steps: b.steps,
            base: b.base,
        }),
        _ => {
            if sink.is_empty() {
                sink.err(Pos::new(1, 1), "the scenario is not valid");
            }
            Err(sink.finish())
        }
    }
}

impl Scenario {
    /// The one connection target: the given base, else the file's
    /// `base`; `None` when there is neither (see [`Base::Missing`]).
    pub fn base(&self) -> Option<&plan::Target> {
        (self.base != Base::Missing).then_some(&self.prog.base)
    }

    /// Where [`Scenario::base`] came from.
    pub fn base_origin(&self) -> Base {
        self.base
    }

    pub fn load_spec(&self) -> &LoadSpec {
        &self.load
    }

    /// Every request step, flattened (choice options included), by id.
    pub fn steps(&self) -> &[StepInfo] {
        &self.steps
    }

    /// Run-wide thresholds (`[load].thresholds`).
    pub fn thresholds(&self) -> &[String] {
        &self.load.thresholds
    }

    /// A runner for one worker thread; all share the compiled scenario.
    pub fn runner(&self) -> Runner {
        Runner::new(Arc::clone(&self.prog))
    }

    /// The resolved scenario, for `--dry-run`.
    pub fn to_json(&self) -> serde_json::Value {
        self.prog.json.clone()
    }

    /// [`Scenario::to_json`] as outputs show it: secret header values, URL
    /// passwords and query values, and variables and form or JSON body
    /// fields whose names look secret are `***` (see `plan::secrets`).
    pub fn to_json_redacted(&self, secrets: &plan::secrets::Secrets) -> serde_json::Value {
        let mut v = self.prog.json.clone();
        redact(&mut v, secrets, None, false);
        v
    }
}

/// Walks the dry-run document; `key` is the name the value is stored
/// under, `named` whether that name is the user's own (a variable, a form or
/// JSON body field), judged by the same rule as a header's name.
fn redact(v: &mut serde_json::Value, s: &plan::secrets::Secrets, key: Option<&str>, named: bool) {
    use plan::secrets::MASK;
    use serde_json::Value;
    match v {
        Value::String(text) => match key {
            Some("url" | "base") if !named => *text = s.url(text),
            Some(k) if named && s.header_is_secret(k) => *text = MASK.to_owned(),
            _ => {}
        },
        Value::Array(items) if key == Some("headers") && !named => {
            for h in items {
                if let Some([Value::String(name), Value::String(value)]) =
                    h.as_array_mut().map(Vec::as_mut_slice)
                {
                    if s.header_is_secret(name) {
                        *value = MASK.to_owned();
                    }
                }
            }
        }
        Value::Array(items) => {
            for i in items {
                redact(i, s, None, named);
            }
        }
        Value::Object(map) => {
            let inner = named || matches!(key, Some("vars" | "form" | "json"));
            for (k, item) in map.iter_mut() {
                redact(item, s, Some(k), inner);
            }
        }
        _ => {}
    }
}
