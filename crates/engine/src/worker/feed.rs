//! How slots get their requests: the one place the load models differ, as
//! [`Transport`](super::Transport) is the one place the protocols do. Each
//! feed owns its state; the loop asks it, once per turn, to hand out work
//! ([`Worker::feed`]), when it next needs waking ([`Worker::feed_wake`]) and
//! what to do with a slot whose request ended ([`Worker::slot_freed`]).
//!
//! - [`Pool`], the open model: the timetable says when each request is due;
//!   a request starts on any free slot, and one that finds none waits (or is
//!   dropped, by the plan's policy), its latency still measured from when it
//!   was due.
//! - [`Users`], the closed model and virtual users: each slot is a user with
//!   its own connection and a timeline. It starts at its window's start,
//!   asks its [`Flow`] what to do next (send, think, end the iteration) and
//!   stops at its window's end. A closed-model connection is a user with no
//!   think time that starts at once.
//! - [`Visits`], the open model with journeys: the timetable says when each
//!   *visitor* arrives; a visitor takes any free slot (its connection kept
//!   from the last visit), is a new user of the flow (fresh cookies and
//!   variables), walks its journey with its think times and leaves, freeing
//!   the slot. An arrival that finds no free slot waits, or is dropped by
//!   the plan's policy (counted once, as one dropped request); the first
//!   request's latency counts from the arrival's due time.

use super::{Mode, Transport, Worker, NEVER};
use crate::flow::{Flow, Next};
use plan::{Due, UserSegment};
use sample::{Outcome, Sample, Sink};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub(super) enum Feed {
    Pool(Pool),
    Users(Users),
    Visits(Visits),
}

/// Per-slot timers (think times, pacing, window starts): a min-heap of
/// (when, slot) and each slot's one pending time, so a re-armed slot's
/// older entry is recognised and skipped.
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    at: Vec<u64>,
}

impl Timers {
    fn new(slots: usize) -> Timers {
        Timers {
            heap: BinaryHeap::new(),
            at: vec![NEVER; slots],
        }
    }

    /// Slot `idx` wakes at `at` (replacing its pending time, if any).
    fn arm(&mut self, idx: usize, at: u64) {
        self.at[idx] = at;
        self.heap.push(Reverse((at, idx as u32)));
    }

    /// Slot `idx` has no pending time.
    fn disarm(&mut self, idx: usize) {
        self.at[idx] = NEVER;
    }

    /// The earliest pending time, if any (perhaps a superseded one: waking
    /// early is harmless).
    fn next(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// The next slot whose time has come by `now`, with that time; its
    /// timer is spent. Superseded entries are dropped on the way.
    fn due(&mut self, now: u64) -> Option<(u64, usize)> {
        while let Some(&Reverse((t, idx))) = self.heap.peek() {
            if t > now {
                return None;
            }
            self.heap.pop();
            let i = idx as usize;
            if self.at[i] == t {
                self.at[i] = NEVER;
                return Some((t, i));
            }
        }
        None
    }
}

/// The open model's visitors, one at a time per slot.
pub(super) struct Visits {
    drop_after: Option<u64>,
    /// Slots with no visit under way (connected or not).
    free: Vec<u32>,
    /// A visit is under way on the slot.
    on: Vec<bool>,
    /// Slots whose visitor should act now.
    ready: Vec<u32>,
    timers: Timers,
    /// Visits under way.
    live: usize,
}

/// The open model's slots.
pub(super) struct Pool {
    /// Late requests older than this are dropped (None: always sent,
    /// however late).
    drop_after: Option<u64>,
    /// Connected slots with nothing in flight, and socketless ones.
    idle: Vec<u32>,
    closed: Vec<u32>,
}

/// The users, one per slot.
pub(super) struct Users {
    pacing: Option<u64>,
    clocks: Vec<UserClock>,
    /// Slots whose user should act now.
    ready: Vec<u32>,
    timers: Timers,
    /// Users whose timeline has not ended.
    live: usize,
    /// Steering: changes to the number of users not yet in force (the
    /// first is next), and the moment of the last one applied.
    steps: Vec<UserSegment>,
    applied_at: u64,
    /// Paced users: iterations started and missed so far.
    started: u64,
    missed: u64,
}

/// A window that never opens: a slot kept for a user steering may add.
pub(crate) const DORMANT: (u64, u64) = (u64::MAX, u64::MAX);

/// One user's timeline.
#[derive(Debug)]
struct UserClock {
    /// The user is between its window's start and stop.
    active: bool,
    /// The user's window.
    start_at: u64,
    stop_at: u64,
    /// Paced users: when the next iteration not yet started is due, on the
    /// grid start_at + k·pacing (`plan::paced`).
    slot_at: u64,
    /// An iteration is under way (started, not yet ended).
    in_iter: bool,
    /// A response came back to this user at least once.
    served: bool,
    /// Steering took the user away until this later window (start, stop).
    then: Option<(u64, u64)>,
}

impl Feed {
    /// The pool has a slot a due request could go on at once.
    pub(super) fn has_free_slot(&self) -> bool {
        matches!(self, Feed::Pool(p) if !p.idle.is_empty() || !p.closed.is_empty())
    }

