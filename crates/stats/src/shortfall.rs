//! Open model: the load that was asked for and not offered. A run that did
//! not send what its plan said measured a different load than the one on
//! the command line, so this is said at the top of every summary, with the
//! likely cause and what to change — not left in a footnote.
//!
//! Paced virtual users too: their iterations are planned as the open
//! model's requests are (`plan::paced`), and one that could not start on
//! time is missed (docs/design/016-paced-users-accounting.md).

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
    /// Paced virtual users: `due`, `sent` and `dropped` count iterations
    /// (started, missed), not requests. Absent (false) for the open model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub iterations: bool,
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
    /// Paced users: some users were never answered the whole run — the
    /// server took only so many connections at once (with keep-alive each
    /// user holds one of its workers) and the rest waited.
    UsersNeverServed,
    /// Paced users: every user was answered, but iterations ran past their
    /// pacing slot (slow responses), so the next one came due while the
    /// user was still busy.
    SlowIterations,
}

/// What the shortfall check needs besides the totals.
pub(crate) struct Offered<'a> {
    pub plan: &'a Plan,
    pub planned: Option<u64>,
    pub not_yet_due: Option<u64>,
    /// Paced virtual users: their iterations and users (with `planned`
    /// counting iterations).
    pub paced: Option<crate::result::Paced>,
    pub saturated: bool,
    pub busiest_thread: f64,
    pub connections_opened: u64,
    pub duration_s: f64,
}

/// The shortfall of an open-model run, if it had one.
pub(crate) fn of(t: &Totals, o: &Offered, spell: &dyn Spelling) -> Option<Shortfall> {
    if let (Load::Users { pacing, .. }, Some(paced), Some(planned)) =
        (&o.plan.load, o.paced, o.planned)
    {
        let pacing_s = pacing.map_or(0.0, |p| p.as_secs_f64());
        return users(t, o, &paced, planned, pacing_s, spell);
    }
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
        iterations: false,
        cause,
        message: format!("{what}. Cause: {why}. Fix: {fix}."),
    })
}

