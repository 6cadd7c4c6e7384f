//! A command line split into words as bash would: single and double
//! quotes, ANSI-C `$'…'` strings (what Chrome and Firefox write for
//! bodies with control characters or quotes), backslash escapes and line
//! continuations. Nothing is expanded: a `$NAME` stays as written, with a
//! warning, and anything that would make it more than one simple command
//! (a pipe, `;`, `&`, a redirection) is an error that says where.

use crate::Error;

/// One word of the command, and where it starts (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub line: usize,
    pub column: usize,
}

/// Splits `input` into words; warnings say what was left unexpanded.
pub fn split(input: &str) -> Result<(Vec<Word>, Vec<String>), Error> {
    let chars: Vec<char> = input.chars().collect();
    let mut pos = Vec::with_capacity(chars.len() + 1);
    let (mut line, mut col) = (1, 1);
    for &c in &chars {
        pos.push((line, col));
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    pos.push((line, col));
    let at = |i: usize| pos[i.min(pos.len() - 1)];
    let err = |i: usize, message: String| {
        let (l, c) = at(i);
        Error::at(message, l, c)
    };
    windows_or_powershell(input)?;

    let mut words = Vec::new();
    let mut warnings = Vec::new();
    let mut cur: Option<(Vec<u8>, usize)> = None;
    let mut i = 0;
    let push_char = |cur: &mut Option<(Vec<u8>, usize)>, start: usize, c: char| {
        let w = cur.get_or_insert_with(|| (Vec::new(), start));
        let mut buf = [0; 4];
        w.0.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    let mut unexpanded = |what: &str, i: usize| {
        let (l, c) = at(i);
        warnings.push(format!(
            "{what} at line {l}, column {c} is not expanded: it is imported as written"
        ));
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if let Some((w, start)) = cur.take() {
                    words.push(word(w, at(start)));
                }
                i += 1;
            }
            '#' if cur.is_none() => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' => match chars.get(i + 1) {
                Some('\n') => i += 2,
                Some('\r') if chars.get(i + 2) == Some(&'\n') => i += 3,
                Some(&n) => {
                    push_char(&mut cur, i, n);
                    i += 2;
                }
                None => i += 1,
            },
            '\'' => {
                let start = i;
                cur.get_or_insert_with(|| (Vec::new(), start));
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(err(
                                start,
                                "this ' (single quote) is never closed".to_owned(),
                            ))
                        }
                        Some('\'') => break,
                        Some(&c) => push_char(&mut cur, start, c),
                    }
                    i += 1;
                }
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'\'') => {
                let start = i;
                let w = cur.get_or_insert_with(|| (Vec::new(), start));
                i = ansi_c(&chars, i + 2, &mut w.0).ok_or_else(|| {
                    err(
                        start,
                        "this $' (ANSI-C quoted string) is never closed".to_owned(),
                    )
                })?;
            }
            '"' | '$' if c == '"' || chars.get(i + 1) == Some(&'"') => {
                let start = i;
                cur.get_or_insert_with(|| (Vec::new(), start));
                i += if c == '$' { 2 } else { 1 };
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(err(
                                start,
                                "this \" (double quote) is never closed".to_owned(),
                            ))
                        }
                        Some('"') => break,
                        Some('\\') => match chars.get(i + 1) {
                            Some('\n') => i += 1,
                            Some(&n @ ('$' | '`' | '"' | '\\')) => {
                                push_char(&mut cur, start, n);
                                i += 1;
                            }
                            _ => push_char(&mut cur, start, '\\'),
                        },
                        Some('$') if expands(chars.get(i + 1)) => {
                            unexpanded("$ in double quotes", i);
                            push_char(&mut cur, start, '$');
                        }
                        Some('`') => {
                            unexpanded("` (command substitution)", i);
                            push_char(&mut cur, start, '`');
                        }
                        Some(&c) => push_char(&mut cur, start, c),
                    }
                    i += 1;
                }
                i += 1;
            }
            '$' if expands(chars.get(i + 1)) => {
                unexpanded("$ (a shell variable)", i);
                push_char(&mut cur, i, '$');
                i += 1;
            }
            '|' | ';' | '&' | '<' | '>' | '(' | ')' | '`' => {
                let what = match c {
                    '|' => "a pipe (|)",
                    ';' => "a second command (;)",
                    '&' => "an & (a background job, or an unquoted & in a URL)",
                    '<' | '>' => "a redirection",
                    '`' => "a command substitution (`)",
                    _ => "a subshell",
                };
                return Err(err(
                    i,
                    format!(
                        "{what}: import one curl command, with no pipes, redirections or \
                         other commands (quote a URL that holds & or ;)"
                    ),
                ));
            }
            c => {
                push_char(&mut cur, i, c);
                i += 1;
            }
        }
    }
    if let Some((w, start)) = cur.take() {
        words.push(word(w, at(start)));
    }
    Ok((words, warnings))
}

fn word(bytes: Vec<u8>, (line, column): (usize, usize)) -> Word {
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Word { text, line, column }
}

/// Whether a `$` followed by this would be expanded by bash.
fn expands(next: Option<&char>) -> bool {
    next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '_' | '{' | '(' | '@' | '*'))
}

