//! Capacity arithmetic, step by step: from a day's views of the tested page
//! to the request rate a server must hold at its peak (the calculation seed
//! 003's author does by hand: the home page's own 1,000,000 views / 86,400 =
//! 11.57 req/s; the home page is 40% of the site's traffic, so the site's
//! rate is the page's ÷ 40% (×2.5) = 28.94; ×3 for the peak = 86.8),
//! and back from a measured rate to the page views it supports. Pure: every
//! step carries its figure, its formula and the assumption behind it, so
//! the front end prints them and nothing is hidden.

#![forbid(unsafe_code)]

const SECONDS_PER_DAY: f64 = 86_400.0;
/// 80/20: 80% of a day's traffic arrives in 20% of its hours (4.8 h).
const EIGHTY_TWENTY_SECONDS: f64 = SECONDS_PER_DAY * 0.2 / 0.8;

/// How the peak is derived from the day's average.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Peak {
    /// The peak is this many times the day's average rate.
    Factor(f64),
    /// 80% of the day's traffic in 20% of its hours: views / 21,600 s.
    EightyTwenty,
}

/// What the traffic is.
#[derive(Debug, Clone, PartialEq)]
pub struct Traffic {
    /// The tested page's own views in a day (not the site's).
    pub views_per_day: f64,
    /// The share of the site's traffic the tested page carries (0–1]: the
    /// site's rate is the page's ÷ it (a front page with 40%: ×2.5).
    pub share: f64,
    /// Requests per page view (assets, API calls): 1 for the page alone.
    pub requests_per_view: f64,
    pub peak: Peak,
    /// A visit's length in seconds, for concurrent users by Little's law.
    pub visit_s: Option<f64>,
    /// Page views per visit, with `visit_s`.
    pub views_per_visit: f64,
}

/// One step of the calculation.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the figure is.
    pub what: &'static str,
    /// How it was computed, with the numbers.
    pub formula: String,
    pub value: f64,
    pub unit: &'static str,
    /// The assumption a reader should check.
    pub assumption: &'static str,
}

/// The steps from `t` to the peak rate; the last `req/s` step is the rate
/// to hold, followed by the Poisson burst headroom and, with a visit
/// length, the concurrent users.
pub fn required(t: &Traffic) -> Vec<Step> {
    let mut steps = Vec::new();
    let avg = t.views_per_day / SECONDS_PER_DAY;
    steps.push(Step {
        what: "the page's average rate over the day",
        formula: format!("{} views of the page / 86,400 s", num(t.views_per_day)),
        value: avg,
        unit: "req/s",
        assumption: "traffic spread over the whole day",
    });
    let mut rate = avg;
    if t.requests_per_view != 1.0 {
        rate *= t.requests_per_view;
        steps.push(Step {
            what: "requests, not views",
            formula: format!("× {} requests per view", num(t.requests_per_view)),
            value: rate,
            unit: "req/s",
            assumption: "every view also fetches its assets and API calls from this server",
        });
    }
    if t.share < 1.0 {
        rate /= t.share;
        steps.push(Step {
            what: "the site's rate: the page's ÷ its share",
            formula: format!("÷ {}% (× {})", num(t.share * 100.0), num(1.0 / t.share)),
            value: rate,
            unit: "req/s",
            assumption: "the tested page is this share of the site's traffic; the rest of the \
                         site costs the server what the page does",
        });
    }
    match t.peak {
        Peak::Factor(f) => {
            rate *= f;
            steps.push(Step {
                what: "peak",
                formula: format!("× {} peak factor", num(f)),
                value: rate,
                unit: "req/s",
                assumption: "the busiest moment carries this many times the day's average",
            });
        }
        Peak::EightyTwenty => {
            rate = rate * SECONDS_PER_DAY / EIGHTY_TWENTY_SECONDS;
            steps.push(Step {
                what: "peak (80/20)",
                formula: "80% of the day's requests in 20% of its hours: ÷ 21,600 s, not \
                          86,400 (× 4)"
                    .to_string(),
                value: rate,
                unit: "req/s",
                assumption: "the 80/20 rule of thumb for a day's traffic",
            });
        }
    }
    let burst = rate + 3.0 * rate.sqrt();
    steps.push(Step {
        what: "with burst headroom",
        formula: format!("λ + 3√λ = {} + 3 × {}", num(rate), num(rate.sqrt())),
        value: burst,
        unit: "req/s",
        assumption:
            "arrivals are Poisson: a second at the peak exceeds this about 0.1% of the time",
    });
    if let Some(visit) = t.visit_s {
        let visits_per_s = rate / t.requests_per_view.max(1e-9) / t.views_per_visit.max(1e-9);
        steps.push(Step {
            what: "concurrent users at the peak",
            formula: format!(
                "Little's law: {} visits/s × {} s per visit",
                num(visits_per_s),
                num(visit)
            ),
            value: visits_per_s * visit,
            unit: "users",
            assumption: "each visit lasts this long and holds one user for all of it",
        });
    }
    steps
}

