//! What the server saw: shared relaxed counters, a per-connection tally that
//! batches updates to them, and the serialisable [`Stats`] snapshot.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

use crate::route::Route;

/// A snapshot of the server's counters, as returned by [`crate::Server::stats`]
/// and served as JSON by `GET /_stats`.
///
/// Requests to `/_stats` itself are counted nowhere (not in `requests`,
/// `by_route`, `by_status` nor `bytes_out`), so polling the stats does not
/// disturb them. The connection used to poll them *is* counted in
/// `connections`: that one counts every accepted TCP connection.
///
/// Counts are published before the bytes they describe are written, so once
/// a client has read a response, the stats include it. Maps only hold
/// entries that are non-zero.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stats {
    /// Requests whose response was started (its head handed to the socket,
    /// or to h2), plus the requests a `/bad/...` route deliberately left
    /// unanswered (`/bad/close`, `/bad/silent`, and HTTP/2's `/bad/rst` and
    /// `/bad/refuse`). Those have no status, so `by_status` can add up to
    /// less than this. HTTP/2 streams refused after a GOAWAY are not
    /// requests.
    pub requests: u64,
    /// Accepted TCP connections.
    pub connections: u64,
    /// Requests by route name: `/`, `/bytes`, `/sleep`, `/session`, `/vary`,
    /// `/status`, `/chunked`, `/close`, `/echo`, each misbehaviour under its
    /// own path without the query (`/bad/cl-short`, ...), and `other` for
    /// everything that matched no route (404) or could not be parsed (400,
    /// 431).
    pub by_route: BTreeMap<String, u64>,
    /// Requests by response status code.
    pub by_status: BTreeMap<u16, u64>,
    /// Response bytes handed to the socket: over HTTP/1.1 heads and bodies
    /// (including `100 Continue` interim responses), over HTTP/2 the bodies
    /// (DATA payloads) only, since HPACK makes a head's size depend on what
    /// the connection sent before.
    pub bytes_out: u64,
    /// Of `requests`, those that came over HTTP/2.
    #[serde(default)]
    pub h2_requests: u64,
    /// Of `connections`, those served as HTTP/2 (the preface and SETTINGS
    /// exchanged).
    #[serde(default)]
    pub h2_connections: u64,
}

// Every status the server can send lies in 100..=599, so a flat array indexed
// by code is both bounded and lock-free.
const MIN_STATUS: u16 = 100;
const STATUS_SLOTS: usize = 500;

fn status_slot(status: u16) -> usize {
    debug_assert!((MIN_STATUS..MIN_STATUS + STATUS_SLOTS as u16).contains(&status));
    usize::from(status.saturating_sub(MIN_STATUS)).min(STATUS_SLOTS - 1)
}

/// Server-wide counters. Relaxed ordering is enough: totals only need to be
/// exact once the load has stopped, and each tally is flushed before the
/// bytes it describes are written, so a client that has read a response
/// finds it counted.
pub(crate) struct Counters {
    requests: AtomicU64,
    connections: AtomicU64,
    bytes_out: AtomicU64,
    h2_requests: AtomicU64,
    h2_connections: AtomicU64,
    routes: [AtomicU64; Route::COUNT],
    statuses: [AtomicU64; STATUS_SLOTS],
}

impl Counters {
    pub(crate) fn new() -> Counters {
        Counters {
            requests: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            h2_requests: AtomicU64::new(0),
            h2_connections: AtomicU64::new(0),
            routes: std::array::from_fn(|_| AtomicU64::new(0)),
            statuses: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    pub(crate) fn connection_accepted(&self) {
        self.connections.fetch_add(1, Relaxed);
    }

    pub(crate) fn h2_connection(&self) {
        self.h2_connections.fetch_add(1, Relaxed);
    }

    /// Reads the counters; with `reset`, zeroes them in the same step (a swap
    /// per counter) so that nothing counted concurrently is lost between the
    /// read and the reset.
    pub(crate) fn snapshot(&self, reset: bool) -> Stats {
        let take = |c: &AtomicU64| {
            if reset {
                c.swap(0, Relaxed)
            } else {
                c.load(Relaxed)
            }
        };
        let by_route = self
            .routes
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let n = take(c);
                (n > 0).then(|| (Route::at(i).name().to_owned(), n))
            })
            .collect();
        let by_status = self
            .statuses
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let n = take(c);
                (n > 0).then_some((MIN_STATUS + i as u16, n))
            })
            .collect();
        Stats {
            requests: take(&self.requests),
            connections: take(&self.connections),
            by_route,
            by_status,
            bytes_out: take(&self.bytes_out),
            h2_requests: take(&self.h2_requests),
            h2_connections: take(&self.h2_connections),
        }
    }
}

/// Per-connection counts not yet added to [`Counters`]. Batching them means a
/// pipelined burst costs one round of atomic adds rather than one per request.
pub(crate) struct Tally {
    /// An HTTP/2 connection's (or stream's): its requests count as HTTP/2
    /// ones too.
    h2: bool,
    requests: u64,
    bytes_out: u64,
    routes: [u64; Route::COUNT],
    // A connection rarely sees more than one or two distinct statuses between
    // flushes; overflow goes straight to the shared counters.
    statuses: [(u16, u64); 4],
}

// By hand: arrays longer than 32 have no derived `Default`.
impl Default for Tally {
    fn default() -> Tally {
        Tally {
            h2: false,
            requests: 0,
            bytes_out: 0,
            routes: [0; Route::COUNT],
            statuses: [(0, 0); 4],
        }
    }
}

impl Tally {
    pub(crate) fn h2() -> Tally {
        Tally {
            h2: true,
            ..Tally::default()
        }
    }

