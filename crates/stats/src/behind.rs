//! Open model: the server fell behind. The client offered its load on
//! time, but the server answered fewer requests a second than came due, so
//! they piled up in flight and waited longer and longer. Nothing failed —
//! no error, no dropped request — so without this verdict the run reads as
//! "slow but fine"; in truth the rate was above the server's capacity and
//! the latency figures grow with the run's length, not with the load.
//!
//! The verdict is pure: from the plan's timetable and the per-second rows
//! of the result, so `yace report` and `yace merge` reach the same one.

use crate::fmt::count;
use crate::series::SecondRow;
use plan::{Load, Plan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Answered below this share of what came due, over the run's second half,
/// is falling behind (a server that keeps up answers ~100%: what comes due
/// in a second is answered in it, give or take a service time).
pub const ANSWERED_SHARE: f64 = 0.90;
/// Latency of the last seconds at least this many times the first seconds'
/// is growth (a queue that builds up; a steady server stays within noise).
pub const GROWTH: f64 = 1.5;

/// An open-model run whose server did not keep up with the rate offered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Behind {
    /// Requests a second the plan offered over the judged seconds.
    pub offered_per_s: f64,
    /// Responses (and failures) a second over the same seconds: the
    /// capacity the server showed at this load.
    pub answered_per_s: f64,
    /// From this second on, every second answered less than came due.
    pub since_s: u64,
    /// The seconds judged: the second half of the run's whole seconds.
    pub from_s: u64,
    pub to_s: u64,
    /// Requests still waiting for an answer when the run ended (cancelled
    /// at the end), and requests dropped for want of a free slot.
    pub waiting_at_end: u64,
    pub dropped: u64,
    /// Median latency of the first and last seconds with responses, µs.
    pub latency_first_us: f64,
    pub latency_last_us: f64,
    /// One paragraph for people: what happened, what it implies, the fix.
    pub message: String,
}

/// Whether the run's server fell behind its open-model load.
///
/// It holds when, over the second half of the run, the server answered
/// less than [`ANSWERED_SHARE`] of what came due (and at least 5 requests
/// fewer), *and* the shortfall shows as a queue: latency grew by
/// [`GROWTH`]× from the first seconds to the last, or more requests were
/// waiting at the end than the first seconds' latency × the rate explains
/// (Little's law) twice over.
pub fn of(
    plan: &Plan,
    series: &[SecondRow],
    cancelled_at_end: u64,
    dropped: u64,
    steered: bool,
) -> Option<Behind> {
    if !matches!(plan.load, Load::Open { .. }) || steered {
        return None;
    }
    let schedule = plan.schedule();
    let share = 1.0 / plan.part().count.max(1) as f64;
    let due_in = |s: u64| {
        let at = |x: u64| schedule.arrivals_at(x.saturating_mul(1_000_000_000));
        (at(s + 1) - at(s)).max(0.0) * share
    };
    // Whole seconds only: the last may be a partial one.
    let rows: Vec<&SecondRow> = series.iter().filter(|r| r.length_s >= 0.999).collect();
    if rows.len() < 3 {
        return None;
    }
    let half = &rows[rows.len() / 2..];
    let offered: f64 = half.iter().map(|r| due_in(r.second)).sum();
    let answered: f64 = half.iter().map(|r| (r.responses + r.errors) as f64).sum();
    if offered <= 0.0 || answered >= ANSWERED_SHARE * offered || offered - answered < 5.0 {
        return None;
    }
    let with = |r: &&&SecondRow| r.responses > 0;
    let answering: Vec<&&SecondRow> = rows.iter().filter(with).collect();
    let k = (answering.len() / 5).max(1);
    let first = median(answering.iter().take(k).map(|r| r.latency_p50_us));
    let last = median(answering.iter().rev().take(k).map(|r| r.latency_p50_us));
    let n = half.len() as f64;
    let (offered_per_s, answered_per_s) = (offered / n, answered / n);
    let grew = matches!((first, last), (Some(f), Some(l)) if f > 0.0 && l >= GROWTH * f);
    let expected = first.map_or(0.0, |f| offered_per_s * f / 1e6);
    let piled = cancelled_at_end as f64 > 2.0 * expected + 5.0;
    if !(grew || piled) {
        return None;
    }
    // The last second that kept up; the server was behind from the next.
    let since_s = rows
        .iter()
        .rev()
        .find(|r| ((r.responses + r.errors) as f64) >= ANSWERED_SHARE * due_in(r.second))
        .map_or(rows[0].second, |r| r.second + 1);
    let (first, last) = (first.unwrap_or(0.0), last.unwrap_or(0.0));
    let suggest = (answered_per_s * 0.8).floor().max(1.0);
    let mut message = format!(
        "the server fell behind: from second {} it answered {:.1}/s of the {:.1}/s offered, so \
         requests piled up",
        since_s + 1,
        answered_per_s,
        offered_per_s
    );
    if cancelled_at_end > 0 || dropped > 0 {
        message.push_str(&format!(
            " ({} still waiting at the end",
            count(cancelled_at_end)
        ));
        if dropped > 0 {
            message.push_str(&format!(", {} dropped", count(dropped)));
        }
        message.push(')');
    }
    if first > 0.0 {
        message.push_str(&format!(
            " and latency grew from {} (median, first seconds) to {} (last seconds)",
            dur(first),
            dur(last)
        ));
    }
    message.push_str(&format!(
        ". Its capacity at this load is about {answered_per_s:.0}/s: the latency figures grow \
         with the run's length, not the load. Run at about {suggest:.0}/s to measure it \
         keeping up, or let `yace find-max` find the highest rate it sustains."
    ));
    Some(Behind {
        offered_per_s,
        answered_per_s,
        since_s,
        from_s: half[0].second,
        to_s: half[half.len() - 1].second + 1,
        waiting_at_end: cancelled_at_end,
        dropped,
        latency_first_us: first,
        latency_last_us: last,
        message,
    })
}