    /// The feed for `mode`; `order` gives the pool's slots in the order they
    /// are handed out (last first), as the transport wants them.
    pub(super) fn new(mode: Mode, order: impl FnOnce() -> Vec<u32>) -> Feed {
        match mode {
            Mode::Pooled { drop_after } => Feed::Pool(Pool {
                drop_after,
                idle: Vec::new(),
                closed: order(),
            }),
            Mode::Visits { drop_after } => {
                let free = order();
                let n = free.len();
                Feed::Visits(Visits {
                    drop_after,
                    free,
                    on: vec![false; n],
                    ready: Vec::new(),
                    timers: Timers::new(n),
                    live: 0,
                })
            }
            Mode::PerUser { windows, pacing } => {
                let mut timers = Timers::new(windows.len());
                let clocks: Vec<UserClock> = windows
                    .iter()
                    .enumerate()
                    .map(|(idx, &(start, stop))| {
                        let active = (start, stop) != DORMANT;
                        if active {
                            timers.arm(idx, start);
                        }
                        UserClock {
                            active,
                            start_at: start,
                            stop_at: stop,
                            slot_at: start,
                            in_iter: false,
                            served: false,
                            then: None,
                        }
                    })
                    .collect();
                let live = clocks.iter().filter(|c| c.active).count();
                Feed::Users(Users {
                    pacing,
                    clocks,
                    ready: Vec::new(),
                    timers,
                    live,
                    steps: Vec::new(),
                    applied_at: 0,
                    started: 0,
                    missed: 0,
                })
            }
        }
    }
}

impl<S: Sink, F: Flow> Worker<'_, S, F> {
    /// Hands out the work that is due; true when the worker has none left.
    pub(super) fn feed(&mut self, now: u64) -> bool {
        match self.feed {
            Feed::Pool(_) => {
                self.issue(now);
                self.next_due == Due::End && self.inflight == 0
            }
            Feed::Users(_) => {
                self.steer_users(now);
                self.fire_timers(now);
                self.drain_ready(now);
                // Steered users may come back while the run lasts.
                let over = self.cfg.steer.is_none() || self.next_due == Due::End;
                over && matches!(&self.feed, Feed::Users(u) if u.live == 0) && self.inflight == 0
            }
            Feed::Visits(_) => {
                self.visits_fire(now);
                self.visits_drain(now);
                self.arrive(now);
                self.next_due == Due::End
                    && matches!(&self.feed, Feed::Visits(v) if v.live == 0)
                    && self.inflight == 0
            }
        }
    }

