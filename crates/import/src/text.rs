//! Small text codecs the importers share: shell and file quoting, base64,
//! percent-encoding, and HAR's timestamps.

/// A word as bash reads it back unchanged: bare when it is made of safe
/// characters, in single quotes otherwise, and as an ANSI-C `$'…'` string
/// when it holds control characters (a multipart body's CR LF).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if safe {
        return s.to_owned();
    }
    if s.chars().any(|c| c.is_control()) {
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A double-quoted string that TOML, YAML and JSON all read back as `s`:
/// quotes, backslashes and every control character escaped.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters no TOML or YAML string may hold as they are.
fn needs_escape(c: char) -> bool {
    let u = c as u32;
    u < 0x20 || (0x7F..=0x9F).contains(&u) || u == 0xFEFF || u == 0xFFFE || u == 0xFFFF
}

/// A TOML string, as a literal `'…'` when that needs no escape (regexes
/// read better without doubled backslashes), else [`quoted`].
pub fn toml_str(s: &str) -> String {
    if !s.contains('\'') && !s.chars().any(needs_escape) && !s.contains(['\n', '\t']) {
        format!("'{s}'")
    } else {
        quoted(s)
    }
}

/// A YAML scalar string: single-quoted when that needs no escape, else
/// [`quoted`].
pub fn yaml_str(s: &str) -> String {
    if !s.chars().any(needs_escape) && !s.contains(['\n', '\t']) {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        quoted(s)
    }
}

/// A TOML key: bare when it may be, else quoted.
pub fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        k.to_owned()
    } else {
        quoted(k)
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard or URL-safe base64, padded or not; white space is skipped.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// `application/x-www-form-urlencoded`, as browsers (and curl's
/// `--data-urlencode`, and scenario `form` fields) write it: letters,
/// digits and `*-._` kept, space as `+`, the rest `%XX`.
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"*-._".contains(&b) {
            out.push(b as char);
        } else if b == b' ' {
            out.push('+');
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
    out
}

/// Percent-decoding; with `plus`, `+` is a space (form encoding). `None`
/// when the bytes are not UTF-8.
pub fn percent_decode(s: &str, plus: bool) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b'+' if plus => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `a=1&b=2` → pairs, decoded as a form. `None` when a part does not decode.
pub fn form_pairs(s: &str) -> Option<Vec<(String, String)>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((percent_decode(k, true)?, percent_decode(v, true)?))
        })
        .collect()
}

/// An RFC 3339 / ISO 8601 timestamp (`2024-05-14T09:30:01.123Z`,
/// `…+02:00`) as milliseconds since the Unix epoch.
pub fn parse_time_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        frac = format!("0.{}", &r[..digits]).parse::<f64>().ok()?;
        rest = &r[digits..];
    }
    let offset_min = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let t = rest[1..].replace(':', "");
            let hh = t.get(0..2)?.parse::<i64>().ok()?;
            let mm = t.get(2..4).map_or(Some(0), |m| m.parse::<i64>().ok())?;
            sign * (hh * 60 + mm)
        }
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac * 1000.0)
}

/// A duration as scenario files and yace's flags write it: `2s`,
/// `1s 500ms`, `250ms`.
pub fn duration_text(ms: u64) -> String {
    match (ms / 1000, ms % 1000) {
        (0, m) => format!("{m}ms"),
        (s, 0) => format!("{s}s"),
        (s, m) => format!("{s}s {m}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_reads_back() {
        assert_eq!(shell_quote("http://a/b"), "http://a/b");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\r\nb'c"), "$'a\\r\\nb\\'c'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("x?y&z"), "'x?y&z'");
    }

    #[test]
    fn quoting_for_files() {
        assert_eq!(quoted("a\"b\\c\n\u{7f}"), "\"a\\\"b\\\\c\\n\\u007F\"");
        assert_eq!(toml_str("id=(\\d+)"), "'id=(\\d+)'");
        assert_eq!(toml_str("it's"), "\"it's\"");
        assert_eq!(yaml_str("it's"), "'it''s'");
        assert_eq!(toml_key("user-agent"), "user-agent");
        assert_eq!(toml_key("a.b"), "\"a.b\"");
    }

    #[test]
    fn base64_both_ways() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("alice:s3cret", "YWxpY2U6czNjcmV0"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), enc);
            assert_eq!(base64_decode(enc).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64_decode("Zm9v\nYmFy").unwrap(), b"foobar");
        assert!(base64_decode("Zm9v!").is_none());
    }

    #[test]
    fn form_codec() {
        assert_eq!(form_encode("a b+c/=é*"), "a+b%2Bc%2F%3D%C3%A9*");
        assert_eq!(
            percent_decode("a+b%2Bc%2F%3D%C3%A9", true).unwrap(),
            "a b+c/=é"
        );
        assert_eq!(percent_decode("a+b%zz%", false).unwrap(), "a+b%zz%");
        assert_eq!(
            form_pairs("x=1&y=a+b&z").unwrap(),
            vec![
                ("x".into(), "1".into()),
                ("y".into(), "a b".into()),
                ("z".into(), String::new())
            ]
        );
        assert!(percent_decode("%ff", false).is_none());
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_time_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_time_ms("1970-01-01T00:00:01.250Z"), Some(1250.0));
        assert_eq!(
            parse_time_ms("2024-05-14T11:30:00.000+02:00"),
            parse_time_ms("2024-05-14T09:30:00Z")
        );
        assert_eq!(
            parse_time_ms("2024-05-14T09:30:00Z"),
            Some(1_715_679_000_000.0)
        );
        assert_eq!(parse_time_ms("yesterday"), None);
    }

    #[test]
    fn durations() {
        assert_eq!(duration_text(250), "250ms");
        assert_eq!(duration_text(2000), "2s");
        assert_eq!(duration_text(6200), "6s 200ms");
    }
}
