//! Worker pools for `/pool`: a stand-in for php-fpm's `pm.max_children`
//! (or Apache's `MaxRequestWorkers`) whose capacity is known exactly. A
//! pool of K workers serves at most K requests at once, each taking its N
//! ms, queues up to Q more, and answers 503 beyond that, so it holds
//! K × 1000 / N requests per second and its knee is where the queue grows.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::Semaphore;

/// Largest pool and queue a request may ask for.
pub(crate) const MAX_WORKERS: u64 = 4096;
pub(crate) const MAX_QUEUE: u64 = 100_000;

/// The pools, one per worker count asked for (at most [`MAX_WORKERS`]).
#[derive(Default)]
pub(crate) struct Pools {
    map: Mutex<HashMap<u64, Arc<Pool>>>,
}

pub(crate) struct Pool {
    workers: Semaphore,
    /// Requests in the pool: in service or queued.
    inside: AtomicUsize,
}

/// A request's place in a pool, given back when dropped (also when the
/// client goes away while it waits).
pub(crate) struct Place(Arc<Pool>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.inside.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Pools {
    /// Enters the pool of `workers`; None when it already holds `workers +
    /// queue` requests (the caller answers 503).
    pub(crate) fn enter(&self, workers: u64, queue: u64) -> Option<Place> {
        let pool = self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(workers)
            .or_insert_with(|| {
                Arc::new(Pool {
                    workers: Semaphore::new(workers as usize),
                    inside: AtomicUsize::new(0),
                })
            })
            .clone();
        let before = pool.inside.fetch_add(1, Ordering::Relaxed);
        let place = Place(pool);
        (before < (workers + queue) as usize).then_some(place)
    }
}

impl Place {
    /// Waits for a worker, holds it for `ms`, and gives it back.
    pub(crate) async fn serve(&self, ms: u64) {
        let Ok(_worker) = self.0.workers.acquire().await else {
            return;
        };
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}
