//! Problems found in a scenario, each pointing at the place that causes it.
//! They are the plan's [`Diagnostic`]s, placed in a file: flags and
//! scenario files report through the same type.

use plan::{Diagnostic, Diagnostics, Source};

/// A place in a text file; both count from 1 (columns in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    pub fn new(line: usize, col: usize) -> Pos {
        Pos { line, col }
    }
}

/// Collects diagnostics for one file.
#[derive(Debug)]
pub struct Sink {
    pub file: String,
    pub list: Vec<Diagnostic>,
}

impl Sink {
    pub fn new(file: &str) -> Sink {
        Sink {
            file: file.to_owned(),
            list: Vec::new(),
        }
    }

    pub fn err(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(pos, message.into(), None);
    }

    pub fn hint(&mut self, pos: Pos, message: impl Into<String>, hint: impl Into<String>) {
        self.push(pos, message.into(), Some(hint.into()));
    }

    pub fn push(&mut self, pos: Pos, message: String, hint: Option<String>) {
        let file = self.file.clone();
        self.push_in(&file, pos, message, hint);
    }

    /// A problem in another file (a data file, say).
    pub fn push_in(&mut self, file: &str, pos: Pos, message: String, hint: Option<String>) {
        self.list.push(Diagnostic {
            source: Source::File {
                file: file.to_owned(),
                line: pos.line,
                column: pos.col,
            },
            problem: message,
            hint,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The diagnostics, the scenario file's first and by position; data
    /// files and the environment after it, in the order found.
    pub fn finish(mut self) -> Diagnostics {
        let origin = self.file.clone();
        self.list.sort_by_key(|d| {
            if d.file() == Some(origin.as_str()) {
                (0, d.line(), d.column())
            } else {
                (1, 0, 0)
            }
        });
        self.list.dedup();
        Diagnostics(self.list)
    }
}

/// Closest candidate to a misspelt name, for "did you mean" hints.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
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
    fn suggestions() {
        assert_eq!(did_you_mean("thnk", &["think", "name"]), Some("think"));
        assert_eq!(did_you_mean("zzzzzz", &["think", "name"]), None);
        assert_eq!(did_you_mean("Url", &["url", "name"]), Some("url"));
    }
}
