//! Durations and think-time distributions, as written in scenario files.

use crate::rng::Rng;
use std::fmt;
use std::time::Duration;

/// A pause: fixed, uniform between two bounds, or exponential around a mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Think {
    #[default]
    None,
    Fixed(Duration),
    Uniform(Duration, Duration),
    /// Exponential with this mean, cut at 10× the mean so that one unlucky
    /// draw cannot park a user for the rest of the run (the cut moves the
    /// mean by less than 0.05%).
    Exponential(Duration),
}

/// How far the exponential tail reaches, in means.
const EXP_CUT: f64 = 10.0;

impl Think {
    /// `"2s"`, `"uniform(1s, 3s)"`, `"exponential(2s)"`, or `"0"`/`"none"`.
    pub fn parse(s: &str) -> Result<Think, String> {
        let s = s.trim();
        if s == "none" {
            return Ok(Think::None);
        }
        let call = |name: &str| {
            s.strip_prefix(name)
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('('))
                .and_then(|r| r.strip_suffix(')'))
        };
        let t = if let Some(args) = call("uniform") {
            let (a, b) = args
                .split_once(',')
                .ok_or("uniform takes two durations: uniform(1s, 3s)")?;
            let (a, b) = (parse_duration(a)?, parse_duration(b)?);
            if a > b {
                return Err(format!(
                    "uniform({}, {}): the lower bound is above the upper",
                    show(a),
                    show(b)
                ));
            }
            Think::Uniform(a, b)
        } else if let Some(args) = call("exponential") {
            Think::Exponential(parse_duration(args)?)
        } else if s.contains('(') {
            return Err(format!("unknown distribution '{s}'"));
        } else {
            Think::Fixed(parse_duration(s)?)
        };
        Ok(match t {
            Think::Fixed(d) | Think::Exponential(d) if d.is_zero() => Think::None,
            Think::Uniform(a, b) if b.is_zero() && a.is_zero() => Think::None,
            t => t,
        })
    }

    pub(crate) fn sample(&self, rng: &mut Rng) -> Duration {
        match *self {
            Think::None => Duration::ZERO,
            Think::Fixed(d) => d,
            Think::Uniform(a, b) => a + (b - a).mul_f64(rng.next_f64()),
            Think::Exponential(mean) => {
                let x = -(1.0 - rng.next_f64()).ln();
                mean.mul_f64(x.min(EXP_CUT))
            }
        }
    }
}

impl fmt::Display for Think {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Think::None => f.write_str("none"),
            Think::Fixed(d) => f.write_str(&show(d)),
            Think::Uniform(a, b) => write!(f, "uniform({}, {})", show(a), show(b)),
            Think::Exponential(m) => write!(f, "exponential({})", show(m)),
        }
    }
}

/// `"50s"`, `"1m 30s"`, `"250ms"`; a bare `0` is zero.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(s).map_err(|e| format!("'{s}' is not a duration: {e}"))
}

/// A duration as the files write it ("1m 30s", "250ms", "0s").
pub(crate) fn show(d: Duration) -> String {
    if d.is_zero() {
        "0s".to_owned()
    } else {
        humantime::format_duration(d).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn parses_every_form() {
        assert_eq!(Think::parse("2s"), Ok(Think::Fixed(S(2))));
        assert_eq!(
            Think::parse("uniform(1s, 3s)"),
            Ok(Think::Uniform(S(1), S(3)))
        );
        assert_eq!(
            Think::parse(" uniform (1s,3s) "),
            Ok(Think::Uniform(S(1), S(3)))
        );
        assert_eq!(
            Think::parse("exponential(2s)"),
            Ok(Think::Exponential(S(2)))
        );
        assert_eq!(Think::parse("0"), Ok(Think::None));
        assert_eq!(Think::parse("none"), Ok(Think::None));
        assert_eq!(Think::parse("0s"), Ok(Think::None));
        assert!(Think::parse("uniform(3s, 1s)").is_err());
        assert!(Think::parse("uniform(1s)").is_err());
        assert!(Think::parse("normal(1s, 2s)").is_err());
        assert!(Think::parse("2 parsecs").is_err());
        assert_eq!(
            Think::parse("uniform(1s, 3s)").unwrap().to_string(),
            "uniform(1s, 3s)"
        );
        assert_eq!(Think::parse("1500ms").unwrap().to_string(), "1s 500ms");
    }

    #[test]
    fn samples_stay_in_range_with_the_right_mean() {
        let mut rng = Rng::for_user(1, 2);
        let u = Think::Uniform(S(1), S(3));
        let e = Think::Exponential(S(2));
        let (mut su, mut se) = (0.0, 0.0);
        let n = 20_000;
        for _ in 0..n {
            let d = u.sample(&mut rng);
            assert!(d >= S(1) && d <= S(3));
            su += d.as_secs_f64();
            let d = e.sample(&mut rng);
            assert!(d <= S(20));
            se += d.as_secs_f64();
        }
        assert!((su / n as f64 - 2.0).abs() < 0.05, "{}", su / n as f64);
        assert!((se / n as f64 - 2.0).abs() < 0.1, "{}", se / n as f64);
        assert_eq!(Think::Fixed(S(2)).sample(&mut rng), S(2));
        assert_eq!(Think::None.sample(&mut rng), Duration::ZERO);
    }
}