fn median(it: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = it.collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

fn dur(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::{Late, RateStage, Stop, Target};
    use std::time::Duration;

    /// `rate`/s for `secs` seconds.
    fn plan(rate: f64, secs: u64) -> Plan {
        Plan::get(
            Target::parse("http://127.0.0.1/").unwrap(),
            Load::Open {
                stages: vec![RateStage {
                    duration: Duration::from_secs(secs),
                    from: rate,
                    to: rate,
                }],
                max_inflight: 10_000,
                late: Late::default(),
            },
            Stop {
                requests: None,
                duration: Some(Duration::from_secs(secs)),
            },
        )
    }

    fn row(second: u64, responses: u64, p50_ms: f64) -> SecondRow {
        let mut r: SecondRow = serde_json::from_value(serde_json::json!({
            "second": second, "length_s": 1.0, "responses": responses, "errors": 0,
            "cancelled": 0, "dropped": 0, "non_2xx": 0, "bytes_in": 0, "bytes_out": 0,
            "latency_mean_us": 0.0, "latency_p50_us": 0.0, "latency_p90_us": 0.0,
            "latency_p99_us": 0.0, "latency_max_us": 0.0
        }))
        .unwrap();
        r.latency_p50_us = p50_ms * 1000.0;
        r
    }

    /// A php-fpm pool of 2 children on a 50 ms page (40/s) offered 100/s
    /// for 8 s: the issue's own run (800 started, 296 answered, 504
    /// cancelled at the end, median 2.76 s).
    #[test]
    fn a_pool_offered_more_than_it_serves_fell_behind() {
        let p = plan(100.0, 8);
        let rows: Vec<SecondRow> = (0..8)
            .map(|s| row(s, 37, 50.0 + 700.0 * s as f64))
            .collect();
        let b = of(&p, &rows, 504, 0, false).expect("fell behind");
        assert_eq!((b.from_s, b.to_s, b.since_s), (4, 8, 0));
        assert_eq!(b.offered_per_s, 100.0);
        assert_eq!(b.answered_per_s, 37.0);
        assert_eq!(b.waiting_at_end, 504);
        assert!(
            b.message
                .contains("from second 1 it answered 37.0/s of the 100.0/s offered"),
            "{}",
            b.message
        );
        assert!(b.message.contains("504 still waiting"), "{}", b.message);
        assert!(b.message.contains("about 37/s"), "{}", b.message);
        assert!(b.message.contains("Run at about 29/s"), "{}", b.message);
    }

    #[test]
    fn a_server_that_keeps_up_is_not_behind() {
        let p = plan(100.0, 8);
        // Every second answers what came due, latency steady.
        let rows: Vec<SecondRow> = (0..8).map(|s| row(s, 100, 50.0)).collect();
        assert_eq!(of(&p, &rows, 5, 0, false), None);
        // A little short (95%) is noise around a service time, not behind.
        let rows: Vec<SecondRow> = (0..8).map(|s| row(s, 95, 55.0)).collect();
        assert_eq!(of(&p, &rows, 6, 0, false), None);
        // Closed model: nothing is offered ahead of the answers.
        let mut closed = plan(100.0, 8);
        closed.load = Load::Closed { connections: 2 };
        let rows: Vec<SecondRow> = (0..8).map(|s| row(s, 37, 50.0)).collect();
        assert_eq!(of(&closed, &rows, 504, 0, false), None);
    }

    #[test]
    fn answering_less_without_a_queue_is_not_behind() {
        // Fewer answers but no growth and nothing waiting (e.g. the
        // counts of a run cut short): not a queue, so no verdict.
        let p = plan(100.0, 8);
        let rows: Vec<SecondRow> = (0..8).map(|s| row(s, 60, 50.0)).collect();
        assert_eq!(of(&p, &rows, 0, 0, false), None);
    }

    #[test]
    fn a_server_that_fell_behind_midway_says_when() {
        let p = plan(100.0, 10);
        let rows: Vec<SecondRow> = (0..10)
            .map(|s| {
                if s < 4 {
                    row(s, 100, 20.0)
                } else {
                    row(s, 50, 20.0 + 500.0 * (s - 3) as f64)
                }
            })
            .collect();
        let b = of(&p, &rows, 300, 0, false).expect("fell behind");
        assert_eq!(b.since_s, 4);
        assert_eq!(b.answered_per_s, 50.0);
        // A steered run offered another timetable: no verdict from the plan's.
        assert_eq!(of(&p, &rows, 300, 0, true), None);
    }
}