/// Paced users' shortfall: iterations missed. Lateness alone is not one
/// here (a user's timers and think times make some lag normal); a missed
/// iteration is, as a dropped request is in the open model.
fn users(
    t: &Totals,
    o: &Offered,
    p: &crate::result::Paced,
    planned: u64,
    pacing_s: f64,
    spell: &dyn Spelling,
) -> Option<Shortfall> {
    if p.missed == 0 {
        return None;
    }
    let due = planned.saturating_sub(p.not_yet_due);
    let late = if t.lag.is_empty() {
        0
    } else {
        t.lag.count_between(LATE_MS * 1000 + 1, t.lag.max())
    };
    let connect_errors: u64 = [
        Outcome::ConnectRefused,
        Outcome::ConnectTimeout,
        Outcome::ConnectError,
    ]
    .iter()
    .map(|&c| t.count(c))
    .sum();
    let served = p.users - p.users_never_served;
    let service_s = if t.service.is_empty() {
        0.0
    } else {
        t.service.mean() / 1e6
    };
    let (cause, why, fix) = if o.saturated {
        (
            Cause::ClientSaturated,
            format!(
                "the client was saturated (busiest thread {:.0}% busy) and could not start \
                  iterations on time",
                o.busiest_thread * 100.0
            ),
            format!(
                "add threads ({}) or client machines; the server was not measured at this load",
                spell.usage(Field::Threads)
            ),
        )
    } else if p.users_never_served > 0 {
        (
            Cause::UsersNeverServed,
            format!(
                "the server answered only {} of the {} users: it took no more than about {} \
                  connections at once, and {} users waited for an answer from their first \
                  request to the end of the run ({} connection errors){}",
                count(served),
                count(p.users),
                count(served),
                count(p.users_never_served),
                count(connect_errors),
                if o.plan.keepalive {
                    "; with keep-alive each user holds one of the server's workers for the \
                      whole run"
                } else {
                    ""
                }
            ),
            format!(
                "raise the server's limit on connections or workers (Apache MaxRequestWorkers \
                  and ServerLimit, nginx worker_connections, php-fpm pm.max_children behind a \
                  server that holds connections, the listen backlog) to {} or more, or run fewer \
                  users ({}); the latency counts the waiting users' time",
                count(p.users),
                spell.usage(Field::Users)
            ),
        )
    } else if connect_errors * 100 > p.started {
        (
            Cause::Connections,
            format!(
                "connections failed ({} connection errors for {} iterations started), so users \
                  were busy connecting when their next iteration came due",
                count(connect_errors),
                count(p.started)
            ),
            "check the server's connection limits (listen backlog, worker_connections, \
              MaxRequestWorkers) and the errors below"
                .to_string(),
        )
    } else {
        let max_s = t.service.max() as f64 / 1e6;
        (
            Cause::SlowIterations,
            format!(
                "iterations ran past their pacing ({}): service time mean {}, max {}, so users \
                  were still busy when their next iteration came due",
                ms(pacing_s),
                ms(service_s),
                ms(max_s)
            ),
            format!(
                "the server does not keep up with {} users at this pacing; lower the users or \
                  lengthen {} to find what it sustains",
                count(p.users),
                spell.usage(Field::Pacing)
            ),
        )
    };
    let mut what = format!(
        "the load asked for was not offered: {} of {} iterations due were started ({:.1}%), {} \
          missed",
        count(p.started),
        count(due),
        p.started as f64 * 100.0 / due.max(1) as f64,
        count(p.missed)
    );
    if p.users_never_served > 0 {
        what.push_str(&format!(
            "; {} of {} users were never answered",
            count(p.users_never_served),
            count(p.users)
        ));
    }
    Some(Shortfall {
        due,
        sent: p.started,
        dropped: p.missed,
        late,
        iterations: true,
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
            paced: None,
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

    /// 20 paced users, 500 ms, 3 s: 120 iterations planned.
    fn paced_plan() -> Plan {
        let mut p = plan(20);
        p.load = Load::Users {
            stages: vec![plan::UserStage {
                duration: Duration::from_secs(3),
                from: 20.0,
                to: 20.0,
            }],
            pacing: Some(Duration::from_millis(500)),
            think: plan::Think::None,
        };
        p
    }

    fn paced(p: &Plan, pc: crate::result::Paced) -> Offered<'_> {
        Offered {
            planned: p.planned_iterations(),
            not_yet_due: Some(pc.not_yet_due),
            paced: Some(pc),
            ..offered(p)
        }
    }

    #[test]
    fn paced_users_never_answered_are_named_with_the_servers_limit() {
        let p = paced_plan();
        assert_eq!(p.planned_iterations(), Some(120));
        // 5 users served 6 iterations each; 15 started one each, never
        // answered, and missed the other 5.
        let pc = crate::result::Paced {
            started: 45,
            missed: 75,
            not_yet_due: 0,
            users: 20,
            users_never_served: 15,
        };
        let s = of(&totals(30, 75, 1, 0), &paced(&p, pc), &Keys).unwrap();
        assert_eq!(s.cause, Cause::UsersNeverServed);
        assert!(s.iterations);
        assert_eq!((s.due, s.sent, s.dropped), (120, 45, 75));
        assert!(s.message.contains("45 of 120 iterations"), "{}", s.message);
        assert!(
            s.message.contains("answered only 5 of the 20 users"),
            "{}",
            s.message
        );
        assert!(s.message.contains("15 of 20 users were never answered"));
        assert!(
            !s.message.contains("  "),
            "a line break in the source: {}",
            s.message
        );
    }

    #[test]
    fn paced_users_that_keep_up_have_no_shortfall_and_slow_ones_are_told() {
        let p = paced_plan();
        let on_time = crate::result::Paced {
            started: 120,
            missed: 0,
            not_yet_due: 0,
            users: 20,
            users_never_served: 0,
        };
        // Lateness alone is not a users' shortfall.
        assert_eq!(of(&totals(120, 0, 1, 50), &paced(&p, on_time), &Keys), None);
        let slow = crate::result::Paced {
            started: 100,
            missed: 20,
            ..on_time
        };
        let s = of(&totals(100, 20, 700, 0), &paced(&p, slow), &Keys).unwrap();
        assert_eq!(s.cause, Cause::SlowIterations);
        assert!(
            s.message.contains("ran past their pacing (500.0 ms)"),
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
