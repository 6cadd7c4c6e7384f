//! Durations and think times as scenario files write them. The types are
//! plan's (`plan::Think`), shared with the engine and the command line.

use plan::rng::Rng;
use plan::Think;
use std::time::Duration;

/// `"50s"`, `"1m 30s"`, `"250ms"`; a bare number is seconds (as on the
/// command line).
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    plan::parse_duration("", s).map_err(|e| e.problem)
}

/// `"2s"`, `"uniform(1s, 3s)"`, `"exponential(2s)"` or `"none"`/`"0"`.
pub(crate) fn parse_think(s: &str) -> Result<Think, String> {
    let t = Think::parse(s)?;
    Ok(match t {
        Think::Fixed { time } if time.is_zero() => Think::None,
        t => t,
    })
}

pub(crate) fn sample(t: &Think, rng: &mut Rng) -> Duration {
    match t {
        Think::None => Duration::ZERO,
        Think::Fixed { time } => *time,
        t => Duration::from_nanos(t.sample(rng.next_f64())),
    }
}

/// A think time as the files write it.
pub(crate) fn think_text(t: &Think) -> String {
    match *t {
        Think::None => "none".to_owned(),
        Think::Fixed { time } => show(time),
        Think::Uniform { min, max } => format!("uniform({}, {})", show(min), show(max)),
        Think::Exponential { mean } => format!("exponential({})", show(mean)),
    }
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
    fn parses_and_prints_every_form() {
        for s in [
            "2s",
            "uniform(1s, 3s)",
            "exponential(2s)",
            "none",
            "1s 500ms",
        ] {
            assert_eq!(think_text(&parse_think(s).unwrap()), s);
        }
        assert_eq!(parse_think("0s"), Ok(Think::None));
        assert_eq!(parse_think("0"), Ok(Think::None));
        assert!(parse_think("uniform(3s, 1s)").is_err());
        assert!(parse_think("normal(1s)").is_err());
        assert_eq!(parse_duration("1m 30s"), Ok(S(90)));
        assert_eq!(parse_duration("5"), Ok(S(5)));
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn samples_stay_in_range_with_the_right_mean() {
        let mut rng = Rng::for_user(1, 2);
        let u = parse_think("uniform(1s, 3s)").unwrap();
        let e = parse_think("exponential(2s)").unwrap();
        let (mut su, mut se) = (0.0, 0.0);
        let n = 20_000;
        for _ in 0..n {
            let d = sample(&u, &mut rng);
            assert!(d >= S(1) && d <= S(3));
            su += d.as_secs_f64();
            se += sample(&e, &mut rng).as_secs_f64();
        }
        assert!((su / n as f64 - 2.0).abs() < 0.05, "{}", su / n as f64);
        assert!((se / n as f64 - 2.0).abs() < 0.1, "{}", se / n as f64);
        assert_eq!(sample(&parse_think("2s").unwrap(), &mut rng), S(2));
        assert_eq!(sample(&Think::None, &mut rng), Duration::ZERO);
    }
}