    /// A request left unanswered on purpose: counted, with no status.
    pub(crate) fn unanswered(&mut self, route: Route) {
        self.requests += 1;
        self.routes[route.index()] += 1;
    }

    pub(crate) fn request(&mut self, counters: &Counters, route: Route, status: u16) {
        self.requests += 1;
        self.routes[route.index()] += 1;
        for slot in &mut self.statuses {
            if slot.0 == status {
                slot.1 += 1;
                return;
            }
            if slot.1 == 0 {
                *slot = (status, 1);
                return;
            }
        }
        counters.statuses[status_slot(status)].fetch_add(1, Relaxed);
    }

    pub(crate) fn bytes(&mut self, n: u64) {
        self.bytes_out += n;
    }

    pub(crate) fn flush(&mut self, counters: &Counters) {
        if self.bytes_out > 0 {
            counters.bytes_out.fetch_add(self.bytes_out, Relaxed);
            self.bytes_out = 0;
        }
        if self.requests == 0 {
            return;
        }
        counters.requests.fetch_add(self.requests, Relaxed);
        if self.h2 {
            counters.h2_requests.fetch_add(self.requests, Relaxed);
        }
        self.requests = 0;
        for (i, n) in self.routes.iter_mut().enumerate() {
            if *n > 0 {
                counters.routes[i].fetch_add(*n, Relaxed);
                *n = 0;
            }
        }
        for slot in &mut self.statuses {
            if slot.1 > 0 {
                counters.statuses[status_slot(slot.0)].fetch_add(slot.1, Relaxed);
            }
            *slot = (0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Kind;

    #[test]
    fn tally_reaches_counters_only_on_flush() {
        let c = Counters::new();
        let mut t = Tally::default();
        t.request(&c, Route::Root, 200);
        t.request(&c, Route::Root, 200);
        t.request(&c, Route::Other, 404);
        t.bytes(100);
        assert_eq!(c.snapshot(false), Stats::default());
        t.flush(&c);
        let s = c.snapshot(false);
        assert_eq!(s.requests, 3);
        assert_eq!(s.bytes_out, 100);
        assert_eq!(s.by_route.get("/"), Some(&2));
        assert_eq!(s.by_route.get("other"), Some(&1));
        assert_eq!(s.by_route.len(), 2);
        assert_eq!(s.by_status, BTreeMap::from([(200, 2), (404, 1)]));
        // A second flush must not add anything again.
        t.flush(&c);
        assert_eq!(c.snapshot(false), s);
    }

    #[test]
    fn statuses_beyond_the_local_slots_are_not_lost() {
        let c = Counters::new();
        let mut t = Tally::default();
        for status in [200, 201, 202, 203, 204, 205, 206, 200, 206] {
            t.request(&c, Route::Status, status);
        }
        t.flush(&c);
        let s = c.snapshot(false);
        assert_eq!(s.requests, 9);
        assert_eq!(s.by_status.values().sum::<u64>(), 9);
        assert_eq!(s.by_status[&200], 2);
        assert_eq!(s.by_status[&206], 2);
    }

    #[test]
    fn misbehaviours_count_under_their_paths_and_unanswered_without_status() {
        let c = Counters::new();
        let mut t = Tally::default();
        t.unanswered(Route::Bad(Kind::Close));
        t.request(&c, Route::Bad(Kind::CloseEvery), 200);
        t.request(&c, Route::Root, 200);
        t.flush(&c);
        let s = c.snapshot(false);
        assert_eq!(s.requests, 3);
        assert_eq!(s.by_status, BTreeMap::from([(200, 2)]));
        assert_eq!(
            s.by_route,
            BTreeMap::from([
                ("/".to_owned(), 1),
                ("/bad/close".to_owned(), 1),
                ("/bad/close-every".to_owned(), 1),
            ])
        );
        for i in 0..Route::COUNT {
            assert_eq!(Route::at(i).index(), i);
        }
    }

    #[test]
    fn snapshot_with_reset_returns_then_zeroes() {
        let c = Counters::new();
        c.connection_accepted();
        let mut t = Tally::default();
        t.request(&c, Route::Echo, 599);
        t.flush(&c);
        let s = c.snapshot(true);
        assert_eq!(s.connections, 1);
        assert_eq!(s.by_status, BTreeMap::from([(599, 1)]));
        assert_eq!(c.snapshot(false), Stats::default());
    }

    #[test]
    fn stats_round_trip_through_json() {
        let s = Stats {
            requests: 2,
            connections: 1,
            by_route: BTreeMap::from([("/".to_owned(), 2)]),
            by_status: BTreeMap::from([(200, 2)]),
            bytes_out: 10,
            h2_requests: 1,
            h2_connections: 1,
        };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Stats>(&json).unwrap(), s);
    }

    #[test]
    fn h2_tallies_count_their_requests_as_h2_too() {
        let c = Counters::new();
        c.connection_accepted();
        c.h2_connection();
        let mut t = Tally::h2();
        t.request(&c, Route::Root, 200);
        t.unanswered(Route::Bad(Kind::Rst));
        t.flush(&c);
        let mut plain = Tally::default();
        plain.request(&c, Route::Root, 200);
        plain.flush(&c);
        let s = c.snapshot(false);
        assert_eq!((s.requests, s.h2_requests), (3, 2));
        assert_eq!((s.connections, s.h2_connections), (1, 1));
    }

    #[test]
    fn stats_without_h2_fields_still_parse() {
        let json = r#"{"requests":1,"connections":1,"by_route":{},"by_status":{},"bytes_out":0}"#;
        let s: Stats = serde_json::from_str(json).unwrap();
        assert_eq!((s.h2_requests, s.h2_connections), (0, 0));
    }
}
