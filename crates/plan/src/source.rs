//! `--source-addrs`: the local addresses connections leave from. One
//! source address has one ephemeral port range (about 28,000 ports by
//! default), so each connection to one server address needs a port of its
//! own; spreading the connections over several local addresses lifts that
//! ceiling. The list is a range (`127.0.0.2-127.0.0.9`), a CIDR block
//! (`127.0.0.0/29`) or addresses separated by commas, or any mix of them
//! (`10.0.0.5,10.0.0.8-10.0.0.9`); IPv4 or IPv6, not both.
//!
//! Connections are dealt round-robin by their global slot index
//! ([`SourceAddrs::for_slot`]): slot *k* leaves from address *k mod n*, so
//! the spread is even and the same in every run.

use std::net::IpAddr;

/// Most addresses one list may hold: a `/8` by mistake would be 16 million.
pub const MAX_SOURCE_ADDRS: usize = 65_536;

/// A parsed `--source-addrs` list, in the order given (duplicates refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceAddrs(pub Vec<IpAddr>);

/// What is wrong with a list, said in words and with an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    pub problem: String,
    pub hint: &'static str,
}

const HINT: &str = "e.g. --source-addrs 127.0.0.2-127.0.0.9, 127.0.0.0/29 or 10.0.0.5,10.0.0.6";

fn bad(problem: String) -> SourceError {
    SourceError {
        problem,
        hint: HINT,
    }
}

fn addr(s: &str) -> Result<IpAddr, SourceError> {
    s.trim()
        .parse::<IpAddr>()
        .map_err(|_| bad(format!("'{}' is not an IP address", s.trim())))
}

