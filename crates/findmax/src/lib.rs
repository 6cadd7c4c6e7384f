//! The search behind `yace find-max`: the highest arrival rate at which
//! every SLO holds. Pure: it says which rate to try next and for how long,
//! and is told each trial's verdict; the caller runs the trials (open
//! model, so latency is honest) through the one run pipeline.
//!
//! 1. **Bracket.** From the start rate, double after a pass and halve after
//!    a fail, until one rate passed and a higher one failed, or the search
//!    reaches `max_rate` (which passing ends the search: the server holds
//!    at least that) or `min_rate` (which failing ends it too).
//! 2. **Bisect** on a log scale (the geometric mean of the bracket) until
//!    the bracket is within `precision` (2%: hi/lo ≤ 1.02). Trials are short
//!    while the bracket is wide and long once it is within 10%, as the IETF
//!    MLRsearch does: short trials find the neighbourhood, long ones decide.
//! 3. **Noise.** A trial whose figures were within 10% of an SLO's bound is
//!    marginal; it is repeated once, and the rate passes only if both
//!    trials passed (the answer stays below every load that failed).
//! 4. **Confirm** with a longer hold at the answer. If that fails, the
//!    answer becomes the upper bound and the search goes on below it.
//!
//! A trial is *invalid* when the client, not the server, was the limit
//! (saturated, or out of ports or files): the search stops and says so
//! rather than report the client's capacity as the server's.

use serde::Serialize;

/// How a search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The first rate tried, requests/s.
    pub start_rate: f64,
    /// Never tried above this.
    pub max_rate: f64,
    /// Never tried below this.
    pub min_rate: f64,
    /// The bracket is narrow enough when hi/lo ≤ 1 + precision.
    pub precision: f64,
    /// Trial length while the bracket is wide, and once it is within 10%.
    pub short_s: f64,
    pub long_s: f64,
    /// The final hold at the answer.
    pub confirm_s: f64,
    /// Most trials (a bound on the search whatever happens).
    pub max_trials: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            start_rate: 100.0,
            max_rate: 1_000_000.0,
            min_rate: 1.0,
            precision: 0.02,
            short_s: 5.0,
            long_s: 10.0,
            confirm_s: 30.0,
            max_trials: 40,
        }
    }
}

/// What a trial found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every SLO held; `marginal`: some figure was within 10% of its bound.
    Pass { marginal: bool },
    /// Some SLO was breached, or the offered rate was not achieved.
    Fail { why: String },
    /// The client was the limit: the trial says nothing about the server.
    Invalid { why: String },
}

/// Why a trial is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Bracket,
    Bisect,
    /// The same rate again: the last trial was marginal.
    Repeat,
    /// The upper bound again, as a long trial: a short one set it.
    Recheck,
    Confirm,
}

/// One trial, asked for and then done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial {
    pub rate: f64,
    pub seconds: f64,
    pub stage: Stage,
    pub verdict: Option<Verdict>,
}

/// Why the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The bracket is within the precision and the answer held a long hold.
    Converged,
    /// The SLOs held at `max_rate`: the server takes at least that.
    MaxRate,
    /// The SLOs failed even at `min_rate`.
    BelowMinRate,
    /// A trial was limited by the client, not the server.
    ClientBound,
    /// The trial budget (or the caller's time budget) ran out first.
    OutOfTrials,
    /// The caller stopped the search (Ctrl-C).
    Interrupted,
}

/// The search's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    pub end: End,
    /// The highest rate that passed (and held the confirming hold when
    /// `end` is Converged).
    pub max_rate: Option<f64>,
    /// The lowest rate that failed above it, if any.
    pub failed_at: Option<f64>,
    pub trials: Vec<Trial>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Run(Trial),
    Done(Answer),
}

#[derive(Debug, Clone)]
pub struct Search {
    cfg: Config,
    trials: Vec<Trial>,
    /// Highest rate that passed, lowest that failed.
    lo: Option<f64>,
    hi: Option<f64>,
    /// The confirming hold passed at `lo`.
    confirmed: bool,
    end: Option<End>,
}

