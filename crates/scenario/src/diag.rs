//! Problems found in a scenario, each pointing at the place that causes it.

use std::fmt;

/// One problem: `file:line:col: message (hint)`.
///
/// `line` and `column` count from 1; both are 0 when the problem has no place
/// in a file (an environment variable, say), and then only `file: message` is
/// printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )?;
        } else {
            write!(f, "{}: {}", self.file, self.message)?;
        }
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

/// Every problem found in one load, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// A place in a text file; both count from 1 (columns in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    pub(crate) fn new(line: usize, col: usize) -> Pos {
        Pos { line, col }
    }
}

/// Collects diagnostics for one file.
#[derive(Debug)]
pub(crate) struct Sink {
    pub file: String,
    pub list: Vec<Diagnostic>,
}

impl Sink {
    pub(crate) fn new(file: &str) -> Sink {
        Sink {
            file: file.to_owned(),
            list: Vec::new(),
        }
    }

    pub(crate) fn err(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(pos, message.into(), None);
    }

    pub(crate) fn hint(&mut self, pos: Pos, message: impl Into<String>, hint: impl Into<String>) {
        self.push(pos, message.into(), Some(hint.into()));
    }

    pub(crate) fn push(&mut self, pos: Pos, message: String, hint: Option<String>) {
        let file = self.file.clone();
        self.push_in(&file, pos, message, hint);
    }

    /// A problem in another file (a data file, say).
    pub(crate) fn push_in(&mut self, file: &str, pos: Pos, message: String, hint: Option<String>) {
        self.list.push(Diagnostic {
            file: file.to_owned(),
            line: pos.line,
            column: pos.col,
            message,
            hint,
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The diagnostics, the scenario file's first and by position; data
    /// files and the environment after it, in the order found.
    pub(crate) fn finish(mut self) -> Diagnostics {
        let origin = self.file.clone();
        self.list.sort_by_key(|d| {
            if d.file == origin {
                (0, d.line, d.column)
            } else {
                (1, 0, 0)
            }
        });
        self.list.dedup();
        Diagnostics(self.list)
    }
}

/// Closest candidate to a misspelt name, for "did you mean" hints.
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(&word.to_ascii_lowercase(), &c.to_ascii_lowercase());
        let limit = (c.len().max(word.len()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_place() {
        let d = Diagnostic {
            file: "a.toml".into(),
            line: 3,
            column: 5,
            message: "bad".into(),
            hint: Some("fix it".into()),
        };
        assert_eq!(d.to_string(), "a.toml:3:5: bad (fix it)");
        let e = Diagnostic {
            file: "$YACE_USERS".into(),
            line: 0,
            column: 0,
            message: "not a number".into(),
            hint: None,
        };
        assert_eq!(e.to_string(), "$YACE_USERS: not a number");
        assert_eq!(
            Diagnostics(vec![d, e]).to_string(),
            "a.toml:3:5: bad (fix it)\n$YACE_USERS: not a number"
        );
    }

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("thnk", &["think", "name"]), Some("think"));
        assert_eq!(did_you_mean("zzzzzz", &["think", "name"]), None);
        assert_eq!(did_you_mean("Url", &["url", "name"]), Some("url"));
    }
}
