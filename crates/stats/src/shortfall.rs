//! Open model: the load that was asked for and not offered. A run that did
//! not send what its plan said measured a different load than the one on
//! the command line, so this is said at the top of every summary, with the
//! likely cause and what to change — not left in a footnote.

use crate::fmt::count;
use crate::recorder::Totals;
use plan::{Field, Load, Plan, Spelling};
use sample::Outcome;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A request counts as late when it started more than this long after it
/// was due (it was sent, but not at the rate asked for).
pub const LATE_MS: u64 = 10;
/// Late requests are a shortfall above this share of those sent.
pub const LATE_SHARE: f64 = 0.01;

/// An open-model run that did not offer the load its plan asked for: some
/// requests were dropped, or more than 1% were sent over 10 ms late.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Shortfall {
    /// Requests due before the run stopped.
    pub due: u64,
    /// Of those, sent (whatever became of them).
    pub sent: u64,
    /// Of those, never sent.
    pub dropped: u64,
    /// Sent more than 10 ms after they were due.
    pub late: u64,
    pub cause: Cause,
    /// One paragraph for people: what happened, the cause, the fix.
    pub message: String,
}

/// Why the load fell short, as far as the run can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The client's busiest thread was saturated: it could not send on time.
    ClientSaturated,
    /// At the measured service time, the in-flight cap allows less than the
    /// planned rate (Little's law).
    InflightCap,
    /// Connections failed or were closed by the server, so slots were busy
    /// connecting rather than sending.
    Connections,
    /// The slots were free on average but the server was too slow at times
    /// (stalls, slow responses): requests came due with every slot busy.
    ServerTooSlow,
}

/// What the shortfall check needs besides the totals.
pub(crate) struct Offered<'a> {
    pub plan: &'a Plan,
    pub planned: Option<u64>,
    pub not_yet_due: Option<u64>,
    pub saturated: bool,
    pub busiest_thread: f64,
    pub connections_opened: u64,
    pub duration_s: f64,
}

/// The shortfall of an open-model run, if it had one.
pub(crate) fn of(t: &Totals, o: &Offered, spell: &dyn Spelling) -> Option<Shortfall> {
    let Load::Open { max_inflight, .. } = &o.plan.load else {
        return None;
    };
    let dropped = t.count(Outcome::Dropped);
    let sent = t.requests() - dropped;
    let due = match (o.planned, o.not_yet_due) {
        (Some(p), Some(n)) => p.saturating_sub(n),
        _ => sent + dropped,
    };
    let late = if t.lag.is_empty() {
        0
    } else {
        t.lag.count_between(LATE_MS * 1000 + 1, t.lag.max())
    };
    let late_share = late as f64 / sent.max(1) as f64;
    if dropped == 0 && late_share <= LATE_SHARE {
        return None;
    }
    let slots =
        o.plan.part().share(*max_inflight) * o.plan.http2.map_or(1, |h| u64::from(h.streams));
    // The rate asked for over the part of the plan that came due.
    let rate = if o.duration_s > 0.0 {
        due as f64 / o.duration_s
    } else {
        0.0
    };
    let service_s = if t.service.is_empty() {
        0.0
    } else {
        t.service.mean() / 1e6
    };
    // Little's law: requests in flight at once = rate × time each takes.
    let needed = rate * service_s;
    let connect_errors: u64 = [
        Outcome::ConnectRefused,
        Outcome::ConnectTimeout,
        Outcome::ConnectError,
        Outcome::Reset,
        Outcome::ClosedBeforeResponse,
    ]
    .iter()
    .map(|&c| t.count(c))
    .sum();
    let reconnecting = o.plan.keepalive && o.connections_opened > sent / 2 + slots;
    let (cause, why, fix) = if o.saturated {
        (
            Cause::ClientSaturated,
            format!(
                "the client was saturated (busiest thread {:.0}% busy) and could not send on time",
                o.busiest_thread * 100.0
            ),
            format!(
                "add threads ({}) or client machines; the server was not measured at this rate",
                spell.usage(Field::Threads)
            ),
        )
    } else if connect_errors * 100 > sent || reconnecting {
        (
            Cause::Connections,
            format!(
                "connections failed or were closed by the server ({} connection errors, {} \
                 connections opened for {} requests), so slots were busy connecting",
                count(connect_errors),
                count(o.connections_opened),
                count(sent)
            ),
            "check the server's connection limits (listen backlog, worker_connections, \
             MaxRequestWorkers, keepalive_requests) and the errors below"
                .to_string(),
        )
    } else if needed > slots as f64 * 0.9 {
        let raise = (needed * 1.5).ceil() as u64;
        (
            Cause::InflightCap,
            format!(
                "the in-flight cap — at {} per request, {:.0}/s needs about {:.0} requests in \
                 flight, more than the {} that {} {} allows",
                ms(service_s),
                rate,
                needed,
                slots,
                spell.usage(Field::MaxInflight),
                max_inflight
            ),
            format!(
                "raise {} to {raise} or more; if the service time grows with it, the server \
                 cannot serve {rate:.0}/s, and that is the finding",
                spell.usage(Field::MaxInflight)
            ),
        )
    } else {
        let max_s = t.service.max() as f64 / 1e6;
        (
            Cause::ServerTooSlow,
            format!(
                "the server was too slow at times — service time mean {}, max {}: requests came \
                 due with all {} slots busy",
                ms(service_s),
                ms(max_s),
                count(slots)
            ),
            "see the per-second rows for when; lower the rate to find what the server \
             sustains, or accept the stall as the server's behaviour"
                .to_string(),
        )
    };
    let pct = |n: u64| n as f64 * 100.0 / due.max(1) as f64;
    let mut what = format!(
        "the load asked for was not offered: {} of {} requests due were sent ({:.1}%)",
        count(sent),
        count(due),
        pct(sent)
    );
    if dropped > 0 {
        what.push_str(&format!(", {} dropped", count(dropped)));
    }
    if late > 0 {
        what.push_str(&format!(
            ", {} sent more than {LATE_MS} ms late",
            count(late)
        ));
    }
    Some(Shortfall {
        due,
        sent,
        dropped,
        late,
        cause,
        message: format!("{what}. Cause: {why}. Fix: {fix}."),
    })
}