impl Search {
    pub fn new(cfg: Config) -> Search {
        let start = cfg.start_rate.clamp(cfg.min_rate, cfg.max_rate);
        Search {
            cfg: Config {
                start_rate: start,
                ..cfg
            },
            trials: Vec::new(),
            lo: None,
            hi: None,
            confirmed: false,
            end: None,
        }
    }

    /// Trials done so far, with their verdicts.
    pub fn trials(&self) -> &[Trial] {
        &self.trials
    }

    fn narrow(&self, lo: f64, hi: f64) -> bool {
        hi / lo <= 1.0 + self.cfg.precision + 1e-9
    }

    fn answer(&self, end: End) -> Answer {
        Answer {
            end,
            max_rate: self.lo,
            failed_at: self.hi,
            trials: self.trials.clone(),
        }
    }

    /// Ends the search early (the caller's time budget ran out).
    pub fn give_up(&mut self) -> Answer {
        self.end = Some(End::OutOfTrials);
        self.answer(End::OutOfTrials)
    }

    /// Ends the search because the caller was asked to stop.
    pub fn interrupt(&mut self) -> Answer {
        self.end = Some(End::Interrupted);
        self.answer(End::Interrupted)
    }

    /// The next trial, or the answer.
    pub fn next(&self) -> Next {
        if let Some(end) = self.end {
            return Next::Done(self.answer(end));
        }
        if self.trials.len() >= self.cfg.max_trials {
            return Next::Done(self.answer(End::OutOfTrials));
        }
        let c = &self.cfg;
        let trial = |rate: f64, seconds: f64, stage| {
            Next::Run(Trial {
                rate: round_rate(rate),
                seconds,
                stage,
                verdict: None,
            })
        };
        // A marginal pass is tried once more before it counts.
        if let Some(last) = self.trials.last() {
            if matches!(last.verdict, Some(Verdict::Pass { marginal: true }))
                && last.stage != Stage::Repeat
            {
                return trial(last.rate, last.seconds, Stage::Repeat);
            }
        }
        match (self.lo, self.hi) {
            (None, None) => trial(c.start_rate, c.short_s, Stage::Bracket),
            (Some(lo), None) => {
                if lo >= c.max_rate {
                    Next::Done(self.answer(End::MaxRate))
                } else {
                    trial((lo * 2.0).min(c.max_rate), c.short_s, Stage::Bracket)
                }
            }
            (None, Some(hi)) => {
                if hi <= c.min_rate {
                    Next::Done(self.answer(End::BelowMinRate))
                } else {
                    trial((hi / 2.0).max(c.min_rate), c.short_s, Stage::Bracket)
                }
            }
            (Some(lo), Some(hi)) => {
                // Short trials find the neighbourhood, long ones decide: an
                // upper bound only a short trial set is tried again long.
                if self.narrow(lo, hi) && !self.failed_long(hi) {
                    return trial(hi, c.long_s, Stage::Recheck);
                }
                if self.narrow(lo, hi) {
                    if self.confirmed {
                        Next::Done(self.answer(End::Converged))
                    } else {
                        trial(lo, c.confirm_s, Stage::Confirm)
                    }
                } else {
                    let mid = round_rate((lo * hi).sqrt());
                    if (mid <= lo || mid >= hi) && !self.failed_long(hi) {
                        return trial(hi, c.long_s, Stage::Recheck);
                    }
                    if mid <= lo || mid >= hi {
                        // No round figure between them: as narrow as it gets.
                        return if self.confirmed {
                            Next::Done(self.answer(End::Converged))
                        } else {
                            trial(lo, c.confirm_s, Stage::Confirm)
                        };
                    }
                    let seconds = if hi / lo <= 1.1 { c.long_s } else { c.short_s };
                    trial(mid, seconds, Stage::Bisect)
                }
            }
        }
    }

