//! A user's cookie jar, the one every flow keeps (plain virtual users and
//! scenario journeys alike). One run has one target, so Domain and Path are
//! not matched: every cookie the target set is sent back on every later
//! request. Max-Age ≤ 0, or an Expires not after the response's Date,
//! deletes a cookie; otherwise cookies live as long as the user (the jar
//! reads no clock). The jar holds what browsers hold for one domain, and
//! counts what it could not keep.

/// Cookies a jar keeps at most, as browsers do per domain (Chrome's 180);
/// the oldest goes first.
pub const MAX_COOKIES: usize = 180;
/// Largest cookie kept, name and value (RFC 6265 §6.1's 4,096 bytes).
pub const MAX_COOKIE_BYTES: usize = 4096;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Jar {
    cookies: Vec<(String, String)>,
}

impl Jar {
    /// Applies one `Set-Cookie` value; `now` is the response's `Date` in
    /// Unix seconds, when it had one. Returns how many cookies it could
    /// not keep: the cookie itself when it is too large, or the oldest one
    /// it pushed out of a full jar.
    pub fn set(&mut self, header: &str, now: Option<i64>) -> u64 {
        let mut parts = header.split(';');
        let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else {
            return 0;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.is_empty() {
            return 0;
        }
        if name.len() + value.len() > MAX_COOKIE_BYTES {
            return 1;
        }
        let mut max_age: Option<i64> = None;
        let mut expires: Option<i64> = None;
        for attr in parts {
            let (k, v) = attr.split_once('=').unwrap_or((attr, ""));
            let k = k.trim();
            if k.eq_ignore_ascii_case("max-age") {
                // Unparseable Max-Age is ignored (RFC 6265 §5.2.2).
                if let Ok(n) = v.trim().parse::<i64>() {
                    max_age = Some(n);
                }
            } else if k.eq_ignore_ascii_case("expires") {
                expires = parse_http_date(v);
            }
        }
        // Max-Age wins over Expires. Without a Date header the jar knows no
        // "now"; an Expires before 2000 is then taken as a deletion.
        let expired = match (max_age, expires) {
            (Some(n), _) => n <= 0,
            (None, Some(t)) => t <= now.unwrap_or(946_684_800),
            (None, None) => false,
        };
        let at = self.cookies.iter().position(|(n, _)| n == name);
        match (at, expired) {
            (Some(i), true) => {
                self.cookies.remove(i);
                0
            }
            (Some(i), false) => {
                self.cookies[i].1 = value.to_owned();
                0
            }
            (None, true) => 0,
            (None, false) => {
                let full = self.cookies.len() == MAX_COOKIES;
                if full {
                    self.cookies.remove(0);
                }
                self.cookies.push((name.to_owned(), value.to_owned()));
                u64::from(full)
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.cookies
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }

    /// `a=1; b=2`, in the order the cookies were first set.
    pub fn write(&self, out: &mut Vec<u8>) {
        for (i, (n, v)) in self.cookies.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b"; ");
            }
            out.extend_from_slice(n.as_bytes());
            out.push(b'=');
            out.extend_from_slice(v.as_bytes());
        }
    }
}

