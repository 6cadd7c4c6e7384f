//! A result as framed, checksummed text lines that survive log collectors
//! (`kubectl logs --prefix`, `srun --label`, runtimes that cut lines at
//! 16 KiB, several shards interleaved in one file):
//!
//! ```text
//! YACE-RESULT v1 <run-id> <I>/<N> <k>/<m> <bytes> <sha256> <crc32> <chunk>
//! ```
//!
//! The payload is the result's JSON, zlib-compressed; `<bytes>` is its
//! length and `<sha256>` its hash (hex); it is cut into `m` chunks of at
//! most [`CHUNK`] bytes, line `k` (1-based) carrying chunk `k` in base64
//! with the crc32 (8 hex digits) of its bytes. A reader finds the marker
//! anywhere in a line, so prefixes do no harm.

use base64::Engine;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// What starts a framed line (after any prefix).
pub const MARKER: &str = "YACE-RESULT v1 ";
/// Payload bytes per line: under 3 KiB of base64 with its header, so a
/// line is shorter than PIPE_BUF (4 KiB) and one write of it stays whole
/// when shards share a pipe or a log file (a 4 KiB line was split and
/// interleaved with another shard's under load); far below the 16 KiB at
/// which container runtimes split a log line.
pub const CHUNK: usize = 2048;
/// Largest payload a reader accepts (a 24-hour result compresses to a few MB).
pub const MAX_PAYLOAD: usize = 256 << 20;

/// The framed lines (without newlines) carrying `json`.
pub fn encode(json: &[u8], run_id: &str, shard: plan::Shard) -> Vec<String> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(json).expect("writing to memory");
    let payload = z.finish().expect("writing to memory");
    let sha = crate::identity::hex(&Sha256::digest(&payload));
    let chunks: Vec<&[u8]> = payload.chunks(CHUNK).collect();
    let m = chunks.len().max(1);
    let b64 = base64::engine::general_purpose::STANDARD;
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "{MARKER}{run_id} {shard} {}/{m} {} {sha} {:08x} {}",
                i + 1,
                payload.len(),
                crc32fast::hash(c),
                b64.encode(c)
            )
        })
        .collect()
}

/// One framed line, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    run_id: String,
    shard: String,
    k: usize,
    m: usize,
    bytes: usize,
    sha: String,
    data: Vec<u8>,
}

/// Which result a damaged line belonged to, as far as it could be read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PartKey {
    pub run_id: String,
    pub shard: String,
    pub sha: String,
    pub k: usize,
}

/// A framed line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// `FILE:LINE`.
    pub at: String,
    pub what: String,
    /// Its part, when the header fields were readable.
    pub key: Option<PartKey>,
}

/// A payload put back together: the result's JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    pub run_id: String,
    pub shard: String,
    /// Where its first line was (`FILE:LINE`).
    pub at: String,
    pub json: Vec<u8>,
}

/// One payload's identity: run id, shard, sha256.
type Payload = (String, String, String);

/// Collects framed lines from any number of texts, then assembles them.
#[derive(Debug, Default)]
pub struct Reader {
    /// (run, shard, sha) → part number → part; and where it was first seen.
    parts: BTreeMap<Payload, (String, BTreeMap<usize, Part>)>,
    damage: Vec<Damage>,
}

impl Reader {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads every framed line of `text` (named `source` in messages);
    /// returns how many it found, damaged ones included.
    pub fn feed(&mut self, source: &str, text: &str) -> usize {
        let mut found = 0;
        for (n, line) in text.lines().enumerate() {
            let Some(at) = line.find(MARKER) else {
                continue;
            };
            found += 1;
            let loc = format!("{source}:{}", n + 1);
            match parse(&line[at + MARKER.len()..]) {
                Ok(p) => {
                    let key = (p.run_id.clone(), p.shard.clone(), p.sha.clone());
                    let entry = self
                        .parts
                        .entry(key)
                        .or_insert_with(|| (loc.clone(), BTreeMap::new()));
                    match entry.1.get(&p.k) {
                        Some(old) if *old != p => self.damage.push(Damage {
                            at: loc,
                            what: format!(
                                "part {}/{} of shard {} differs from an earlier copy",
                                p.k, p.m, p.shard
                            ),
                            key: None,
                        }),
                        Some(_) => {}
                        None => {
                            entry.1.insert(p.k, p);
                        }
                    }
                }
                Err((what, key)) => self.damage.push(Damage { at: loc, what, key }),
            }
        }
        found
    }

