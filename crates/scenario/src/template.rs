//! `{{name}}` templates: parsed when the file is read, resolved against what
//! the scenario defines (so unknown names are reported with their place), and
//! rendered per request straight into the output buffer.

use crate::ident::is_ident;
use plan::rng::Rng;

/// A template as written: literal text and references, with the byte offset
/// of each `{{` for error positions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawPart {
    Lit(String),
    Ref { name: Name, offset: usize },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Name {
    /// `token`, or `dataset.field`.
    Plain(String),
    /// `random(a, b)`: an integer in [a, b].
    Random(i64, i64),
    Uuid,
}

/// Splits `text` into literals and references; the error carries the byte
/// offset of the offending `{{`.
pub(crate) fn parse(text: &str) -> Result<Vec<RawPart>, (usize, String)> {
    let mut parts = Vec::new();
    let mut rest = text;
    let mut base = 0;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            parts.push(RawPart::Lit(rest[..open].to_owned()));
        }
        let offset = base + open;
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or((offset, "'{{' is never closed with '}}'".to_owned()))?;
        let inner = after[..close].trim();
        let name = parse_name(inner).map_err(|m| (offset, m))?;
        parts.push(RawPart::Ref { name, offset });
        let consumed = open + 2 + close + 2;
        base += consumed;
        rest = &rest[consumed..];
    }
    if !rest.is_empty() {
        parts.push(RawPart::Lit(rest.to_owned()));
    }
    Ok(parts)
}

fn parse_name(inner: &str) -> Result<Name, String> {
    if inner.is_empty() {
        return Err("empty '{{}}'".to_owned());
    }
    if let Some(args) = inner.strip_suffix(')') {
        let (func, args) = args
            .split_once('(')
            .ok_or_else(|| format!("'{{{{{inner}}}}}' is not a name"))?;
        return match func.trim() {
            "random" => {
                let err = || format!("random takes two integers, random(1, 100), not '{inner}'");
                let (a, b) = args.split_once(',').ok_or_else(err)?;
                let a: i64 = a.trim().parse().map_err(|_| err())?;
                let b: i64 = b.trim().parse().map_err(|_| err())?;
                if a > b {
                    return Err(format!(
                        "random({a}, {b}): the lower bound is above the upper"
                    ));
                }
                Ok(Name::Random(a, b))
            }
            "uuid" if args.trim().is_empty() => Ok(Name::Uuid),
            other => Err(format!(
                "unknown function '{other}' (there are random(a, b) and uuid)"
            )),
        };
    }
    if inner == "uuid" {
        return Ok(Name::Uuid);
    }
    let ok = match inner.split_once('.') {
        Some((set, field)) => is_ident(set) && is_ident(field),
        None => is_ident(inner),
    };
    if !ok {
        return Err(format!(
            "'{inner}' is not a name (letters, digits, '_' and '-', or dataset.field)"
        ));
    }
    Ok(Name::Plain(inner.to_owned()))
}

/// How substituted text is made safe where it lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enc {
    /// Bodies: as is.
    Raw,
    /// Request targets: bytes not allowed on the request line are
    /// percent-encoded; `/`, `?`, `&`, `=` and `%` are kept.
    Url,
    /// Header values: CR and LF become spaces (no header injection).
    Header,
    /// `application/x-www-form-urlencoded` names and values.
    Form,
    /// The inside of a JSON string.
    Json,
}

pub(crate) fn encode(enc: Enc, s: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    match enc {
        Enc::Raw => out.extend_from_slice(s),
        Enc::Header => out.extend(
            s.iter()
                .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        ),
        Enc::Url => {
            for &b in s {
                // RFC 3986 unreserved, reserved, and '%': everything a
                // request target may hold as is.
                let keep = b.is_ascii_alphanumeric() || b"-._~:/?[]@!$&'()*+,;=%".contains(&b);
                if keep {
                    out.push(b);
                } else {
                    out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
                }
            }
        }
        Enc::Form => {
            for &b in s {
                if b.is_ascii_alphanumeric() || b"-._*".contains(&b) {
                    out.push(b);
                } else if b == b' ' {
                    out.push(b'+');
                } else {
                    out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
                }
            }
        }
        Enc::Json => {
            let text = String::from_utf8_lossy(s);
            let quoted = serde_json::to_string(&*text).unwrap_or_default();
            out.extend_from_slice(&quoted.as_bytes()[1..quoted.len() - 1]);
        }
    }
}

/// Where a reference's value comes from once the file is resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    Data {
        set: usize,
        column: usize,
    },
    User,
    Iteration,
    Random(i64, i64),
    Uuid,
    /// A `[vars]` constant.
    Text(String),
    /// Only an extract can give it a value; empty until then.
    Empty,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Already encoded.
    Lit(Vec<u8>),
    /// The user's extracted variable `slot` when it has been set, else
    /// `fallback`.
    Value {
        slot: Option<usize>,
        fallback: Source,
    },
}

/// A resolved template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template {
    pub source: String,
    pub enc: Enc,
    pub parts: Vec<Part>,
}

/// What a template reads while rendering.
pub(crate) struct Scope<'a> {
    pub vars: &'a [Option<String>],
    pub data: &'a [crate::data::Dataset],
    pub rows: &'a [usize],
    pub user: u64,
    pub iteration: u64,
    pub rng: &'a mut Rng,
}

