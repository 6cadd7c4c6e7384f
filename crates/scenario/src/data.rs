//! Data sets: CSV files whose rows feed `{{dataset.field}}`.

/// How a user picks its row each iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataMode {
    /// User `i` always uses row `i mod rows`.
    PerUser,
    /// User `i` uses row `(i + iteration) mod rows`: each user walks the
    /// file from its own starting row.
    RoundRobin,
    /// A row drawn from the user's own random stream every iteration.
    Random,
}

impl DataMode {
    pub(crate) fn parse(s: &str) -> Option<DataMode> {
        match s {
            "per_user" => Some(DataMode::PerUser),
            "round_robin" => Some(DataMode::RoundRobin),
            "random" => Some(DataMode::Random),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DataMode::PerUser => "per_user",
            DataMode::RoundRobin => "round_robin",
            DataMode::Random => "random",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dataset {
    pub name: String,
    /// As written in the scenario.
    pub file: String,
    pub mode: DataMode,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A parsed CSV file: a header row naming the columns, then data rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Csv {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// RFC 4180 CSV (quotes, doubled quotes, CRLF or LF). Blank lines are
/// skipped. Errors carry the 1-based line they are on.
pub(crate) fn parse_csv(text: &str) -> Result<Csv, Vec<(usize, String)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records: Vec<(usize, Vec<String>)> = Vec::new();
    let mut errors = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start_line = line;
        let mut fields = vec![String::new()];
        let mut quoted_field = false;
        while let Some(c) = chars.next() {
            match c {
                '"' if fields.last().is_some_and(String::is_empty) && !quoted_field => {
                    quoted_field = true;
                    let mut closed = false;
                    while let Some(c) = chars.next() {
                        if c == '"' {
                            if chars.peek() == Some(&'"') {
                                chars.next();
                                fields.last_mut().unwrap().push('"');
                            } else {
                                closed = true;
                                break;
                            }
                        } else {
                            if c == '\n' {
                                line += 1;
                            }
                            fields.last_mut().unwrap().push(c);
                        }
                    }
                    if !closed {
                        errors.push((start_line, "a quoted field is never closed".to_owned()));
                    }
                }
                ',' => {
                    fields.push(String::new());
                    quoted_field = false;
                }
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' => {
                    line += 1;
                    break;
                }
                c => fields.last_mut().unwrap().push(c),
            }
        }
        let blank = fields.len() == 1 && fields[0].is_empty() && !quoted_field;
        if !blank {
            records.push((start_line, fields));
        }
    }
    let mut it = records.into_iter();
    let Some((hline, columns)) = it.next() else {
        return Err(vec![(
            1,
            "the file is empty (it needs a header row and data rows)".into(),
        )]);
    };
    for (i, c) in columns.iter().enumerate() {
        if !crate::ident::is_ident(c) {
            errors.push((
                hline,
                format!(
                    "column {} is named '{c}'; a column name is letters, digits, '_' or '-'",
                    i + 1
                ),
            ));
        } else if columns[..i].contains(c) {
            errors.push((hline, format!("column '{c}' appears twice in the header")));
        }
    }
    let mut rows = Vec::new();
    for (l, r) in it {
        if r.len() != columns.len() {
            errors.push((
                l,
                format!(
                    "this row has {} fields, the header has {}",
                    r.len(),
                    columns.len()
                ),
            ));
        }
        rows.push(r);
    }
    if rows.is_empty() && errors.is_empty() {
        errors.push((hline, "the file has a header but no data rows".into()));
    }
    if errors.is_empty() {
        Ok(Csv { columns, rows })
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quotes_and_line_endings() {
        let csv = parse_csv(
            "user,pass\r\nalice,\"p,w\"\r\n\r\nbob,\"say \"\"hi\"\"\"\n\"multi\nline\",x",
        )
        .unwrap();
        assert_eq!(csv.columns, ["user", "pass"]);
        assert_eq!(
            csv.rows,
            [
                vec!["alice", "p,w"],
                vec!["bob", "say \"hi\""],
                vec!["multi\nline", "x"]
            ]
        );
        assert_eq!(parse_csv("a\n\"\"\n").unwrap().rows, [vec![""]]);
    }

    #[test]
    fn reports_width_and_emptiness_by_line() {
        assert_eq!(
            parse_csv("a,b\n1,2\n\n3\n4,5,6\n").unwrap_err(),
            vec![
                (4, "this row has 1 fields, the header has 2".to_owned()),
                (5, "this row has 3 fields, the header has 2".to_owned())
            ]
        );
        assert_eq!(parse_csv("").unwrap_err()[0].0, 1);
        assert_eq!(parse_csv("\n\na,b\n").unwrap_err()[0].0, 3);
        assert!(parse_csv("a,a\n1,2\n").unwrap_err()[0].1.contains("twice"));
        assert!(parse_csv("a b\n1\n").is_err());
        assert_eq!(parse_csv("a\n\"x\n").unwrap_err()[0].0, 2);
    }
}