    /// The feed's next moment, if before `wake`.
    pub(super) fn feed_wake(&self, wake: u64) -> u64 {
        match &self.feed {
            Feed::Pool(p) => match self.next_due {
                Due::At(t) if !p.closed.is_empty() || !p.idle.is_empty() => {
                    wake.min(self.sendable_at(t))
                }
                _ => wake,
            },
            Feed::Users(u) => {
                let wake = u.steps.first().map_or(wake, |s| wake.min(s.at_ns));
                u.timers.next().map_or(wake, |t| wake.min(t))
            }
            Feed::Visits(v) => {
                let timer = v.timers.next().map_or(wake, |t| wake.min(t));
                match self.next_due {
                    Due::At(t) if !v.free.is_empty() => timer.min(self.sendable_at(t)),
                    _ => timer,
                }
            }
        }
    }

    /// Users inside their window at `now` (started, not yet stopped); None
    /// for the open model's pool. Counted at the 100 ms tick only.
    pub(super) fn active_users(&self, now: u64) -> Option<usize> {
        match &self.feed {
            Feed::Pool(_) => None,
            Feed::Visits(v) => Some(v.live),
            Feed::Users(u) => Some(
                u.clocks
                    .iter()
                    .filter(|c| c.active && c.start_at <= now && now < c.stop_at)
                    .count(),
            ),
        }
    }

    /// Users are waiting to act: the loop must not sleep.
    pub(super) fn feed_pending(&self) -> bool {
        match &self.feed {
            Feed::Users(u) => !u.ready.is_empty(),
            Feed::Visits(v) => !v.ready.is_empty(),
            Feed::Pool(_) => false,
        }
    }

    /// Slot `idx`'s request was recorded: the pool takes the slot back, a
    /// live user is queued to act, a retired user's connection closes.
    pub(super) fn slot_freed(&mut self, idx: usize) {
        let open = self.conns[idx].fd >= 0;
        match &mut self.feed {
            Feed::Pool(p) if open => p.idle.push(idx as u32),
            Feed::Pool(p) => p.closed.push(idx as u32),
            Feed::Users(u) if u.clocks[idx].active => u.ready.push(idx as u32),
            Feed::Users(_) => self.close(idx),
            Feed::Visits(v) if v.on[idx] => v.ready.push(idx as u32),
            Feed::Visits(v) => v.free.push(idx as u32),
        }
    }

    /// Slot `idx` just completed a response (and was freed): let it go on at
    /// once, with no trip through epoll, when its next request is due now.
    /// `reuse`: its connection stays open.
    pub(super) fn go_on(&mut self, idx: usize, now: u64, reuse: bool) {
        let horizon = self.horizon(now);
        match &mut self.feed {
            Feed::Pool(p) => {
                let intended = match self.next_due {
                    Due::Now => now,
                    Due::At(t) if t <= horizon => t,
                    _ => return,
                };
                // The slot was just pushed onto the idle stack by `slot_freed`.
                if reuse && p.idle.last() == Some(&(idx as u32)) {
                    p.idle.pop();
                    self.advance();
                    self.plan_request(idx);
                    self.begin(idx, intended, now);
                }
            }
            Feed::Users(u) => {
                if u.ready.last() == Some(&(idx as u32)) {
                    u.ready.pop();
                    self.act(idx, now, now);
                }
            }
            Feed::Visits(v) => {
                if v.ready.last() == Some(&(idx as u32)) {
                    v.ready.pop();
                    self.visit_act(idx, now, now);
                }
            }
        }
    }

    /// Idle slot `idx`'s connection closed under it: the pool files it with
    /// the socketless slots.
    pub(super) fn idle_closed(&mut self, idx: usize) {
        if let Feed::Pool(p) = &mut self.feed {
            if let Some(at) = p.idle.iter().position(|&i| i as usize == idx) {
                p.idle.swap_remove(at);
                p.closed.push(idx as u32);
            }
        }
    }

    /// Slot `idx`'s request got a response: its user was served.
    #[inline]
    pub(super) fn user_served(&mut self, idx: usize) {
        if let Feed::Users(u) = &mut self.feed {
            u.clocks[idx].served = true;
        }
    }

    /// Slot `idx` belongs to a user whose timeline has ended.
    pub(super) fn user_retired(&self, idx: usize) -> bool {
        matches!(&self.feed, Feed::Users(u) if !u.clocks[idx].active)
    }