impl Template {
    /// Joins resolved parts, folding constants into the literals.
    pub(crate) fn new(source: &str, enc: Enc, parts: Vec<Part>) -> Template {
        let mut out: Vec<Part> = Vec::with_capacity(parts.len());
        for p in parts {
            let p = match p {
                Part::Value {
                    slot: None,
                    fallback: Source::Text(t),
                } => {
                    let mut b = Vec::new();
                    encode(enc, t.as_bytes(), &mut b);
                    Part::Lit(b)
                }
                Part::Value {
                    slot: None,
                    fallback: Source::Empty,
                } => continue,
                p => p,
            };
            match (out.last_mut(), p) {
                (Some(Part::Lit(a)), Part::Lit(b)) => a.extend_from_slice(&b),
                (_, p) => out.push(p),
            }
        }
        Template {
            source: source.to_owned(),
            enc,
            parts: out,
        }
    }

    pub(crate) fn render(&self, scope: &mut Scope<'_>, out: &mut Vec<u8>) {
        for p in &self.parts {
            match p {
                Part::Lit(b) => out.extend_from_slice(b),
                Part::Value { slot, fallback } => {
                    if let Some(v) = slot
                        .and_then(|s| scope.vars.get(s))
                        .and_then(Option::as_ref)
                    {
                        encode(self.enc, v.as_bytes(), out);
                        continue;
                    }
                    self.render_source(fallback, scope, out);
                }
            }
        }
    }

    fn render_source(&self, src: &Source, scope: &mut Scope<'_>, out: &mut Vec<u8>) {
        let num = |n: i64, out: &mut Vec<u8>| out.extend_from_slice(n.to_string().as_bytes());
        match src {
            Source::Data { set, column } => {
                let d = &scope.data[*set];
                let row = scope.rows.get(*set).copied().unwrap_or(0);
                if let Some(v) = d.rows.get(row).and_then(|r| r.get(*column)) {
                    encode(self.enc, v.as_bytes(), out);
                }
            }
            Source::User => num(scope.user as i64, out),
            Source::Iteration => num(scope.iteration as i64, out),
            Source::Random(a, b) => num(scope.rng.between(*a, *b), out),
            Source::Uuid => out.extend_from_slice(uuid(scope.rng).as_bytes()),
            Source::Text(t) => encode(self.enc, t.as_bytes(), out),
            Source::Empty => {}
        }
    }
}

/// A random version-4 UUID.
pub(crate) fn uuid(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    let a = (a & !0xF000) | 0x4000; // version 4
    let b = (b & !(0xC << 60)) | (0x8 << 60); // RFC 4122 variant
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> RawPart {
        RawPart::Lit(s.to_owned())
    }

    #[test]
    fn parses_references() {
        assert_eq!(parse("plain").unwrap(), vec![lit("plain")]);
        assert_eq!(
            parse("/cart?id={{ id }}&u={{accounts.user}}").unwrap(),
            vec![
                lit("/cart?id="),
                RawPart::Ref {
                    name: Name::Plain("id".into()),
                    offset: 9
                },
                lit("&u="),
                RawPart::Ref {
                    name: Name::Plain("accounts.user".into()),
                    offset: 20
                },
            ]
        );
        assert_eq!(
            parse("{{random(1, 100)}}{{uuid}}").unwrap(),
            vec![
                RawPart::Ref {
                    name: Name::Random(1, 100),
                    offset: 0
                },
                RawPart::Ref {
                    name: Name::Uuid,
                    offset: 18
                }
            ]
        );
    }

    #[test]
    fn rejects_bad_references() {
        assert_eq!(parse("ab{{x").unwrap_err().0, 2);
        assert_eq!(parse("a {{}}").unwrap_err().0, 2);
        assert!(parse("{{a b}}").is_err());
        assert!(parse("{{random(5, 1)}}").is_err());
        assert!(parse("{{random(a, 1)}}").is_err());
        assert!(parse("{{shell(ls)}}").is_err());
        assert!(parse("{{a.b.c}}").is_err());
    }

    fn enc(e: Enc, s: &str) -> String {
        let mut out = Vec::new();
        encode(e, s.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn encodings() {
        assert_eq!(enc(Enc::Url, "/a b?x=1&y=é#"), "/a%20b?x=1&y=%C3%A9%23");
        assert_eq!(enc(Enc::Form, "a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(enc(Enc::Header, "a\r\nInjected: 1"), "a  Injected: 1");
        assert_eq!(enc(Enc::Json, "say \"hi\"\n"), "say \\\"hi\\\"\\n");
        assert_eq!(enc(Enc::Raw, "a\r\n"), "a\r\n");
    }

    #[test]
    fn renders_with_precedence_and_folding() {
        let t = Template::new(
            "x",
            Enc::Url,
            vec![
                Part::Lit(b"/a/".to_vec()),
                Part::Value {
                    slot: None,
                    fallback: Source::Text("t t".into()),
                },
                Part::Lit(b"/".to_vec()),
                Part::Value {
                    slot: Some(0),
                    fallback: Source::Text("fallback".into()),
                },
                Part::Value {
                    slot: None,
                    fallback: Source::User,
                },
            ],
        );
        assert_eq!(t.parts.len(), 3, "constants fold into one literal");
        let mut rng = Rng::for_user(0, 0);
        let render = |vars: &[Option<String>], rng: &mut Rng| {
            let mut out = Vec::new();
            let mut scope = Scope {
                vars,
                data: &[],
                rows: &[],
                user: 42,
                iteration: 0,
                rng,
            };
            t.render(&mut scope, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(render(&[None], &mut rng), "/a/t%20t/fallback42");
        assert_eq!(render(&[Some("v v".into())], &mut rng), "/a/t%20t/v%20v42");
    }

    #[test]
    fn uuid_shape() {
        let mut rng = Rng::for_user(0, 0);
        let u = uuid(&mut rng);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
        assert_ne!(u, uuid(&mut rng));
    }
}
