//! Problems with the user's input, each a [`Diagnostic`] keyed by where it
//! is: a plan [`Field`], a place in a file, or a named input. The plan names
//! fields, not flags: each front end spells a field its own way (`yace run`
//! says `-c/--connections`, `yace ab` says `-c`) through a [`Spelling`]
//! when it shows the problems. Flags and scenario files report through the
//! same type, every problem collected before any is shown.

use std::fmt;

/// An input the plan is built from, whatever a front end calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Url,
    Connections,
    Requests,
    Duration,
    Threads,
    Rate,
    RateStages,
    MaxInflight,
    Late,
    LateAfter,
    Users,
    RampUp,
    RampDown,
    UserStages,
    Pacing,
    Think,
    Method,
    Header,
    BodyFile,
    /// Off: a connection per request.
    Keepalive,
    Http2,
    Streams,
    Timeout,
    ConnectTimeout,
    Proxy,
    /// TLS certificate verification off.
    Insecure,
    /// Trust these CA certificates.
    CaCert,
    /// The client certificate (mutual TLS).
    ClientCert,
    /// The client certificate's key.
    ClientKey,
    /// Largest response head (and trailer block) read.
    MaxHead,
    /// Most fields in a response head (and trailer block).
    MaxFields,
}

impl Field {
    /// A neutral name, for messages shown without a front end's spelling.
    pub fn key(self) -> &'static str {
        match self {
            Field::Url => "url",
            Field::Connections => "connections",
            Field::Requests => "requests",
            Field::Duration => "duration",
            Field::Threads => "threads",
            Field::Rate => "rate",
            Field::RateStages => "stages",
            Field::MaxInflight => "max_inflight",
            Field::Late => "late",
            Field::LateAfter => "late_after",
            Field::Users => "users",
            Field::RampUp => "ramp_up",
            Field::RampDown => "ramp_down",
            Field::UserStages => "user_stages",
            Field::Pacing => "pacing",
            Field::Think => "think",
            Field::Method => "method",
            Field::Header => "header",
            Field::BodyFile => "body_file",
            Field::Keepalive => "keepalive",
            Field::Http2 => "http2",
            Field::Streams => "streams",
            Field::Timeout => "timeout",
            Field::ConnectTimeout => "connect_timeout",
            Field::Proxy => "proxy",
            Field::Insecure => "insecure",
            Field::CaCert => "cacert",
            Field::ClientCert => "cert",
            Field::ClientKey => "key",
            Field::MaxHead => "max_head",
            Field::MaxFields => "max_fields",
        }
    }
}

/// How a front end names the fields: in the place of an error (`name`) and
/// in an example command of a hint (`usage`).
pub trait Spelling: fmt::Debug + Sync {
    /// `-c/--connections`.
    fn name(&self, field: Field) -> &'static str;
    /// `-c`, as in `e.g. -c 10`.
    fn usage(&self, field: Field) -> &'static str {
        self.name(field)
    }
}

/// The neutral spelling: each field by its [`Field::key`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Keys;

impl Spelling for Keys {
    fn name(&self, field: Field) -> &'static str {
        field.key()
    }
}

/// Where a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A field of the plan, spelled by the front end.
    Field(Field),
    /// A field and the value at fault, shown after it: `--body-file PATH`.
    FieldValue(Field, String),
    /// An input with a name of its own: an ab-only flag, an environment
    /// variable.
    Named(String),
    /// A place in a text file; `line` and `column` count from 1 (columns in
    /// characters), both 0 when the problem has no place in it.
    File {
        file: String,
        line: usize,
        column: usize,
    },
}

impl Source {
    fn spelled(&self, s: &dyn Spelling) -> String {
        match self {
            Source::Field(f) => s.name(*f).to_owned(),
            Source::FieldValue(f, v) => format!("{} {v}", s.name(*f)),
            Source::Named(n) => n.clone(),
            Source::File { file, line, column } if *line > 0 => {
                format!("{file}:{line}:{column}")
            }
            Source::File { file, .. } => file.clone(),
        }
    }
}

impl From<Field> for Source {
    fn from(f: Field) -> Self {
        Source::Field(f)
    }
}

impl From<&str> for Source {
    fn from(s: &str) -> Self {
        Source::Named(s.to_owned())
    }
}

impl From<String> for Source {
    fn from(s: String) -> Self {
        Source::Named(s)
    }
}

/// One problem with the user's input: where, what is wrong, how to fix it;
/// shown as `source: problem (hint)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub source: Source,
    pub problem: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    /// The plan field it is about, if it is about one.
    pub fn field(&self) -> Option<Field> {
        match &self.source {
            Source::Field(f) | Source::FieldValue(f, _) => Some(*f),
            _ => None,
        }
    }

    /// The file it is in, for a problem in a file.
    pub fn file(&self) -> Option<&str> {
        match &self.source {
            Source::File { file, .. } => Some(file),
            _ => None,
        }
    }

    /// Its line in the file (from 1); 0 when it has none.
    pub fn line(&self) -> usize {
        match &self.source {
            Source::File { line, .. } => *line,
            _ => 0,
        }
    }

    /// Its column in the line (from 1, in characters); 0 when it has none.
    pub fn column(&self) -> usize {
        match &self.source {
            Source::File { column, .. } => *column,
            _ => 0,
        }
    }

    /// `source: problem (hint)`, the source spelled by `s`.
    pub fn render(&self, s: &dyn Spelling) -> String {
        let mut out = format!("{}: {}", self.source.spelled(s), self.problem);
        if let Some(h) = &self.hint {
            out.push_str(&format!(" ({h})"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&Keys))
    }
}

/// All the problems found in one input, reported together, one a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// One line per problem, the sources spelled by `s`.
    pub fn render(&self, s: &dyn Spelling) -> String {
        self.0
            .iter()
            .map(|e| e.render(s))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&Keys))
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_place() {
        let d = Diagnostic {
            source: Source::File {
                file: "a.toml".into(),
                line: 3,
                column: 5,
            },
            problem: "bad".into(),
            hint: Some("fix it".into()),
        };
        assert_eq!(d.to_string(), "a.toml:3:5: bad (fix it)");
        assert_eq!((d.file(), d.line(), d.column()), (Some("a.toml"), 3, 5));
        let e = Diagnostic {
            source: Source::File {
                file: "$YACE_USERS".into(),
                line: 0,
                column: 0,
            },
            problem: "not a number".into(),
            hint: None,
        };
        assert_eq!(e.to_string(), "$YACE_USERS: not a number");
        assert_eq!(
            Diagnostics(vec![d, e]).to_string(),
            "a.toml:3:5: bad (fix it)\n$YACE_USERS: not a number"
        );
    }
}
