//! What a virtual user sends next. A plain run's flow repeats the plan's
//! pre-encoded request (no copy per request); a scenario's flow builds
//! each step's request into the user's own buffer and digests responses.

use crate::Sample;

/// The user's next move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Send the plan's pre-encoded request (step 0).
    Same,
    /// Send the bytes the flow just wrote into the buffer.
    Request {
        step: u16,
        /// Keep the raw response (up to 1 MiB) for [`Flow::ended`].
        capture: bool,
        /// A HEAD request: its response has no body.
        head: bool,
        /// Safe to re-send once on a fresh connection after a stale keep-alive.
        idempotent: bool,
    },
    /// Wait this many nanoseconds, then ask again.
    Think(u64),
    /// The iteration is over; the next starts after the plan's pacing.
    EndIteration,
}

/// A source of requests for virtual users. One per worker thread.
pub trait Flow: Send {
    /// Per-user state (cookies, variables, position in a journey).
    type User: Send;
    /// Creates user number `index` (unique across the run).
    fn user(&mut self, index: u64) -> Self::User;
    /// The user's next move; a request is written into `out` (cleared by the flow).
    fn next(&mut self, user: &mut Self::User, out: &mut Vec<u8>) -> Next;
    /// A request of this user ended; `response` holds the raw bytes if capture was asked.
    fn ended(&mut self, user: &mut Self::User, sample: &Sample, response: &[u8]);
}

/// The flow of a plain run: the plan's request, then the think time, then
/// the end of the iteration (so pacing applies per request).
#[derive(Debug, Clone)]
pub struct Fixed {
    think: plan::Think,
    rng: u64,
}

impl Fixed {
    pub fn new(think: plan::Think, seed: u64) -> Self {
        Fixed {
            think,
            rng: seed | 1,
        }
    }

    fn uniform(&mut self) -> f64 {
        // xorshift64*: cheap, good enough for think-time jitter.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Where a plain user is in its iteration.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedUser {
    sent: bool,
    thought: bool,
}

impl Flow for Fixed {
    type User = FixedUser;

    fn user(&mut self, _index: u64) -> FixedUser {
        FixedUser::default()
    }

    #[inline]
    fn next(&mut self, u: &mut FixedUser, _out: &mut Vec<u8>) -> Next {
        if !u.sent {
            u.sent = true;
            return Next::Same;
        }
        if !u.thought && self.think != plan::Think::None {
            u.thought = true;
            let u = self.uniform();
            let ns = self.think.sample(u);
            return Next::Think(ns);
        }
        *u = FixedUser::default();
        Next::EndIteration
    }

    #[inline]
    fn ended(&mut self, _: &mut FixedUser, _: &Sample, _: &[u8]) {}
}