fn to_u128(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

fn from_u128(v: u128, v4: bool) -> IpAddr {
    if v4 {
        IpAddr::V4((v as u32).into())
    } else {
        IpAddr::V6(v.into())
    }
}

fn too_many(part: &str, n: u128) -> SourceError {
    bad(format!(
        "'{part}' holds {n} addresses; at most {MAX_SOURCE_ADDRS} (each adds ~28,000 ports)"
    ))
}

/// Every address of one element: `A`, `A-B` or `A/len`.
fn element(part: &str) -> Result<Vec<IpAddr>, SourceError> {
    let (first, last) = if let Some((a, b)) = part.split_once('-') {
        let (a, b) = (addr(a)?, addr(b)?);
        if a.is_ipv4() != b.is_ipv4() {
            return Err(bad(format!(
                "'{part}' mixes IPv4 and IPv6; a range is of one family"
            )));
        }
        if to_u128(a) > to_u128(b) {
            return Err(SourceError {
                problem: format!("'{part}' runs backwards: {a} comes after {b}"),
                hint: "write the lower address first, e.g. 127.0.0.2-127.0.0.9",
            });
        }
        (a, b)
    } else if let Some((a, len)) = part.split_once('/') {
        let a = addr(a)?;
        let bits = if a.is_ipv4() { 32 } else { 128 };
        let len: u32 = len
            .trim()
            .parse()
            .ok()
            .filter(|&l| l <= bits)
            .ok_or_else(|| {
                bad(format!(
                    "'{part}': the prefix length must be a number from 0 to {bits}"
                ))
            })?;
        let host_bits = bits - len;
        if host_bits > 16 {
            return Err(too_many(part, 1u128 << host_bits.min(127)));
        }
        let mask = (1u128 << host_bits) - 1;
        let base = to_u128(a) & !mask;
        (
            from_u128(base, a.is_ipv4()),
            from_u128(base | mask, a.is_ipv4()),
        )
    } else {
        let a = addr(part)?;
        (a, a)
    };
    let (lo, hi) = (to_u128(first), to_u128(last));
    let n = hi - lo + 1;
    if n > MAX_SOURCE_ADDRS as u128 {
        return Err(too_many(part, n));
    }
    Ok((lo..=hi).map(|v| from_u128(v, first.is_ipv4())).collect())
}

impl SourceAddrs {
    /// Parses a list: ranges, CIDR blocks and single addresses, comma-separated.
    pub fn parse(s: &str) -> Result<SourceAddrs, SourceError> {
        let mut out: Vec<IpAddr> = Vec::new();
        for part in s.split(',').map(str::trim) {
            if part.is_empty() {
                continue;
            }
            out.extend(element(part)?);
            if out.len() > MAX_SOURCE_ADDRS {
                return Err(bad(format!(
                    "the list holds more than {MAX_SOURCE_ADDRS} addresses"
                )));
            }
        }
        let Some(first) = out.first() else {
            return Err(bad("no addresses given".into()));
        };
        if let Some(other) = out.iter().find(|a| a.is_ipv4() != first.is_ipv4()) {
            return Err(bad(format!(
                "mixes IPv4 ({}) and IPv6 ({}); connections to one target use one family",
                if first.is_ipv4() { first } else { other },
                if first.is_ipv4() { other } else { first },
            )));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = out.iter().find(|a| !seen.insert(**a)) {
            return Err(bad(format!("{dup} is listed twice")));
        }
        Ok(SourceAddrs(out))
    }

    /// The address slot `k` (a global slot index) connects from.
    pub fn for_slot(&self, k: u64) -> IpAddr {
        self.0[(k % self.0.len() as u64) as usize]
    }
}

/// The source address of global slot `k` in `addrs` (None: the kernel picks).
pub fn source_for(addrs: &[IpAddr], k: u64) -> Option<IpAddr> {
    (!addrs.is_empty()).then(|| addrs[(k % addrs.len() as u64) as usize])
}

/// The problem, if any, with connecting from `addrs` to an address of the
/// family `target_v4` says.
pub fn family_mismatch(addrs: &[IpAddr], target_v4: bool) -> Option<String> {
    let first = addrs.first()?;
    (first.is_ipv4() != target_v4).then(|| {
        format!(
            "the source addresses are {} but the target is {}: they must be of one family",
            if first.is_ipv4() { "IPv4" } else { "IPv6" },
            if target_v4 { "IPv4" } else { "IPv6" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        SourceAddrs::parse(s)
            .unwrap()
            .0
            .iter()
            .map(|a| a.to_string())
            .collect()
    }

    #[test]
    fn ranges_blocks_and_lists() {
        assert_eq!(
            v("127.0.0.2-127.0.0.4"),
            ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        );
        assert_eq!(
            v("127.0.0.0/30"),
            ["127.0.0.0", "127.0.0.1", "127.0.0.2", "127.0.0.3"]
        );
        // A block is taken from its base, whatever host bits were written.
        assert_eq!(v("10.1.2.7/31"), ["10.1.2.6", "10.1.2.7"]);
        assert_eq!(
            v(" 10.0.0.5 , 10.0.0.8-10.0.0.9,"),
            ["10.0.0.5", "10.0.0.8", "10.0.0.9"]
        );
        assert_eq!(v("127.0.0.9-127.0.0.9"), ["127.0.0.9"]);
        // Across an octet boundary.
        assert_eq!(
            v("10.0.0.255-10.0.1.1"),
            ["10.0.0.255", "10.0.1.0", "10.0.1.1"]
        );
        assert_eq!(v("::1"), ["::1"]);
        assert_eq!(v("fd00::1-fd00::3"), ["fd00::1", "fd00::2", "fd00::3"]);
        assert_eq!(v("fd00::/127"), ["fd00::", "fd00::1"]);
        assert_eq!(SourceAddrs::parse("127.0.0.0/16").unwrap().0.len(), 65_536);
    }

    #[test]
    fn bad_lists_say_what_is_wrong() {
        let e = |s: &str| SourceAddrs::parse(s).unwrap_err();
        let back = e("127.0.0.9-127.0.0.2");
        assert!(back.problem.contains("runs backwards"), "{back:?}");
        assert!(back.hint.contains("lower address first"));
        assert!(e("127.0.0.300")
            .problem
            .contains("'127.0.0.300' is not an IP address"));
        assert!(e("localhost").problem.contains("not an IP address"));
        assert!(e("127.0.0.1,::1")
            .problem
            .contains("mixes IPv4 (127.0.0.1) and IPv6 (::1)"));
        assert!(e("127.0.0.1-::1").problem.contains("mixes IPv4 and IPv6"));
        assert!(e("10.0.0.0/8").problem.contains("at most 65536"));
        assert!(e("fd00::/64").problem.contains("at most 65536"));
        assert!(e("10.0.0.0/33").problem.contains("from 0 to 32"));
        assert!(e("10.0.0.0/x").problem.contains("prefix length"));
        assert!(e("").problem.contains("no addresses"));
        assert!(e(" , ").problem.contains("no addresses"));
        assert!(e("10.0.0.1,10.0.0.0-10.0.0.2")
            .problem
            .contains("10.0.0.1 is listed twice"));
    }

    #[test]
    fn the_deal_is_round_robin_by_global_slot() {
        let s = SourceAddrs::parse("127.0.0.2-127.0.0.4").unwrap();
        let dealt: Vec<String> = (0..7).map(|k| s.for_slot(k).to_string()).collect();
        assert_eq!(
            dealt,
            [
                "127.0.0.2",
                "127.0.0.3",
                "127.0.0.4",
                "127.0.0.2",
                "127.0.0.3",
                "127.0.0.4",
                "127.0.0.2"
            ]
        );
        // Two workers dealt slots w + k·2 (plan::Deal): 6 slots, 2 per address.
        let mut per = std::collections::BTreeMap::new();
        for w in 0..2u64 {
            for k in 0..3u64 {
                *per.entry(s.for_slot(w + k * 2)).or_insert(0) += 1;
            }
        }
        assert!(per.values().all(|&n| n == 2), "{per:?}");
        assert_eq!(source_for(&s.0, 4), Some(s.for_slot(4)));
        assert_eq!(source_for(&[], 4), None);
    }

    #[test]
    fn family_must_match_the_target() {
        let v4 = SourceAddrs::parse("127.0.0.2").unwrap().0;
        let v6 = SourceAddrs::parse("::1").unwrap().0;
        assert_eq!(family_mismatch(&v4, true), None);
        assert_eq!(family_mismatch(&[], false), None);
        assert!(family_mismatch(&v6, true)
            .unwrap()
            .contains("IPv6 but the target is IPv4"));
        assert!(family_mismatch(&v4, false).is_some());
    }
}