    /// The run stopped at `stop_at`: every request due before then that was
    /// not sent is accounted for — cancelled when a slot was free for it (it
    /// missed only the loop's last turn), dropped when none was — and the
    /// requests not yet due are counted (None when the plan has no end).
    pub(super) fn settle(&mut self, stop_at: u64, now: u64) -> Option<u64> {
        self.report.paced = self.settle_users(stop_at, now);
        let free = match &self.feed {
            Feed::Pool(p) => Some(p.idle.len() + p.closed.len()),
            Feed::Visits(v) => Some(v.free.len()),
            Feed::Users(_) => None,
        };
        if let Some(mut free) = free {
            while let Due::At(t) = self.next_due {
                if t >= stop_at {
                    break;
                }
                let outcome = if free > 0 {
                    free -= 1;
                    Outcome::Cancelled
                } else {
                    Outcome::Dropped
                };
                if outcome == Outcome::Cancelled {
                    if let Some(v) = self.report.visits.as_mut() {
                        *v += 1; // an arrival, accounted as cancelled
                    }
                }
                self.unsent(outcome, t, now);
            }
        }
        self.cfg.schedule.remaining(self.next_j)
    }

    fn advance(&mut self) {
        self.next_j += 1;
        self.next_due = self.cfg.schedule.due(self.next_j);
    }

    // ---- the pool (open model) ---------------------------------------------

    /// Starts every request that is due and has a slot, at most one round
    /// over the slots per call so a refusing server cannot spin us here.
    fn issue(&mut self, now: u64) {
        let Feed::Pool(p) = &self.feed else { return };
        self.drop_late(p.drop_after, now);
        let mut budget = self.conns.len();
        while budget > 0 {
            let Some(intended) = self.due_by(now) else {
                return;
            };
            let Feed::Pool(p) = &mut self.feed else {
                return;
            };
            let Some(idx) = p.idle.pop().or_else(|| p.closed.pop()) else {
                return;
            };
            budget -= 1;
            self.advance();
            self.plan_request(idx as usize);
            self.begin(idx as usize, intended, now);
        }
    }

    /// Requests (or arrivals) that waited longer than `after` for a slot
    /// are dropped, not sent in a catch-up burst; each is recorded with its
    /// due time. `None`: none is dropped, however late.
    fn drop_late(&mut self, after: Option<u64>, now: u64) {
        let Some(after) = after else { return };
        while let Due::At(t) = self.next_due {
            if t.saturating_add(after) >= now {
                break;
            }
            self.unsent(Outcome::Dropped, t, now);
        }
    }

    /// When the next request was due, if it goes out at `now`: if it was
    /// due by the last tick of the timer slack (by `now` without one).
    fn due_by(&self, now: u64) -> Option<u64> {
        match self.next_due {
            Due::End => None,
            Due::At(t) if t > self.horizon(now) => None,
            Due::At(t) => Some(t),
            Due::Now => Some(now),
        }
    }

    /// The open model's send tick: requests due by its last tick before
    /// `now` go out at `now`. With this timer slack, requests due close
    /// together share one wake-up, each at most a tick late
    /// (docs/design/013-timer-slack.md).
    /// The run's last tick has no tick after it: there each request goes
    /// at its own due time, so every request due before the end is sent.
    #[inline]
    fn horizon(&self, now: u64) -> u64 {
        match self.cfg.slack {
            0 => now,
            s => {
                let tick = now - now % s;
                if self.cfg.end_at.is_some_and(|e| tick.saturating_add(s) >= e) {
                    now
                } else {
                    tick
                }
            }
        }
    }

    /// When a request due at `t` goes out: the first tick at or after it
    /// (its own due time when that tick is the run's end or later).
    #[inline]
    fn sendable_at(&self, t: u64) -> u64 {
        match self.cfg.slack {
            0 => t,
            s => {
                let tick = t.div_ceil(s).saturating_mul(s);
                if self.cfg.end_at.is_some_and(|e| tick >= e) {
                    t
                } else {
                    tick
                }
            }
        }
    }

