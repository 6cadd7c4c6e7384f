//! A logged request target as a scenario's url: in origin form, the bytes
//! a request line may not hold percent-encoded, and the values of query
//! parameters named like secrets (`plan::secrets`) replaced by variables;
//! and a bad line as a warning shows it, secrets masked.

use crate::text::percent_decode;

/// A target longer than this is not replayed.
pub(crate) const MAX_TARGET: usize = 8 << 10;
/// Distinct variables for secret parameters; more share `secret`.
const MAX_VARS: usize = 16;

/// A secret parameter's variable and how often it stood for a value.
#[derive(Debug, Default)]
pub(crate) struct SecretVars {
    pub vars: Vec<(String, u64)>,
}

impl SecretVars {
    pub(crate) fn var_for(&mut self, param: &str) -> String {
        let mut name = crate::har::var_name(param);
        if !self.vars.iter().any(|(v, _)| *v == name) && self.vars.len() >= MAX_VARS {
            name = "secret".to_owned();
        }
        match self.vars.iter_mut().find(|(v, _)| *v == name) {
            Some((_, n)) => *n += 1,
            None => self.vars.push((name.clone(), 1)),
        }
        name
    }
}

/// A bad line as shown: at most 160 characters, control characters
/// escaped, secret query values masked.
pub(crate) fn sample(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut s: String = text.chars().take(160).collect();
    if text.chars().nth(160).is_some() {
        s.push('…');
    }
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_control() {
                format!("\\x{:02x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect();
    mask_secrets(&s)
}

/// Every `name=value` in `text` whose name looks like a secret, with the
/// value masked (a bad line may hold a token in its query).
fn mask_secrets(text: &str) -> String {
    let secrets = ::plan::secrets::Secrets::default();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let before = &rest[..eq];
        let name_start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_-.%".contains(c)))
            .map_or(0, |i| i + 1);
        let name = &before[name_start..];
        out.push_str(before);
        out.push('=');
        let after = &rest[eq + 1..];
        let value_len = after.find(['&', ' ', '"', ';']).unwrap_or(after.len());
        if !name.is_empty()
            && value_len > 0
            && secrets.header_is_secret(&percent_decode(name, true).unwrap_or_default())
        {
            out.push_str(::plan::secrets::MASK);
            rest = &after[value_len..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

pub(crate) enum TargetSkip {
    NotPath,
    TooLong,
}

/// The request target in origin form (`/path?query`), with the bytes a
/// request line may not hold (and `{`, `}`, which a scenario reads as a
/// template) percent-encoded.
pub(crate) fn origin_form(raw: &[u8]) -> Result<String, TargetSkip> {
    let mut t = raw;
    let lower: Vec<u8> = t.iter().take(8).map(u8::to_ascii_lowercase).collect();
    for scheme in [&b"http://"[..], b"https://"] {
        if lower.starts_with(scheme) {
            let rest = &t[scheme.len()..];
            t = match rest.iter().position(|&c| c == b'/' || c == b'?') {
                Some(i) if rest[i] == b'/' => &rest[i..],
                _ => b"/",
            };
            break;
        }
    }
    if !t.starts_with(b"/") {
        return Err(TargetSkip::NotPath);
    }
    if t.len() > MAX_TARGET {
        return Err(TargetSkip::TooLong);
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(t.len());
    for &c in t {
        let plain = (0x21..0x7f).contains(&c)
            && !matches!(c, b'"' | b'<' | b'>' | b'\\' | b'`' | b'{' | b'}' | b'#');
        if plain {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(c >> 4)] as char);
            out.push(HEX[usize::from(c & 15)] as char);
        }
    }
    Ok(out)
}

/// `/a?token=x&page=2` → `/a?token={{token}}&page=2`: the values of query
/// parameters named like secrets are never copied.
pub(crate) fn redact(target: &str, secrets: &mut SecretVars) -> String {
    let Some((path, query)) = target.split_once('?') else {
        return target.to_owned();
    };
    let rules = ::plan::secrets::Secrets::default();
    let mut out = String::with_capacity(target.len());
    out.push_str(path);
    out.push('?');
    for (k, pair) in query.split('&').enumerate() {
        if k > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, value))
                if !value.is_empty()
                    && rules.header_is_secret(&percent_decode(name, true).unwrap_or_default()) =>
            {
                let var = secrets.var_for(&percent_decode(name, true).unwrap_or_default());
                out.push_str(name);
                out.push_str("={{");
                out.push_str(&var);
                out.push_str("}}");
            }
            _ => out.push_str(pair),
        }
    }
    out
}
