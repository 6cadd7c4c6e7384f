//! `yace import`: a user's real traffic turned into yace input.
//!
//! - [`curl`]: a curl command (a browser's "Copy as cURL", bash syntax) →
//!   an equivalent `yace run` command line, or a scenario step.
//! - [`har`]: a HAR capture (a browser's "Save all as HAR") → a scenario
//!   file: one journey, think times from the capture, static assets and
//!   other hosts left out, and values the server handed out (a CSRF token
//!   in a hidden input, a JSON token, a Set-Cookie, a Location) replaced
//!   by variables extracted from the response that carried them.
//!
//! - [`access_log`]: a web server's access log (nginx or Apache
//!   `combined`/`common`, nginx JSON, an nginx `log_format`) → a replay
//!   plan: the URL mix as weighted journeys at the log's mean rate, or its
//!   arrivals second by second (`rate_stages`).
//!
//! Pure: text in, text out (an access log as a stream the caller opens,
//! read a line at a time); no files, sockets or clocks. Each import
//! returns its text and what the user must be told ([`Output`]): warnings
//! for what was not imported (every curl flag is named), notes for what
//! was changed or kept (credentials).

#![forbid(unsafe_code)]

mod access;
mod curl;
mod har;
mod json;
pub mod shell;
mod text;
mod write;

pub use access::{AccessLogOptions, LogFile, LogFormat, Replay, MAX_TOP};
pub use curl::{Body, Request};
pub use har::HarOptions;

use std::fmt;

/// The two spellings of a scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Toml,
    Yaml,
}

/// An input that cannot be imported: what is wrong, and where (1-based
/// line and column of the input text) when it is in one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Error {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub(crate) fn at(message: impl Into<String>, line: usize, column: usize) -> Self {
        Error {
            message: message.into(),
            line: Some(line),
            column: Some(column),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "line {l}, column {c}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// An import's result: the text for standard output, and the lines for
/// standard error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub text: String,
    /// What was not imported (`curl flag --foo is not imported: …`).
    pub warnings: Vec<String>,
    /// What was changed, left out on purpose, or kept (credentials).
    pub notes: Vec<String>,
}

/// What `yace import curl` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CurlOutput {
    /// A `yace run` command line.
    Run,
    /// A scenario step.
    Step(Format),
}

/// Reads a curl command as pasted (bash syntax, one string).
pub fn parse_curl(text: &str) -> Result<(Request, Vec<String>, Vec<String>), Error> {
    curl::parse_text(text)
}

/// Imports a curl command given as one string (bash syntax).
pub fn curl(text: &str, out: CurlOutput) -> Result<Output, Error> {
    let (req, warnings, notes) = curl::parse_text(text)?;
    Ok(curl_output(&req, warnings, notes, out))
}

/// Imports a curl command already split into arguments (by the shell that
/// ran `yace import curl curl -X POST …`); the first may be `curl`.
pub fn curl_args(args: &[String], out: CurlOutput) -> Result<Output, Error> {
    let (req, warnings, notes) = curl::parse_args(args)?;
    Ok(curl_output(&req, warnings, notes, out))
}

fn curl_output(
    req: &Request,
    warnings: Vec<String>,
    notes: Vec<String>,
    out: CurlOutput,
) -> Output {
    match out {
        CurlOutput::Run => curl::run_command(req, warnings, notes),
        CurlOutput::Step(format) => curl::step(req, format, warnings, notes),
    }
}

/// Imports a HAR capture as a scenario file.
pub fn har(text: &str, options: &HarOptions) -> Result<Output, Error> {
    har::import(text, options)
}

/// Imports an access log, read from `input` a line at a time (memory does
/// not grow with the log), as a replay plan. A gzip-compressed log is
/// read as it is (told by its first bytes, 1f 8b, not its name).
pub fn access_log(
    input: &mut dyn std::io::BufRead,
    options: &AccessLogOptions,
) -> Result<Output, Error> {
    access::import(input, options)
}

/// Imports several access logs, read in turn (a rotated set, oldest
/// first: `access.log.2.gz access.log.1 access.log`), as one replay plan.
/// Each may be gzip-compressed (told by its first bytes), as
/// [`access_log`]'s input may.
pub fn access_logs(files: Vec<LogFile>, options: &AccessLogOptions) -> Result<Output, Error> {
    access::import_files(files, options)
}