/// The tested page's views a day that a measured rate supports (the site
/// around it: ÷ the page's share), under the same
/// assumptions, keeping `headroom` of it in reserve (0.25: the server runs
/// at 75% of what it was measured to hold). Steps, the last one the answer.
pub fn supported(rate: f64, t: &Traffic, headroom: f64) -> Vec<Step> {
    let usable = rate * (1.0 - headroom);
    let mut steps = vec![Step {
        what: "usable rate",
        formula: format!(
            "{} req/s × (1 − {}% headroom)",
            num(rate),
            num(headroom * 100.0)
        ),
        value: usable,
        unit: "req/s",
        assumption: "the server is not run at its measured limit",
    }];
    let peak_to_avg = match t.peak {
        Peak::Factor(f) => f,
        Peak::EightyTwenty => SECONDS_PER_DAY / EIGHTY_TWENTY_SECONDS,
    };
    let views = usable * t.share / t.requests_per_view / peak_to_avg * SECONDS_PER_DAY;
    steps.push(Step {
        what: "the tested page's views a day",
        formula: format!(
            "× {}% (the page's share of the site) ÷ {} requests per view ÷ {} peak-to-average \
             × 86,400 s",
            num(t.share * 100.0),
            num(t.requests_per_view),
            num(peak_to_avg)
        ),
        value: views,
        unit: "views/day",
        assumption: "the traffic shape of --share, --requests-per-view and --peak",
    });
    steps
}

/// A worker pool (php-fpm `pm.max_children`, Apache `MaxRequestWorkers`)
/// that holds `rate` when each request takes `service_s`, by Little's law,
/// with `margin` (1.25: a quarter more).
pub fn pool(rate: f64, service_s: f64, margin: f64) -> Step {
    let busy = rate * service_s;
    Step {
        what: "workers (pm.max_children, MaxRequestWorkers)",
        formula: format!(
            "Little's law: {} req/s × {} s per request × {} margin",
            num(rate),
            num(service_s),
            num(margin)
        ),
        value: (busy * margin).ceil(),
        unit: "workers",
        assumption: "a worker serves one request at a time for the whole service time",
    }
}

/// The workers that fit in memory: `memory` bytes, less `reserve` (0.2:
/// a fifth kept for the system, the database, the page cache), divided by
/// each worker's resident memory — the cap seed 001's author found by hand
/// for `pm.max_children`.
pub fn memory_cap(rss_bytes: f64, memory_bytes: f64, reserve: f64) -> Step {
    Step {
        what: "workers that fit in memory",
        formula: format!(
            "{} × (1 − {}) ÷ {} per worker",
            size(memory_bytes),
            num(reserve),
            size(rss_bytes)
        ),
        value: (memory_bytes * (1.0 - reserve) / rss_bytes.max(1.0)).floor(),
        unit: "workers",
        assumption:
            "each worker's resident memory stays as measured (PHP's memory_limit bounds its peak)",
    }
}

/// Bytes as people write them: 42 MB, 7.6 GB (powers of 1024).
pub fn size(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v >= 100.0 || u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses `42MB`, `8G`, `512MiB`, `1.5GB`, a bare number of bytes
/// (powers of 1024, as `free` and php-fpm's docs count).
pub fn parse_size(s: &str) -> Option<f64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = n.parse().ok().filter(|v: &f64| v.is_finite() && *v > 0.0)?;
    let mul = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches("ib")
        .trim_end_matches('b')
    {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * mul)
}

