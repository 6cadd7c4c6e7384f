//! What a virtual user sends next. A plain run's flow repeats the plan's
//! pre-encoded request (no copy per request); a scenario's flow builds
//! each step's request into the user's own buffer and digests responses.

use crate::Sample;
use sample::Captured;

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
    /// A request of this user ended; `response` is the response, typed,
    /// when capture was asked and one arrived.
    fn ended(&mut self, user: &mut Self::User, sample: &Sample, response: Option<&Captured>);
    /// Each iteration is a journey of its own (a scenario): under the open
    /// model, every arrival is then a visitor who walks one, not a request.
    fn journeys(&self) -> bool {
        false
    }
}

/// The flow of a plain run: the plan's request, then the think time, then
/// the end of the iteration (so pacing applies per request). With cookies
/// on (virtual users), each user keeps the cookies its responses set and
/// sends them back, so server sessions work; otherwise every request is the
/// shared pre-encoded one, copied never. Each user draws its think times
/// from its own stream, seeded by its global index: the same whichever
/// worker, thread count or shard serves it (shards never think in step).
#[derive(Debug, Clone)]
pub struct Fixed {
    think: plan::Think,
    seed: u64,
    /// The plan's request, when users keep cookies.
    cookies: Option<std::sync::Arc<[u8]>>,
    /// Cookies this worker's users' jars could not keep.
    cookies_dropped: u64,
}

impl Fixed {
    pub fn new(think: plan::Think, seed: u64) -> Self {
        Fixed {
            think,
            seed,
            cookies: None,
            cookies_dropped: 0,
        }
    }

    /// Users keep a cookie jar; `request` is the plan's encoded request.
    pub fn with_cookies(mut self, request: Vec<u8>) -> Self {
        self.cookies = Some(request.into());
        self
    }

    /// Cookies this worker's users' jars could not keep (full, or a
    /// cookie too large).
    pub fn cookies_dropped(&self) -> u64 {
        self.cookies_dropped
    }
}

/// Where a plain user is in its iteration, its cookies and its stream of
/// think times.
#[derive(Debug, Clone)]
pub struct FixedUser {
    sent: bool,
    thought: bool,
    jar: sample::Jar,
    rng: plan::rng::Rng,
}

impl Flow for Fixed {
    type User = FixedUser;

    fn user(&mut self, index: u64) -> FixedUser {
        FixedUser {
            sent: false,
            thought: false,
            jar: sample::Jar::default(),
            rng: plan::rng::Rng::for_user(self.seed, index),
        }
    }

    #[inline]
    fn next(&mut self, u: &mut FixedUser, out: &mut Vec<u8>) -> Next {
        if !u.sent {
            u.sent = true;
            let Some(req) = &self.cookies else {
                return Next::Same;
            };
            out.clear();
            // The jar's Cookie header goes just before the blank line ending the head.
            let head_end = req
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(req.len(), |p| p + 2);
            out.extend_from_slice(&req[..head_end]);
            if !u.jar.is_empty() {
                out.extend_from_slice(b"Cookie: ");
                u.jar.write(out);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(&req[head_end..]);
            return Next::Request {
                step: 0,
                capture: true,
                head: crate::http::is_head(crate::http::request_method(req)),
                idempotent: crate::http::is_idempotent(crate::http::request_method(req)),
            };
        }
        if !u.thought && self.think != plan::Think::None {
            u.thought = true;
            return Next::Think(self.think.sample(u.rng.next_f64()));
        }
        u.sent = false;
        u.thought = false;
        Next::EndIteration
    }

    #[inline]
    fn ended(&mut self, u: &mut FixedUser, _: &Sample, response: Option<&Captured>) {
        let (Some(_), Some(r)) = (&self.cookies, response) else {
            return;
        };
        let now = r.header("date").and_then(sample::parse_http_date);
        for v in r.all("set-cookie") {
            self.cookies_dropped += u.jar.set(v, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_send_back_their_cookies() {
        let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        let mut f = Fixed::new(plan::Think::None, 1).with_cookies(req);
        let mut u = f.user(0);
        let mut out = Vec::new();
        assert!(matches!(
            f.next(&mut u, &mut out),
            Next::Request { capture: true, .. }
        ));
        assert_eq!(out, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        let s = Sample::default();
        let set = b"HTTP/1.1 200 OK\r\nSet-Cookie: SID=abc; Path=/\r\nSet-Cookie: t=1\r\n\r\n";
        f.ended(&mut u, &s, Some(&Captured::from_http1(set, false, 200)));
        assert_eq!(f.next(&mut u, &mut out), Next::EndIteration);
        f.next(&mut u, &mut out);
        assert_eq!(
            out,
            b"GET / HTTP/1.1\r\nHost: x\r\nCookie: SID=abc; t=1\r\n\r\n"
        );
        let expire = b"HTTP/1.1 200 OK\r\nSet-Cookie: t=; Max-Age=0\r\n\r\n";
        f.ended(&mut u, &s, Some(&Captured::from_http1(expire, false, 200)));
        f.next(&mut u, &mut out);
        f.next(&mut u, &mut out);
        assert_eq!(out, b"GET / HTTP/1.1\r\nHost: x\r\nCookie: SID=abc\r\n\r\n");
    }

    /// One user's think times, `n` iterations.
    fn thinks(f: &mut Fixed, index: u64, n: usize) -> Vec<u64> {
        let (mut u, mut out) = (f.user(index), Vec::new());
        (0..n)
            .map(|_| {
                assert_eq!(f.next(&mut u, &mut out), Next::Same);
                let Next::Think(t) = f.next(&mut u, &mut out) else {
                    panic!("no think time")
                };
                assert_eq!(f.next(&mut u, &mut out), Next::EndIteration);
                t
            })
            .collect()
    }

    #[test]
    fn a_users_think_times_follow_its_global_index_not_its_worker() {
        let think = plan::Think::parse("uniform(1s, 3s)").unwrap();
        // Two workers (or two shards' first workers), same run seed: user 7
        // thinks the same on either, whoever else they served first.
        let (mut a, mut b) = (Fixed::new(think, 42), Fixed::new(think, 42));
        thinks(&mut a, 0, 3);
        let on_a = thinks(&mut a, 7, 20);
        assert_eq!(on_a, thinks(&mut b, 7, 20));
        // Users next to each other (shard 0's and shard 1's first) do not
        // think in step, and the draws cover the range.
        assert_ne!(on_a, thinks(&mut b, 8, 20));
        assert!(on_a
            .iter()
            .all(|&t| (1_000_000_000..=3_000_000_000).contains(&t)));
        assert_ne!(on_a.iter().min(), on_a.iter().max());
    }

    #[test]
    fn without_cookies_the_shared_request_is_sent() {
        let mut f = Fixed::new(plan::Think::None, 1);
        let mut u = f.user(0);
        let mut out = Vec::new();
        assert_eq!(f.next(&mut u, &mut out), Next::Same);
        assert!(out.is_empty());
    }
}