    /// The request due at `t` is not sent: it is recorded with `outcome`
    /// (dropped, or cancelled at the end) and the schedule moves on.
    fn unsent(&mut self, outcome: Outcome, t: u64, now: u64) {
        let s = Sample {
            outcome,
            intended: t,
            start: now,
            end: now,
            ..Default::default()
        };
        self.sink.record(&s);
        self.advance();
    }

    /// Slot `idx` carries the plan's own request (not a flow's).
    fn plan_request(&mut self, idx: usize) {
        let job = &mut self.conns[idx].job;
        job.own_request = false;
        job.step = 0;
        job.head = self.cfg.head_request;
        job.idempotent = self.cfg.idempotent;
        job.capture = false;
    }

    // ---- the users (closed model, virtual users) ---------------------------

    fn arm(&mut self, idx: usize, at: u64) {
        if let Feed::Users(u) = &mut self.feed {
            u.timers.arm(idx, at);
        }
    }

    fn fire_timers(&mut self, now: u64) {
        loop {
            let Feed::Users(u) = &mut self.feed else {
                return;
            };
            let Some((t, idx)) = u.timers.due(now) else {
                return;
            };
            if u.clocks[idx].active {
                self.act(idx, t, now);
            }
        }
    }

    /// Lets the users whose requests ended since the last call act; only
    /// those queued before the call, so failures that end at once can't spin.
    fn drain_ready(&mut self, now: u64) {
        let Feed::Users(u) = &mut self.feed else {
            return;
        };
        let ready = std::mem::take(&mut u.ready);
        for &idx in &ready {
            self.act(idx as usize, now, now);
        }
        if let Feed::Users(u) = &mut self.feed {
            if u.ready.is_empty() {
                u.ready = ready;
                u.ready.clear();
            }
        }
    }

    /// Asks user `idx`'s flow what to do next and does it; `due` is when
    /// this moment was scheduled (latency of a request counts from it).
    fn act(&mut self, idx: usize, mut due: u64, now: u64) {
        // Bounded: a flow whose iterations send nothing yields after a few rounds.
        for _ in 0..4 {
            let Feed::Users(u) = &self.feed else { return };
            let clock = &u.clocks[idx];
            if !clock.active || self.ending {
                return;
            }
            if now < clock.start_at {
                // Brought back by steering while its last request ran.
                let at = clock.start_at;
                self.arm(idx, at);
                return;
            }
            if now >= clock.stop_at || self.cfg.end_at.is_some_and(|e| now >= e) {
                self.retire(idx);
                return;
            }
            if !clock.in_iter {
                match self.start_iteration(idx, due, now) {
                    Some(slot) => due = slot,
                    None => return,
                }
            }
            let next = self
                .flow
                .next(&mut self.users[idx], &mut self.conns[idx].job.req);
            match next {
                Next::Same | Next::Request { .. } => {
                    if self.next_due == Due::End {
                        self.retire(idx);
                        return;
                    }
                    self.advance();
                    match next {
                        Next::Request {
                            step,
                            capture,
                            head,
                            idempotent,
                        } => {
                            let job = &mut self.conns[idx].job;
                            job.own_request = true;
                            job.step = step;
                            job.capture = capture;
                            job.head = head;
                            job.idempotent = idempotent;
                        }
                        _ => self.plan_request(idx),
                    }
                    self.begin(idx, due, now);
                    return;
                }
                Next::Think(ns) => {
                    self.arm(idx, now.saturating_add(ns));
                    return;
                }
                Next::EndIteration => {
                    let Feed::Users(u) = &mut self.feed else {
                        return;
                    };
                    let clock = &mut u.clocks[idx];
                    clock.in_iter = false;
                    // Paced: the next iteration waits for its slot; one
                    // already due starts at once (late, see start_iteration).
                    if u.pacing.is_some() && clock.slot_at > now {
                        let at = clock.slot_at;
                        self.arm(idx, at);
                        return;
                    }
                    due = now;
                }
            }
        }
        self.arm(idx, now);
    }

