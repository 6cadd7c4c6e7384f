//! A scenario compiled for running: every template resolved, every regex and
//! JSON path compiled, every check numbered. Shared read-only by the workers.

use crate::data::Dataset;
use crate::jsonpath::JsonPath;
use crate::template::Template;
use crate::Capture;
use plan::Think;
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Program {
    pub base: plan::Target,
    pub data: Vec<Dataset>,
    pub journeys: Vec<Journey>,
    /// Indexed by step id.
    pub steps: Vec<Step>,
    /// Extracted variables, by slot.
    pub slots: Vec<String>,
    /// Check and extract counters: (step, name).
    pub counters: Vec<(u16, String)>,
    pub cookies: bool,
    pub seed: u64,
    /// The resolved scenario for `--dry-run` (built once, with the file).
    pub json: serde_json::Value,
}

#[derive(Debug)]
pub(crate) struct Journey {
    pub weight: f64,
    pub slots: Vec<Slot>,
}

/// One place in a journey: a step, or a weighted choice of steps.
#[derive(Debug)]
pub(crate) enum Slot {
    Step(u16),
    Choice(Vec<(u16, f64)>),
}

#[derive(Debug)]
pub(crate) struct Step {
    pub method: String,
    pub head: bool,
    pub idempotent: bool,
    /// Renders the request target; when `dynamic`, it may render to an
    /// absolute URL or a path not yet under base's path, fixed at run time.
    pub url: Template,
    pub dynamic: bool,
    /// In order, Cookie excluded.
    pub headers: Vec<(String, Template)>,
    pub cookie: Option<Template>,
    pub user_agent: bool,
    pub accept: bool,
    pub content_type: Option<&'static str>,
    pub body: Body,
    /// Content-Length even when empty (methods that carry a body).
    pub send_length: bool,
    pub extracts: Vec<Extract>,
    pub checks: Vec<Check>,
    pub think: Think,
    pub capture: Capture,
    pub abort_on_fail: bool,
}

#[derive(Debug)]
pub(crate) enum Body {
    None,
    Bytes(Vec<u8>),
    Template(Template),
}

#[derive(Debug)]
pub(crate) struct Extract {
    pub slot: usize,
    pub from: ExtractFrom,
    pub counter: usize,
}

#[derive(Debug)]
pub(crate) enum ExtractFrom {
    Json(JsonPath),
    Header(String),
    Regex(regex::bytes::Regex, usize),
    Cookie(String),
}

#[derive(Debug)]
pub(crate) struct Check {
    pub kind: CheckKind,
    pub counter: usize,
}

#[derive(Debug)]
pub(crate) enum CheckKind {
    Status(u16),
    StatusIn(Vec<u16>),
    /// The literal, escaped into a regex (a fast substring search).
    BodyContains(regex::bytes::Regex),
    BodyMatches(regex::bytes::Regex),
    Json(JsonPath, Option<serde_json::Value>),
    Header(String, HeaderTest),
    MaxLatency(Duration),
}

#[derive(Debug)]
pub(crate) enum HeaderTest {
    Exists,
    Equals(String),
    Contains(String),
}

impl ExtractFrom {
    pub(crate) fn capture(&self) -> Capture {
        match self {
            ExtractFrom::Header(_) | ExtractFrom::Cookie(_) => Capture::Head,
            ExtractFrom::Json(_) | ExtractFrom::Regex(..) => Capture::HeadAndBody,
        }
    }
}

impl CheckKind {
    pub(crate) fn capture(&self) -> Capture {
        match self {
            CheckKind::Status(_) | CheckKind::StatusIn(_) | CheckKind::MaxLatency(_) => {
                Capture::None
            }
            CheckKind::Header(..) => Capture::Head,
            CheckKind::BodyContains(_) | CheckKind::BodyMatches(_) | CheckKind::Json(..) => {
                Capture::HeadAndBody
            }
        }
    }
}