/// Unix seconds of an HTTP date in any of its three forms (IMF-fixdate,
/// RFC 850, asctime) or the Netscape cookie form (`01-Jan-1970`).
pub fn parse_http_date(s: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let (mut day, mut month, mut year, mut time) = (None, None, None, None);
    for tok in s.split([' ', ',', '-', '\t']).filter(|t| !t.is_empty()) {
        if tok.contains(':') {
            let mut it = tok.split(':').map(|p| p.parse::<i64>().ok());
            if let (Some(Some(h)), Some(Some(m)), Some(Some(sec))) =
                (it.next(), it.next(), it.next())
            {
                time = Some(h * 3600 + m * 60 + sec);
            }
        } else if tok.bytes().all(|b| b.is_ascii_digit()) {
            let n: i64 = tok.parse().ok()?;
            if tok.len() <= 2 && day.is_none() {
                day = Some(n);
            } else if year.is_none() {
                year = Some(match (tok.len(), n) {
                    (1 | 2, 70..) => 1900 + n,
                    (1 | 2, _) => 2000 + n,
                    _ => n,
                });
            }
        } else if let (None, Some(prefix)) = (month, tok.get(..3)) {
            let prefix = prefix.to_ascii_lowercase();
            month = MONTHS
                .iter()
                .position(|m| *m == prefix)
                .map(|i| i as i64 + 1);
        }
    }
    let (d, m, y, t) = (day?, month?, year?, time?);
    if !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400 + t)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(j: &Jar) -> String {
        let mut out = Vec::new();
        j.write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn set_overwrite_delete() {
        let mut j = Jar::default();
        j.set("YACESESSID=abc; Path=/; HttpOnly", None);
        j.set("theme=dark", None);
        assert_eq!(header(&j), "YACESESSID=abc; theme=dark");
        j.set("YACESESSID=def; Path=/", None);
        assert_eq!(
            header(&j),
            "YACESESSID=def; theme=dark",
            "overwrite keeps the place"
        );
        j.set("YACESESSID=; Max-Age=0", None);
        assert_eq!(header(&j), "theme=dark");
        assert_eq!(j.get("YACESESSID"), None);
        j.set("theme=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT", None);
        assert!(j.is_empty());
        j.set(
            "a=1; Max-Age=60; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            None,
        );
        assert_eq!(j.get("a"), Some("1"), "Max-Age wins over Expires");
        j.set("garbage", None);
        j.set("=nameless", None);
        assert_eq!(header(&j), "a=1");
    }

    #[test]
    fn expires_against_the_response_date() {
        let now = parse_http_date("Sun, 22 Nov 2026 10:00:00 GMT");
        let mut j = Jar::default();
        j.set("s=1; Expires=Sun, 22 Nov 2026 11:00:00 GMT", now);
        assert_eq!(j.get("s"), Some("1"));
        j.set("s=1; Expires=Sun, 22 Nov 2026 09:00:00 GMT", now);
        assert_eq!(j.get("s"), None);
        j.set("s=1; Expires=Sun, 22 Nov 2026 09:00:00 GMT", None);
        assert_eq!(
            j.get("s"),
            Some("1"),
            "without a Date header only old dates delete"
        );
    }

    #[test]
    fn jar_is_bounded_as_a_browser_is_per_domain_and_counts_what_it_drops() {
        let mut j = Jar::default();
        let dropped: u64 = (0..200).map(|i| j.set(&format!("c{i}=v"), None)).sum();
        assert_eq!(j.cookies.len(), MAX_COOKIES);
        assert_eq!(dropped, 200 - MAX_COOKIES as u64);
        assert_eq!(j.get("c0"), None);
        assert_eq!(j.get("c199"), Some("v"));
        // Overwriting a kept cookie drops nothing.
        assert_eq!(j.set("c199=w", None), 0);
        // A cookie over 4 KiB is not kept, and counted.
        let big = format!("big={}", "x".repeat(MAX_COOKIE_BYTES));
        assert_eq!(j.set(&big, None), 1);
        assert_eq!(j.get("big"), None);
        let fits = format!("fit={}", "x".repeat(MAX_COOKIE_BYTES - 3));
        assert_eq!(j.set(&fits, None), 1, "kept, pushing the oldest out");
        assert!(j.get("fit").is_some());
    }

    #[test]
    fn http_dates() {
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Sun Nov  6 08:49:37 1994"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01-Jan-1970 00:00:01 GMT"), Some(1));
        assert_eq!(parse_http_date("yesterday"), None);
        assert_eq!(parse_http_date("Été, 01 Été 2020 00:00:00"), None);
    }
}