    /// User `idx` starts an iteration at `now`; returns when it was due
    /// (None: not yet, its timer is armed). Paced, it is due at its slot
    /// on the user's grid, and a late one (the previous iteration ran past
    /// it, or the connection took that long) still counts from there, as
    /// the open model's late requests do; the slots that came and went
    /// meanwhile are missed (docs/design/016-paced-users-accounting.md).
    fn start_iteration(&mut self, idx: usize, due: u64, now: u64) -> Option<u64> {
        let end = self.cfg.end_at.unwrap_or(NEVER);
        let Feed::Users(u) = &mut self.feed else {
            return Some(due);
        };
        u.started += 1;
        let clock = &mut u.clocks[idx];
        clock.in_iter = true;
        let Some(p) = u.pacing else {
            return Some(due);
        };
        if clock.slot_at > now {
            // Brought back early (steering): wait for the slot.
            u.started -= 1;
            clock.in_iter = false;
            let at = clock.slot_at;
            self.arm(idx, at);
            return None;
        }
        let due = clock.slot_at;
        let until = clock.stop_at.min(end);
        clock.slot_at = due.saturating_add(p);
        let first_missed = clock.slot_at;
        let mut missed = 0;
        while clock.slot_at <= now && clock.slot_at < until {
            missed += 1;
            clock.slot_at = clock.slot_at.saturating_add(p);
        }
        if missed > 0 {
            self.missed(first_missed, p, missed, now);
        }
        Some(due)
    }

    /// `n` iterations due from `first` on, every `pacing` ns, did not start:
    /// each is recorded as dropped at `now`, when the user could have
    /// started it at the earliest (its latency, a lower bound of what it
    /// would have waited, is recorded: see the recorder's `paced`).
    fn missed(&mut self, first: u64, pacing: u64, n: u64, now: u64) {
        if let Feed::Users(u) = &mut self.feed {
            u.missed += n;
        }
        for k in 0..n {
            let s = Sample {
                outcome: Outcome::Dropped,
                intended: first.saturating_add(k.saturating_mul(pacing)),
                start: now,
                end: now,
                ..Default::default()
            };
            self.sink.record(&s);
        }
    }

    /// Paced user `idx`'s slots due before `until` that did not start are
    /// settled at `now`: missed when an iteration was under way (or the
    /// user waited on its connection); when it was free, the first missed
    /// only the loop's last turn and counts as started and cancelled, as
    /// the open model does.
    fn close_slots(&mut self, idx: usize, until: u64, now: u64) {
        let Feed::Users(u) = &mut self.feed else {
            return;
        };
        let Some(p) = u.pacing else { return };
        let clock = &mut u.clocks[idx];
        if clock.slot_at >= until {
            return;
        }
        let mut first = clock.slot_at;
        let mut n = plan::paced::slots(first, until, p);
        clock.slot_at = first.saturating_add(n.saturating_mul(p));
        if !clock.in_iter {
            u.started += 1;
            let s = Sample {
                outcome: Outcome::Cancelled,
                intended: first,
                start: now,
                end: now,
                ..Default::default()
            };
            self.sink.record(&s);
            first = first.saturating_add(p);
            n -= 1;
        }
        if n > 0 {
            self.missed(first, p, n, now);
        }
    }

    /// The end of the run for paced users: every slot accounted for
    /// (`stop_at`: when the run stopped), and who was never answered.
    fn settle_users(&mut self, stop_at: u64, now: u64) -> Option<super::PacedReport> {
        let end = self.cfg.end_at.unwrap_or(NEVER);
        let Feed::Users(u) = &self.feed else {
            return None;
        };
        let p = u.pacing?;
        let mut report = super::PacedReport::default();
        for idx in 0..u.clocks.len() {
            let Feed::Users(u) = &self.feed else {
                return None;
            };
            let c = &u.clocks[idx];
            if c.start_at == DORMANT.0 {
                continue;
            }
            let stop = c.stop_at.min(end);
            if c.start_at < stop_at {
                report.users += 1;
                // Never answered, though it had a pacing period at least
                // to be: it waited from its first request to the end.
                let waited = c.start_at.saturating_add(p) <= stop_at;
                report.users_never_served += u64::from(!c.served && waited);
                if c.active {
                    self.close_slots(idx, stop.min(stop_at), stop_at.min(now));
                }
            }
            let Feed::Users(u) = &self.feed else {
                return None;
            };
            let c = &u.clocks[idx];
            if c.active {
                report.not_yet_due += plan::paced::slots(c.slot_at.max(stop_at), stop, p);
            }
        }
        let Feed::Users(u) = &self.feed else {
            return None;
        };
        report.started = u.started;
        report.missed = u.missed;
        Some(report)
    }