    /// `rate` failed in a trial of full length (a recheck, a confirmation,
    /// or any trial as long as `long_s`).
    fn failed_long(&self, rate: f64) -> bool {
        self.trials.iter().any(|t| {
            t.rate == rate
                && t.seconds >= self.cfg.long_s
                && matches!(t.verdict, Some(Verdict::Fail { .. }))
        })
    }

    /// Records the verdict of the trial [`next`](Search::next) asked for.
    pub fn record(&mut self, mut trial: Trial, verdict: Verdict) {
        let rate = trial.rate;
        let stage = trial.stage;
        // A repeat stands for the trial it repeats: a repeated confirmation
        // that passes confirms, a repeated recheck rechecks.
        let role = match (stage, self.trials.last()) {
            (Stage::Repeat, Some(before)) => before.stage,
            _ => stage,
        };
        trial.verdict = Some(verdict.clone());
        // A repeat that passes confirms the marginal pass before it; one
        // that fails makes the rate a failure (the earlier pass is void).
        self.trials.push(trial);
        match verdict {
            Verdict::Invalid { .. } => self.end = Some(End::ClientBound),
            Verdict::Pass { marginal } => {
                if marginal && stage != Stage::Repeat {
                    return; // decided by the repeat
                }
                let stage = role;
                if stage == Stage::Confirm {
                    self.confirmed = true;
                    return;
                }
                if stage == Stage::Recheck {
                    // The short failure was noise or leftover work: the
                    // bound moves up to the next rate that failed, if any.
                    self.hi = self
                        .trials
                        .iter()
                        .filter(|t| {
                            t.rate > rate && matches!(t.verdict, Some(Verdict::Fail { .. }))
                        })
                        .map(|t| t.rate)
                        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.min(r))));
                }
                // A pass at or above a rate that failed is noise: the
                // answer stays below every failing load (a recheck, which
                // moved the bound above, is the way past one).
                if self.lo.is_none_or(|lo| rate > lo) && self.hi.is_none_or(|hi| rate < hi) {
                    self.lo = Some(rate);
                    self.confirmed = false;
                }
            }
            Verdict::Fail { .. } => {
                if self.hi.is_none_or(|hi| rate < hi) {
                    self.hi = Some(rate);
                }
                if self.lo.is_some_and(|lo| lo >= rate) {
                    // A confirm (or a repeat) failed at the answer: look
                    // below it, from the highest other rate that passed.
                    self.lo = self
                        .trials
                        .iter()
                        .filter(|t| {
                            t.rate < rate && matches!(t.verdict, Some(Verdict::Pass { .. }))
                        })
                        .map(|t| t.rate)
                        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
                    self.confirmed = false;
                }
            }
        }
    }
}