    /// The payloads that are whole (every part, length and sha256 right,
    /// inflated), and the damage: lines that could not be used (a damaged
    /// line whose part was found intact elsewhere is left out) and
    /// payloads that could not be put together.
    pub fn finish(self) -> (Vec<Assembled>, Vec<Damage>) {
        let mut out = Vec::new();
        let mut damage: Vec<Damage> = self
            .damage
            .into_iter()
            .filter(|d| {
                !d.key.as_ref().is_some_and(|k| {
                    self.parts
                        .get(&(k.run_id.clone(), k.shard.clone(), k.sha.clone()))
                        .is_some_and(|(_, ps)| ps.contains_key(&k.k))
                })
            })
            .collect();
        for ((run_id, shard, sha), (at, parts)) in self.parts {
            let m = parts.values().next().map_or(0, |p| p.m);
            let missing: Vec<String> = (1..=m)
                .filter(|k| !parts.contains_key(k))
                .map(|k| k.to_string())
                .collect();
            if !missing.is_empty() {
                damage.push(Damage {
                    at: at.clone(),
                    what: format!(
                        "the framed result of run {run_id} shard {shard} lacks part(s) {} of {m}",
                        missing.join(", ")
                    ),
                    key: None,
                });
                continue;
            }
            let bytes = parts.values().next().map_or(0, |p| p.bytes);
            let payload: Vec<u8> = parts.into_values().flat_map(|p| p.data).collect();
            let got = crate::identity::hex(&Sha256::digest(&payload));
            if payload.len() != bytes || got != sha {
                damage.push(Damage {
                    at,
                    what: format!(
                        "the framed result of run {run_id} shard {shard} does not check out \
                         ({} bytes, sha256 {got}; its lines say {bytes} bytes, sha256 {sha})",
                        payload.len()
                    ),
                    key: None,
                });
                continue;
            }
            let mut json = Vec::new();
            match ZlibDecoder::new(&payload[..])
                .take(MAX_PAYLOAD as u64 * 8)
                .read_to_end(&mut json)
            {
                Ok(_) => out.push(Assembled {
                    run_id,
                    shard,
                    at,
                    json,
                }),
                Err(e) => damage.push(Damage {
                    at,
                    what: format!(
                        "the framed result of run {run_id} shard {shard} does not inflate: {e}"
                    ),
                    key: None,
                }),
            }
        }
        (out, damage)
    }
}