    // ---- the visitors (open model with journeys) ---------------------------

    /// Starts a visit for every arrival that is due and finds a free slot,
    /// at most one round over the slots per call.
    fn arrive(&mut self, now: u64) {
        let Feed::Visits(v) = &self.feed else { return };
        self.drop_late(v.drop_after, now);
        let mut budget = self.conns.len();
        while budget > 0 {
            let Some(intended) = self.due_by(now) else {
                return;
            };
            let Feed::Visits(v) = &mut self.feed else {
                return;
            };
            let Some(idx) = v.free.pop() else {
                return;
            };
            let idx = idx as usize;
            v.on[idx] = true;
            v.live += 1;
            budget -= 1;
            // The visitor's global index, as users are numbered.
            let visitor = self.cfg.user_base + self.next_j * self.cfg.user_stride;
            self.advance();
            if let Some(v) = self.report.visits.as_mut() {
                *v += 1;
            }
            self.users[idx] = self.flow.user(visitor);
            self.visit_act(idx, intended, now);
        }
    }

    fn visits_fire(&mut self, now: u64) {
        loop {
            let Feed::Visits(v) = &mut self.feed else {
                return;
            };
            let Some((t, idx)) = v.timers.due(now) else {
                return;
            };
            if v.on[idx] {
                self.visit_act(idx, t, now);
            }
        }
    }

    fn visits_drain(&mut self, now: u64) {
        let Feed::Visits(v) = &mut self.feed else {
            return;
        };
        let ready = std::mem::take(&mut v.ready);
        for &idx in &ready {
            self.visit_act(idx as usize, now, now);
        }
        if let Feed::Visits(v) = &mut self.feed {
            if v.ready.is_empty() {
                v.ready = ready;
                v.ready.clear();
            }
        }
    }

    /// Visitor `idx`'s next move: a request (latency from `due`), a think
    /// time, or the end of its journey (the slot is free again).
    fn visit_act(&mut self, idx: usize, due: u64, now: u64) {
        if self.ending {
            return;
        }
        if self.cfg.end_at.is_some_and(|e| now >= e) {
            self.visit_over(idx);
            return;
        }
        let next = self
            .flow
            .next(&mut self.users[idx], &mut self.conns[idx].job.req);
        match next {
            Next::Same => {
                self.plan_request(idx);
                self.begin(idx, due, now);
            }
            Next::Request {
                step,
                capture,
                head,
                idempotent,
            } => {
                let job = &mut self.conns[idx].job;
                job.own_request = true;
                job.step = step;
                job.capture = capture;
                job.head = head;
                job.idempotent = idempotent;
                self.begin(idx, due, now);
            }
            Next::Think(ns) => {
                if let Feed::Visits(v) = &mut self.feed {
                    v.timers.arm(idx, now.saturating_add(ns));
                }
            }
            Next::EndIteration => self.visit_over(idx),
        }
    }

    fn visit_over(&mut self, idx: usize) {
        if let Feed::Visits(v) = &mut self.feed {
            if v.on[idx] {
                v.on[idx] = false;
                v.live -= 1;
                v.timers.disarm(idx);
                v.free.push(idx as u32);
            }
        }
    }