/// Rates are tried as round figures: 3 significant digits (1,840 not
/// 1,837.62; 3.33 not 3.3333).
pub fn round_rate(r: f64) -> f64 {
    if r <= 0.0 || !r.is_finite() {
        return r;
    }
    let mag = r.log10().floor() as i32;
    let step = 10f64.powi(mag - 2);
    // Through the step's inverse below 1: 1.41 stays 1.41, not 1.4100000001.
    if step < 1.0 {
        let inv = (1.0 / step).round();
        (r * inv).round() / inv
    } else {
        (r / step).round() * step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a server that holds up to `cap` req/s
    /// (`noise(rate)`: a marginal pass at that rate).
    fn search(cfg: Config, cap: f64, marginal: impl Fn(f64) -> bool) -> Answer {
        let mut s = Search::new(cfg);
        loop {
            match s.next() {
                Next::Done(a) => return a,
                Next::Run(t) => {
                    let v = if t.rate <= cap {
                        Verdict::Pass {
                            marginal: marginal(t.rate),
                        }
                    } else {
                        Verdict::Fail {
                            why: "p99 over".into(),
                        }
                    };
                    s.record(t, v);
                }
            }
        }
    }

    fn cfg() -> Config {
        Config {
            start_rate: 50.0,
            max_rate: 100_000.0,
            ..Config::default()
        }
    }

    #[test]
    fn it_brackets_bisects_and_confirms_to_two_percent() {
        let a = search(cfg(), 1840.0, |_| false);
        assert_eq!(a.end, End::Converged);
        let (lo, hi) = (a.max_rate.unwrap(), a.failed_at.unwrap());
        assert!(lo <= 1840.0 && hi > 1840.0, "{lo}..{hi}");
        assert!(hi / lo <= 1.0205, "{lo}..{hi}");
        // Doubling from 50: 50, 100, … 3,200 (fail); then bisection.
        let rates: Vec<f64> = a.trials.iter().map(|t| t.rate).collect();
        assert_eq!(
            &rates[..7],
            &[50.0, 100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0]
        );
        let last = a.trials.last().unwrap();
        assert_eq!(
            (last.stage, last.rate, last.seconds),
            (Stage::Confirm, lo, 30.0)
        );
        // Short trials while wide, long ones once within 10%.
        assert!(a
            .trials
            .iter()
            .any(|t| t.stage == Stage::Bisect && t.seconds == 10.0));
        assert!(a.trials.len() < 20, "{} trials", a.trials.len());
    }

    #[test]
    fn a_server_that_always_holds_stops_at_the_max_rate() {
        let a = search(
            Config {
                max_rate: 2000.0,
                ..cfg()
            },
            f64::INFINITY,
            |_| false,
        );
        assert_eq!(a.end, End::MaxRate);
        assert_eq!(a.max_rate, Some(2000.0));
        assert!(a.trials.iter().all(|t| t.rate <= 2000.0));
    }

    #[test]
    fn a_server_that_never_holds_stops_at_the_min_rate() {
        let a = search(cfg(), 0.0, |_| false);
        assert_eq!(a.end, End::BelowMinRate);
        assert_eq!(a.max_rate, None);
        assert!(a.trials.iter().all(|t| t.rate >= 1.0));
    }

    #[test]
    fn a_marginal_pass_is_repeated_and_a_failed_repeat_counts() {
        let mut s = Search::new(cfg());
        let Next::Run(t) = s.next() else { panic!() };
        s.record(t, Verdict::Pass { marginal: true });
        let Next::Run(t) = s.next() else { panic!() };
        assert_eq!((t.stage, t.rate), (Stage::Repeat, 50.0));
        s.record(
            t,
            Verdict::Fail {
                why: "noise".into(),
            },
        );
        // 50/s failed after all: the search looks below it.
        let Next::Run(t) = s.next() else { panic!() };
        assert_eq!((t.stage, t.rate), (Stage::Bracket, 25.0));
    }

    #[test]
    fn a_failed_confirmation_moves_the_answer_down() {
        // Short trials pass up to 1,000/s, but 1,000/s does not hold for long.
        let mut s = Search::new(cfg());
        let answer = loop {
            match s.next() {
                Next::Done(a) => break a,
                Next::Run(t) => {
                    let ok = t.rate <= if t.seconds >= 30.0 { 950.0 } else { 1000.0 };
                    let v = if ok {
                        Verdict::Pass { marginal: false }
                    } else {
                        Verdict::Fail { why: "x".into() }
                    };
                    s.record(t, v);
                }
            }
        };
        assert_eq!(answer.end, End::Converged);
        let lo = answer.max_rate.unwrap();
        assert!(lo <= 950.0 && lo > 900.0, "{lo}");
        assert!(
            answer
                .trials
                .iter()
                .filter(|t| t.stage == Stage::Confirm)
                .count()
                >= 2
        );
    }

    #[test]
    fn a_bound_set_by_one_short_failure_is_rechecked_long() {
        // The server holds 1,840/s, but the short trial at 1,600/s failed
        // once (leftover work from an overloaded trial, a hiccup).
        let mut s = Search::new(cfg());
        let mut hiccup = true;
        let answer = loop {
            match s.next() {
                Next::Done(a) => break a,
                Next::Run(t) => {
                    let v = if t.rate <= 1840.0
                        && !(hiccup && t.rate == 1600.0 && t.stage != Stage::Recheck)
                    {
                        Verdict::Pass { marginal: false }
                    } else {
                        hiccup &= t.rate != 1600.0;
                        Verdict::Fail { why: "x".into() }
                    };
                    s.record(t, v);
                }
            }
        };
        assert_eq!(answer.end, End::Converged);
        let lo = answer.max_rate.unwrap();
        assert!(lo > 1800.0 && lo <= 1840.0, "{lo}: {:?}", answer.trials);
        assert!(answer.trials.iter().any(|t| t.stage == Stage::Recheck));
        // And every bound it ends with failed a full-length trial.
        let hi = answer.failed_at.unwrap();
        assert!(answer
            .trials
            .iter()
            .any(|t| t.rate == hi && t.seconds >= 10.0));
    }

    #[test]
    fn a_client_bound_trial_ends_the_search() {
        let mut s = Search::new(cfg());
        let Next::Run(t) = s.next() else { panic!() };
        s.record(
            t,
            Verdict::Invalid {
                why: "client saturated".into(),
            },
        );
        let Next::Done(a) = s.next() else { panic!() };
        assert_eq!(a.end, End::ClientBound);
    }

    #[test]
    fn the_trial_budget_bounds_the_search() {
        let a = search(
            Config {
                max_trials: 5,
                ..cfg()
            },
            1840.0,
            |_| false,
        );
        assert_eq!(a.end, End::OutOfTrials);
        assert_eq!(a.trials.len(), 5);
    }

    #[test]
    fn a_noisy_server_never_leaves_the_answer_at_or_above_a_failure() {
        // Passes and fails at random around 1,000/s (a seeded sequence).
        let mut s = Search::new(cfg());
        let mut x: u64 = 12345;
        let a = loop {
            match s.next() {
                Next::Done(a) => break a,
                Next::Run(t) => {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    let coin = (x >> 33).is_multiple_of(3);
                    let pass = t.rate < 800.0 || (t.rate < 1200.0 && coin);
                    let v = if pass {
                        Verdict::Pass { marginal: false }
                    } else {
                        Verdict::Fail { why: "x".into() }
                    };
                    s.record(t, v);
                    if let (Some(lo), Some(hi)) = (s.lo, s.hi) {
                        assert!(lo < hi, "lo {lo} ≥ hi {hi}");
                    }
                }
            }
        };
        assert!(a.trials.len() <= 40);
        if let (Some(lo), Some(hi)) = (a.max_rate, a.failed_at) {
            assert!(lo < hi);
        }
    }

    #[test]
    fn a_marginal_confirmation_that_holds_again_confirms() {
        // Everything up to 1,000/s passes, and the hold at the answer is
        // always close to the SLO: repeated once, then the search ends.
        let mut s = Search::new(cfg());
        let a = loop {
            match s.next() {
                Next::Done(a) => break a,
                Next::Run(t) => {
                    let v = if t.rate <= 1000.0 {
                        Verdict::Pass {
                            marginal: t.stage == Stage::Confirm || t.stage == Stage::Repeat,
                        }
                    } else {
                        Verdict::Fail { why: "x".into() }
                    };
                    s.record(t, v);
                }
            }
        };
        assert_eq!(a.end, End::Converged, "{:?}", a.trials);
        let confirms = a
            .trials
            .iter()
            .filter(|t| t.stage == Stage::Confirm)
            .count();
        assert_eq!(confirms, 1, "{:?}", a.trials);
    }

    #[test]
    fn an_interrupted_search_keeps_what_it_found() {
        let mut s = Search::new(cfg());
        let Next::Run(t) = s.next() else { panic!() };
        s.record(t, Verdict::Pass { marginal: false });
        let a = s.interrupt();
        assert_eq!((a.end, a.max_rate), (End::Interrupted, Some(50.0)));
        assert!(matches!(s.next(), Next::Done(_)));
    }

    #[test]
    fn rates_are_round() {
        assert_eq!(round_rate(1837.62), 1840.0);
        assert_eq!(round_rate(565.69), 566.0);
        assert_eq!(round_rate(3.3333), 3.33);
        assert_eq!(round_rate(123_456.0), 123_000.0);
    }
}