/// Parses what follows the marker.
fn parse(rest: &str) -> Result<Part, (String, Option<PartKey>)> {
    let rest = rest.trim_end_matches(['\r', '\n', ' ']);
    let f: Vec<&str> = rest.split(' ').collect();
    if f.len() != 7 {
        return Err((
            format!(
                "a framed line has {} fields after the marker, not 7",
                f.len()
            ),
            None,
        ));
    }
    let (run_id, shard, km, bytes, sha, crc, chunk) = (f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
    let bad = |what: String| Err((what, None));
    if crate::identity::check_run_id(run_id).is_err() {
        return bad(format!("'{run_id}' is not a run id"));
    }
    if plan::Shard::parse(shard).is_err() {
        return bad(format!("'{shard}' is not a shard I/N"));
    }
    let Some((k, m)) = km
        .split_once('/')
        .and_then(|(k, m)| Some((k.parse::<usize>().ok()?, m.parse::<usize>().ok()?)))
        .filter(|&(k, m)| k >= 1 && k <= m)
    else {
        return bad(format!("'{km}' is not a part k/m"));
    };
    let Some(bytes) = bytes.parse::<usize>().ok().filter(|&b| b <= MAX_PAYLOAD) else {
        return bad(format!("'{bytes}' is not a payload length"));
    };
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return bad(format!("'{sha}' is not a sha256"));
    }
    let key = Some(PartKey {
        run_id: run_id.into(),
        shard: shard.into(),
        sha: sha.into(),
        k,
    });
    let Ok(crc) = u32::from_str_radix(crc, 16) else {
        return Err((format!("'{crc}' is not a crc32"), key));
    };
    let data = match base64::engine::general_purpose::STANDARD.decode(chunk) {
        Ok(d) => d,
        Err(e) => {
            return Err((
                format!("part {k}/{m} of shard {shard} is not base64 ({e}): the line is corrupted"),
                key,
            ))
        }
    };
    if crc32fast::hash(&data) != crc {
        return Err((
            format!("part {k}/{m} of shard {shard} fails its crc32: the line is corrupted"),
            key,
        ));
    }
    Ok(Part {
        run_id: run_id.into(),
        shard: shard.into(),
        k,
        m,
        bytes,
        sha: sha.into(),
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(n: usize) -> Vec<u8> {
        // Little redundancy, so the payload spans several lines.
        let v: Vec<u64> = (0..n as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7)
            .collect();
        serde_json::to_vec(&v).unwrap()
    }

    fn shard(i: u64, n: u64) -> plan::Shard {
        plan::Shard::new(i, n).unwrap()
    }

    #[test]
    fn lines_survive_prefixes_interleaving_and_repeats() {
        let a = json(2000);
        let b = json(10);
        let la = encode(&a, "run-1", shard(0, 2));
        let lb = encode(&b, "run-1", shard(1, 2));
        assert!(la.len() >= 3, "{} lines", la.len());
        assert!(la.iter().all(|l| l.len() < 16 * 1024));
        // Each line and its newline fit one atomic pipe write (PIPE_BUF),
        // with a long run id and a shard of a thousand.
        let long = encode(&a, &"r".repeat(64), shard(999, 1000));
        assert!(long.iter().all(|l| l.len() + 1 < 4096), "{}", long[0].len());
        let mut log = String::new();
        for (i, l) in la.iter().enumerate() {
            log.push_str(&format!("[pod/shard-0] {l}\r\n"));
            log.push_str("some other line\n");
            if let Some(x) = lb.get(i) {
                log.push_str(&format!("1: {x}\n"));
            }
        }
        // A collector that repeats a line does no harm.
        log.push_str(&la[0]);
        log.push('\n');
        let mut r = Reader::new();
        assert_eq!(r.feed("all.log", &log), la.len() + lb.len() + 1);
        let (got, damage) = r.finish();
        assert!(damage.is_empty(), "{damage:?}");
        assert_eq!(got.len(), 2);
        let by: BTreeMap<_, _> = got.iter().map(|g| (g.shard.clone(), &g.json)).collect();
        assert_eq!(by["0/2"], &a);
        assert_eq!(by["1/2"], &b);
    }

    #[test]
    fn a_corrupted_line_is_found_and_named() {
        let a = json(2000);
        let lines = encode(&a, "r", shard(0, 1));
        let mut bad = lines.clone();
        // One character of the second line's chunk changed.
        let l = &mut bad[1];
        let at = l.len() - 10;
        let c = if &l[at..at + 1] == "A" { "B" } else { "A" };
        l.replace_range(at..at + 1, c);
        let mut r = Reader::new();
        r.feed("shard.log", &bad.join("\n"));
        let (got, damage) = r.finish();
        assert!(got.is_empty());
        assert!(damage[0].at == "shard.log:2", "{damage:?}");
        assert!(damage[0].what.contains("crc32"), "{damage:?}");
        assert!(damage.iter().any(|d| d.what.contains("lacks part(s) 2")));
        // An intact copy elsewhere repairs it: the damage is not reported.
        let mut r = Reader::new();
        r.feed("shard.log", &bad.join("\n"));
        r.feed("copy.log", &lines[1]);
        let (got, damage) = r.finish();
        assert_eq!(got.len(), 1);
        assert!(damage.is_empty(), "{damage:?}");
        assert_eq!(got[0].json, a);
    }

    #[test]
    fn a_missing_or_cut_line_is_caught() {
        let lines = encode(&json(2000), "r", shard(0, 1));
        let mut r = Reader::new();
        r.feed("x", &lines[..lines.len() - 1].join("\n"));
        let (got, damage) = r.finish();
        assert!(got.is_empty());
        assert!(damage[0].what.contains("lacks part"), "{damage:?}");
        // A line cut short (a collector's limit) fails its own checks.
        let mut r = Reader::new();
        let cut = &lines[0][..lines[0].len() - 100];
        r.feed("y", cut);
        let (_, damage) = r.finish();
        assert!(damage.iter().any(|d| d.at == "y:1"), "{damage:?}");
        // Garbage after the marker.
        let mut r = Reader::new();
        r.feed("z", "YACE-RESULT v1 hello");
        let (_, damage) = r.finish();
        assert!(damage[0].what.contains("not 7"), "{damage:?}");
    }
}