    /// The user's timeline is over: close its connection. A user steering
    /// took away only for a while starts again, as a new user, at its next
    /// window.
    pub(super) fn retire(&mut self, idx: usize) {
        let mut then = None;
        if let Feed::Users(u) = &self.feed {
            let c = &u.clocks[idx];
            if c.active && !self.ending {
                // Its slots before its window's end that did not start.
                let until = c.stop_at.min(self.cfg.end_at.unwrap_or(NEVER));
                let now = self.now();
                self.close_slots(idx, until.min(now), now);
            }
        }
        if let Feed::Users(u) = &mut self.feed {
            let clock = &mut u.clocks[idx];
            if clock.active {
                clock.active = false;
                u.live -= 1;
            }
            then = clock.then.take();
        }
        if !self.conns[idx].busy() {
            self.close(idx);
            if let Transport::Http2(_) = self.transport {
                self.h2_retire(idx);
            }
        }
        if let Some((start, stop)) = then {
            self.bring_back(idx, start, stop);
        }
    }

    // ---- steering the number of users ---------------------------------------

    /// Picks up the steering timeline's changes not yet in force (called
    /// when its version moved).
    pub(super) fn users_steered(&mut self, timeline: &plan::UserSteering) {
        if let Feed::Users(u) = &mut self.feed {
            u.steps = timeline
                .segments()
                .iter()
                .filter(|s| s.at_ns > u.applied_at)
                .copied()
                .collect();
        }
    }

    /// Puts in force every change whose moment has come: each of this
    /// worker's users gets its window under the new number of added users
    /// (`plan::Crowd::window`), from the change's moment on.
    fn steer_users(&mut self, now: u64) {
        loop {
            let Feed::Users(u) = &mut self.feed else {
                return;
            };
            let Some(&step) = u.steps.first() else { return };
            if step.at_ns > now {
                return;
            }
            u.steps.remove(0);
            u.applied_at = step.at_ns;
            let Some((crowd, _)) = self.cfg.steer.and_then(|s| s.crowd()) else {
                return;
            };
            for idx in 0..self.conns.len() {
                let g = self.cfg.user_base + idx as u64 * self.cfg.user_stride;
                let t = step.at_ns;
                let window = crowd
                    .window(g, step.delta)
                    .map(|(s, e)| (s.max(t), e))
                    .filter(|(s, e)| s < e);
                self.rewindow(idx, t, now, window);
            }
        }
    }

    /// User `idx`'s window from moment `t` on is `window` (None: gone).
    fn rewindow(&mut self, idx: usize, t: u64, now: u64, window: Option<(u64, u64)>) {
        let Feed::Users(u) = &mut self.feed else {
            return;
        };
        let clock = &mut u.clocks[idx];
        if clock.active && clock.start_at <= now {
            // Running: it goes on, or stops at its next step (and perhaps
            // comes back later).
            match window {
                Some((s, e)) if s <= t => {
                    clock.stop_at = e;
                    clock.then = None;
                }
                later => {
                    clock.stop_at = t;
                    clock.then = later;
                }
            }
        } else if clock.active {
            // Not started yet.
            match window {
                Some((s, e)) => {
                    clock.start_at = s;
                    clock.slot_at = s;
                    clock.in_iter = false;
                    clock.stop_at = e;
                    u.timers.arm(idx, s);
                }
                None => {
                    clock.active = false;
                    u.live -= 1;
                    u.timers.disarm(idx);
                }
            }
        } else if let Some((s, e)) = window {
            self.bring_back(idx, s, e);
        }
    }

    /// Slot `idx` holds a user again, a new one (fresh cookies and
    /// variables), active from `start` to `stop`.
    fn bring_back(&mut self, idx: usize, start: u64, stop: u64) {
        let busy = self.conns[idx].busy();
        if !busy {
            let g = self.cfg.user_base + idx as u64 * self.cfg.user_stride;
            self.users[idx] = self.flow.user(g);
        }
        let Feed::Users(u) = &mut self.feed else {
            return;
        };
        let clock = &mut u.clocks[idx];
        if !clock.active {
            clock.active = true;
            u.live += 1;
        }
        clock.start_at = start;
        clock.slot_at = start;
        clock.in_iter = false;
        clock.stop_at = stop;
        clock.then = None;
        // A slot whose last request still runs acts when it ends.
        if !busy {
            u.timers.arm(idx, start);
        }
    }
}