/// A number as people write it: thousands grouped, at most 2 decimals.
pub fn num(v: f64) -> String {
    let rounded = (v * 100.0).round() / 100.0;
    let whole = rounded.trunc() as u64;
    let frac = ((rounded - rounded.trunc()) * 100.0).round() as u64;
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    match frac {
        0 => out,
        f if f % 10 == 0 => format!("{out}.{}", f / 10),
        f => format!("{out}.{f:02}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed003() -> Traffic {
        Traffic {
            views_per_day: 1_000_000.0,
            share: 0.4,
            requests_per_view: 1.0,
            peak: Peak::Factor(3.0),
            visit_s: None,
            views_per_visit: 1.0,
        }
    }

    #[test]
    fn seed_003s_arithmetic_step_by_step() {
        // "1000000 / 86400 = 11.574074 … ×2.5 = 28.935185 … ×3 = 86.805552".
        let s = required(&seed003());
        let v: Vec<f64> = s.iter().map(|s| s.value).collect();
        assert!((v[0] - 11.574074).abs() < 1e-6, "{v:?}");
        assert!((v[1] - 28.935185).abs() < 1e-6, "{v:?}");
        assert!((v[2] - 86.805555).abs() < 1e-5, "{v:?}");
        // Poisson headroom on top: 86.8 + 3 × 9.32 = 114.76.
        assert!((v[3] - (86.805555 + 3.0 * 86.805555f64.sqrt())).abs() < 1e-6);
        assert_eq!(s[1].formula, "÷ 40% (× 2.5)");
    }

    #[test]
    fn eighty_twenty_is_views_over_21600_seconds() {
        let t = Traffic {
            peak: Peak::EightyTwenty,
            share: 1.0,
            ..seed003()
        };
        let s = required(&t);
        assert!((s[1].value - 1_000_000.0 / 21_600.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn users_by_littles_law_and_requests_per_view() {
        let t = Traffic {
            requests_per_view: 10.0,
            share: 1.0,
            peak: Peak::Factor(1.0),
            visit_s: Some(300.0),
            views_per_visit: 5.0,
            ..seed003()
        };
        let s = required(&t);
        // 11.57 views/s × 10 = 115.7 req/s; visits/s = 11.57 / 5 = 2.31;
        // users = 2.31 × 300 = 694.4.
        assert!((s[1].value - 115.740_740).abs() < 1e-5);
        let users = s.last().unwrap();
        assert_eq!(users.unit, "users");
        assert!((users.value - 694.444_444).abs() < 1e-5, "{users:?}");
    }

    #[test]
    fn a_rate_read_backwards_is_the_inverse() {
        let t = Traffic {
            peak: Peak::EightyTwenty,
            share: 1.0,
            ..seed003()
        };
        // The example: 420 req/s, 80/20, 25% headroom ≈ 6.8M views.
        let s = supported(420.0, &t, 0.25);
        let views = s.last().unwrap().value;
        assert!((views - 420.0 * 0.75 * 21_600.0).abs() < 1e-6);
        assert!((6.7e6..6.9e6).contains(&views), "{views}");
        // And back: those views need exactly the usable rate.
        let fwd = required(&Traffic {
            views_per_day: views,
            ..t
        });
        assert!((fwd[1].value - 420.0 * 0.75).abs() < 1e-6);
    }

    #[test]
    fn a_pool_capped_by_memory() {
        // 8 GiB, a fifth kept back, 42 MiB a child: 156 children fit.
        let c = memory_cap(42.0 * 1048576.0, 8.0 * 1073741824.0, 0.2);
        assert_eq!(c.value, 156.0);
        assert_eq!(c.formula, "8.0 GB × (1 − 0.2) ÷ 42.0 MB per worker");
        assert_eq!(parse_size("42MB"), Some(42.0 * 1048576.0));
        assert_eq!(parse_size("8G"), Some(8.0 * 1073741824.0));
        assert_eq!(parse_size("1.5GiB"), Some(1.5 * 1073741824.0));
        assert_eq!(parse_size("4096"), Some(4096.0));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("3 parsecs"), None);
    }

    #[test]
    fn pool_sizing_by_littles_law() {
        let p = pool(87.0, 0.12, 1.25);
        assert_eq!(p.value, (87.0f64 * 0.12 * 1.25).ceil());
        assert_eq!(p.value, 14.0);
    }

    #[test]
    fn numbers_read_as_written() {
        assert_eq!(num(86.805555), "86.81");
        assert_eq!(num(1_000_000.0), "1,000,000");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(40.0), "40");
    }
}
