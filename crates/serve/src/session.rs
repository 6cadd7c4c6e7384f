//! Per-session locks for `/session`, imitating PHP's file-locked sessions:
//! requests carrying the same session id run one at a time.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Mutex as AsyncMutex;

/// The live session locks. An entry exists only while some request holds or
/// waits for its lock, so the map is bounded by the number of in-flight
/// `/session` requests however many distinct ids clients invent.
#[derive(Default)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Entry>>,
}

#[derive(Default)]
struct Entry {
    lock: Arc<AsyncMutex<()>>,
    // Counted under the map's own lock (rather than read off
    // `Arc::strong_count`) so that deciding to remove an entry cannot race
    // with a new request joining it.
    tickets: usize,
}

/// A place in a session's queue. Dropping it, whether after the request or
/// because the request was cancelled while waiting, removes the session's
/// entry if nobody else is using it.
pub(crate) struct Ticket<'a> {
    sessions: &'a Sessions,
    id: String,
    lock: Arc<AsyncMutex<()>>,
}

impl Sessions {
    pub(crate) fn enter(&self, id: &str) -> Ticket<'_> {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = map.entry(id.to_owned()).or_default();
        entry.tickets += 1;
        Ticket {
            sessions: self,
            id: id.to_owned(),
            lock: entry.lock.clone(),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Ticket<'_> {
    /// Waits for the session's turn; the guard must not outlive the ticket.
    pub(crate) async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.lock.lock().await
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut map = self
            .sessions
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = map.get_mut(&self.id) {
            entry.tickets -= 1;
            if entry.tickets == 0 {
                map.remove(&self.id);
            }
        }
    }
}

thread_local! {
    static RNG: Cell<u64> = Cell::new(RandomState::new().hash_one(std::thread::current().id()) | 1);
}

/// A fast non-cryptographic random number (xorshift64*), seeded per thread
/// from std's randomly keyed hasher. Session ids only need to be unique, and
/// `/vary` only needs lengths that differ.
pub(crate) fn random_u64() -> u64 {
    RNG.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}

/// A uniformly distributed number in `min..=max` (`min <= max`).
pub(crate) fn random_in(min: u64, max: u64) -> u64 {
    match (max - min).checked_add(1) {
        Some(span) => min + random_u64() % span,
        None => random_u64(),
    }
}

/// 128 random bits as 32 lowercase hex digits.
pub(crate) fn new_session_id() -> String {
    format!("{:016x}{:016x}", random_u64(), random_u64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn same_id_is_serialized_and_entry_dropped_after() {
        let sessions = Sessions::default();
        runtime().block_on(async {
            let start = Instant::now();
            let one = async {
                let t = sessions.enter("a");
                let _g = t.lock().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let two = async {
                let t = sessions.enter("a");
                let _g = t.lock().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let other = async {
                let t = sessions.enter("b");
                let _g = t.lock().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            tokio::join!(one, two, other);
            let took = start.elapsed();
            assert!(took >= Duration::from_millis(100), "{took:?}");
            assert!(took < Duration::from_millis(150), "{took:?}");
        });
        assert_eq!(sessions.len(), 0);
    }

    #[test]
    fn cancelled_waiter_does_not_leak_its_entry() {
        let sessions = Sessions::default();
        runtime().block_on(async {
            let holder = sessions.enter("x");
            let guard = holder.lock().await;
            let waiter = async {
                let t = sessions.enter("x");
                let _g = t.lock().await;
            };
            // The waiter is dropped while queued behind the holder.
            let timed_out = tokio::time::timeout(Duration::from_millis(10), waiter).await;
            assert!(timed_out.is_err());
            assert_eq!(sessions.len(), 1);
            drop(guard);
            drop(holder);
        });
        assert_eq!(sessions.len(), 0);
    }

    #[test]
    fn ids_and_ranges() {
        let a = new_session_id();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_session_id());
        for _ in 0..1000 {
            assert!((5..=7).contains(&random_in(5, 7)));
        }
        assert_eq!(random_in(3, 3), 3);
        let _ = random_in(0, u64::MAX);
    }
}