fn ms(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 0.001 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::record_ns;
    use plan::{Keys, Late, RateStage, Stop, Target};
    use std::time::Duration;

    /// 500/s for 3 s, at most `cap` in flight.
    fn plan(cap: u64) -> Plan {
        Plan::get(
            Target::parse("http://127.0.0.1/").unwrap(),
            Load::Open {
                stages: vec![RateStage {
                    duration: Duration::from_secs(3),
                    from: 500.0,
                    to: 500.0,
                }],
                max_inflight: cap,
                late: Late::default(),
            },
            Stop {
                requests: None,
                duration: Some(Duration::from_secs(3)),
            },
        )
    }

    /// `sent` requests taking `service_ms` each and `lag_ms` late, and
    /// `dropped` more.
    fn totals(sent: u64, dropped: u64, service_ms: u64, lag_ms: u64) -> Totals {
        let mut t = Totals::default();
        t.outcomes[Outcome::Response as usize] = sent;
        t.outcomes[Outcome::Dropped as usize] = dropped;
        for _ in 0..sent {
            record_ns(&mut t.service, service_ms * 1_000_000);
            record_ns(&mut t.lag, lag_ms * 1_000_000);
        }
        t
    }

    fn offered(plan: &Plan) -> Offered<'_> {
        Offered {
            plan,
            planned: Some(1500),
            not_yet_due: Some(0),
            saturated: false,
            busiest_thread: 0.1,
            connections_opened: 20,
            duration_s: 3.0,
        }
    }

    #[test]
    fn a_run_that_offered_its_load_has_no_shortfall() {
        let p = plan(20);
        assert_eq!(of(&totals(1500, 0, 1, 0), &offered(&p), &Keys), None);
        // A few late requests are noise, not a shortfall.
        let mut t = totals(1500, 0, 1, 0);
        record_ns(&mut t.lag, 50_000_000);
        assert_eq!(of(&t, &offered(&p), &Keys), None);
        // Closed model: nothing is due, nothing falls short.
        let mut closed = plan(20);
        closed.load = Load::Closed { connections: 20 };
        assert_eq!(of(&totals(10, 5, 1, 0), &offered(&closed), &Keys), None);
    }

    #[test]
    fn the_in_flight_cap_is_named_with_the_rate_it_allows() {
        let p = plan(20);
        let s = of(&totals(600, 900, 100, 90), &offered(&p), &Keys).unwrap();
        assert_eq!(s.cause, Cause::InflightCap);
        assert_eq!((s.due, s.sent, s.dropped, s.late), (1500, 600, 900, 600));
        // 500/s × 100 ms = 50 in flight; raise to 1.5×.
        assert!(
            s.message.contains("needs about 50 requests in flight"),
            "{}",
            s.message
        );
        assert!(
            s.message.contains("raise max_inflight to 75"),
            "{}",
            s.message
        );
        assert!(s.message.contains("600 of 1,500"), "{}", s.message);
    }

    #[test]
    fn a_stalling_server_is_told_apart_from_the_cap() {
        let p = plan(20);
        let mut t = totals(1400, 100, 1, 0);
        record_ns(&mut t.service, 700_000_000);
        let s = of(&t, &offered(&p), &Keys).unwrap();
        assert_eq!(s.cause, Cause::ServerTooSlow);
        assert!(s.message.contains("max 700."), "{}", s.message);
    }

    #[test]
    fn a_saturated_client_comes_first() {
        let p = plan(20);
        let mut o = offered(&p);
        o.saturated = true;
        o.busiest_thread = 0.97;
        let s = of(&totals(600, 900, 100, 90), &o, &Keys).unwrap();
        assert_eq!(s.cause, Cause::ClientSaturated);
        assert!(s.message.contains("97% busy"), "{}", s.message);
        assert!(s.message.contains("add threads (threads)"), "{}", s.message);
    }

    #[test]
    fn failing_or_closed_connections_are_named() {
        let p = plan(20);
        let mut t = totals(1000, 500, 1, 0);
        t.outcomes[Outcome::ConnectRefused as usize] = 200;
        let s = of(&t, &offered(&p), &Keys).unwrap();
        assert_eq!(s.cause, Cause::Connections);
        let mut o = offered(&p);
        o.connections_opened = 1000;
        let s = of(&totals(1000, 500, 1, 0), &o, &Keys).unwrap();
        assert_eq!(s.cause, Cause::Connections);
        assert!(
            s.message.contains("1,000 connections opened"),
            "{}",
            s.message
        );
    }

    #[test]
    fn lateness_alone_is_a_shortfall_past_one_percent() {
        let p = plan(20);
        let mut t = totals(1500, 0, 1, 0);
        for _ in 0..20 {
            record_ns(&mut t.lag, 30_000_000);
        }
        let s = of(&t, &offered(&p), &Keys).unwrap();
        assert_eq!((s.dropped, s.late), (0, 20));
        assert!(
            s.message.contains("20 sent more than 10 ms late"),
            "{}",
            s.message
        );
    }
}