/// Reads an ANSI-C string's body from `i` (just after `$'`) into `out`;
/// returns the index after its closing quote.
fn ansi_c(chars: &[char], mut i: usize, out: &mut Vec<u8>) -> Option<usize> {
    let push = |out: &mut Vec<u8>, c: char| {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    loop {
        let c = *chars.get(i)?;
        i += 1;
        match c {
            '\'' => return Some(i),
            '\\' => {
                let e = *chars.get(i)?;
                i += 1;
                let simple = match e {
                    'a' => Some('\u{7}'),
                    'b' => Some('\u{8}'),
                    'e' | 'E' => Some('\u{1b}'),
                    'f' => Some('\u{c}'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    'v' => Some('\u{b}'),
                    '\\' | '\'' | '"' | '?' => Some(e),
                    _ => None,
                };
                if let Some(s) = simple {
                    push(out, s);
                    continue;
                }
                let digits = |i: &mut usize, radix: u32, max: usize| {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < max {
                        match chars.get(*i).and_then(|c| c.to_digit(radix)) {
                            Some(d) => {
                                v = v * radix + d;
                                *i += 1;
                                n += 1;
                            }
                            None => break,
                        }
                    }
                    (n > 0).then_some(v)
                };
                match e {
                    '0'..='7' => {
                        i -= 1;
                        let v = digits(&mut i, 8, 3)?;
                        out.push(v as u8);
                    }
                    'x' => match digits(&mut i, 16, 2) {
                        Some(v) => out.push(v as u8),
                        None => out.extend_from_slice(b"\\x"),
                    },
                    'u' | 'U' => {
                        let max = if e == 'u' { 4 } else { 8 };
                        match digits(&mut i, 16, max).and_then(char::from_u32) {
                            Some(ch) => push(out, ch),
                            None => {
                                out.push(b'\\');
                                push(out, e);
                            }
                        }
                    }
                    'c' => {
                        let x = *chars.get(i)?;
                        i += 1;
                        out.push((x as u8) & 0x1f);
                    }
                    other => {
                        out.push(b'\\');
                        push(out, other);
                    }
                }
            }
            c => push(out, c),
        }
    }
}

/// Chrome's "Copy as cURL (cmd)" and "Copy as PowerShell" are other
/// shells' syntax: say which copy to take instead.
fn windows_or_powershell(input: &str) -> Result<(), Error> {
    let t = input.trim_start();
    if t.starts_with("Invoke-WebRequest") || t.starts_with("Invoke-RestMethod") {
        return Err(Error::new(
            "this is PowerShell (Copy as PowerShell); in the browser, use Copy as cURL (bash)",
        ));
    }
    if input.contains("^\n") || input.contains("^\r\n") || input.contains("^\"") {
        return Err(Error::new(
            "this looks like Copy as cURL (cmd), written for Windows' cmd.exe (^ escapes); \
             in the browser, use Copy as cURL (bash)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split(s).unwrap().0.into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn plain_and_quoted_words() {
        assert_eq!(words("curl  -X POST\t'a b'"), ["curl", "-X", "POST", "a b"]);
        assert_eq!(
            words(r#"curl "a \"b\" \$c \x""#),
            ["curl", r#"a "b" $c \x"#]
        );
        assert_eq!(words("a'b'\"c\"d"), ["abcd"]);
        assert_eq!(words("a\\ b \\'c"), ["a b", "'c"]);
        assert_eq!(words("''"), [""]);
    }

    #[test]
    fn line_continuations() {
        assert_eq!(
            words("curl 'http://x/' \\\n  -H 'A: b' \\\r\n  --compressed"),
            ["curl", "http://x/", "-H", "A: b", "--compressed"]
        );
        let (w, _) = split("curl \\\n  -H 'A: b'").unwrap();
        assert_eq!((w[2].line, w[2].column), (2, 6));
    }

    #[test]
    fn ansi_c_strings() {
        assert_eq!(
            words(r"$'a\r\nb\'c\x41\101\u00e9\t\\'"),
            ["a\r\nb'cAAé\t\\"]
        );
        assert_eq!(words(r"x$'\x7b'y"), ["x{y"]);
        // Chrome's multipart body.
        assert_eq!(
            words(r#"--data-raw $'------WebKitFormBoundary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n'"#),
            [
                "--data-raw",
                "------WebKitFormBoundary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
            ]
        );
    }

    #[test]
    fn comments_and_variables() {
        assert_eq!(words("curl x # a comment\n"), ["curl", "x"]);
        assert_eq!(words("a#b"), ["a#b"]);
        let (w, warn) = split("curl -H \"Authorization: Bearer $TOKEN\"").unwrap();
        assert_eq!(w[2].text, "Authorization: Bearer $TOKEN");
        assert!(warn[0].contains("column 32"), "{warn:?}");
        let (_, warn) = split("curl $URL").unwrap();
        assert_eq!(warn.len(), 1);
        let (_, warn) = split("curl 'cost: $5'").unwrap();
        assert!(warn.is_empty());
    }

    #[test]
    fn errors_say_where() {
        let e = split("curl -H 'A: b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1, column 9: this ' (single quote) is never closed"
        );
        let e = split("curl \\\n -d \"x").unwrap_err();
        assert!(e.to_string().starts_with("line 2, column 5:"), "{e}");
        let e = split("curl http://x/?a=1&b=2").unwrap_err();
        assert!(e.to_string().contains("column 19"), "{e}");
        let e = split("curl x | jq .").unwrap_err();
        assert!(e.to_string().contains("pipe"), "{e}");
        let e = split("curl $'abc").unwrap_err();
        assert!(e.to_string().contains("ANSI-C"), "{e}");
    }

    #[test]
    fn other_shells_are_named() {
        let e = split("curl ^\"http://x/^\" ^\n  -H ^\"a: b^\"").unwrap_err();
        assert!(e.to_string().contains("cmd"), "{e}");
        let e = split("Invoke-WebRequest -Uri \"http://x/\"").unwrap_err();
        assert!(e.to_string().contains("PowerShell"), "{e}");
    }
}
