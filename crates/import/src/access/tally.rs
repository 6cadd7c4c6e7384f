//! What a log adds up to, in memory that does not grow with the log: the
//! count of each URL (capped: rare URLs are folded into "other" when the
//! cap is reached) and the count of each second (one `u32` per second of
//! the log's span, itself capped).

use std::collections::HashMap;

/// Distinct URLs counted at most (and the bytes their keys may take).
pub(crate) const MAX_KEYS: usize = 100_000;
pub(crate) const MAX_KEY_BYTES: usize = 32 << 20;
/// The longest span of time a log may cover: 31 days of seconds (10.7 MB
/// of counts).
pub(crate) const MAX_SPAN_S: i64 = 31 * 86_400;

/// Requests by `METHOD target`, at most [`MAX_KEYS`] of them.
///
/// When the cap is reached, the URLs counted at most the median count are
/// folded into [`Mix::folded`] (a lossy count, in the manner of Manku and
/// Motwani): frequent URLs stay, and a URL seen again after it was folded
/// starts again from 1, so the counts kept are exact until the first fold
/// and lower bounds after it. Every request is in a count or in `folded`.
#[derive(Debug, Default)]
pub(crate) struct Mix {
    counts: HashMap<Box<str>, u64>,
    key_bytes: usize,
    /// Requests whose URL was folded.
    pub folded: u64,
    /// Folds done (0: every count is exact).
    pub folds: u32,
    cap: Cap,
}

#[derive(Debug, Clone, Copy)]
struct Cap {
    keys: usize,
    bytes: usize,
}

impl Default for Cap {
    fn default() -> Self {
        Cap {
            keys: MAX_KEYS,
            bytes: MAX_KEY_BYTES,
        }
    }
}

impl Mix {
    #[cfg(test)]
    pub(crate) fn with_cap(keys: usize) -> Mix {
        Mix {
            cap: Cap {
                keys,
                bytes: MAX_KEY_BYTES,
            },
            ..Mix::default()
        }
    }

    pub(crate) fn add(&mut self, key: &str) {
        if let Some(c) = self.counts.get_mut(key) {
            *c += 1;
            return;
        }
        if self.counts.len() >= self.cap.keys || self.key_bytes + key.len() > self.cap.bytes {
            self.fold();
        }
        self.key_bytes += key.len();
        self.counts.insert(key.into(), 1);
    }

    /// Folds the rarer half (or so) of the URLs into `folded`.
    fn fold(&mut self) {
        let mut counts: Vec<u64> = self.counts.values().copied().collect();
        if counts.is_empty() {
            return;
        }
        let mid = counts.len() / 2;
        let median = *counts.select_nth_unstable(mid).1;
        // Fold the URLs at or below the median, unless that is nearly all
        // of them while some are above it: then only those below.
        let at_most = counts.iter().filter(|&&c| c <= median).count();
        let below = counts.iter().filter(|&&c| c < median).count();
        let limit = if at_most * 10 > counts.len() * 9 && below > 0 {
            median - 1
        } else {
            median
        };
        let (mut folded, mut bytes) = (0, 0);
        self.counts.retain(|k, c| {
            if *c <= limit {
                folded += *c;
                bytes += k.len();
                false
            } else {
                true
            }
        });
        self.folded += folded;
        self.key_bytes -= bytes;
        self.folds += 1;
    }

    /// The URLs by count, most first (ties by name, for a stable output).
    pub(crate) fn ranked(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self.counts.iter().map(|(k, c)| (&**k, *c)).collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}

/// Requests by second (of their arrival), over the log's span.
#[derive(Debug, Default)]
pub(crate) struct Seconds {
    /// The second of `counts[0]`.
    base: i64,
    counts: Vec<u32>,
    /// The first and last second that have a request.
    span: Option<(i64, i64)>,
}

impl Seconds {
    /// Counts a request in second `s`; `Err` (with the span it would
    /// make, in seconds) when that would stretch the log past
    /// [`MAX_SPAN_S`].
    pub(crate) fn add(&mut self, s: i64) -> Result<(), i64> {
        let (lo, hi) = match self.span {
            None => {
                self.base = s;
                (s, s)
            }
            Some((lo, hi)) => (lo.min(s), hi.max(s)),
        };
        if hi - lo > MAX_SPAN_S {
            return Err(hi - lo);
        }
        self.span = Some((lo, hi));
        if s < self.base {
            // Logs are written in order, give or take the time a request
            // took: make room for an hour before, so that a few late
            // lines do not each move every count.
            let grow = (self.base - s).max(3600).min(self.base - (hi - MAX_SPAN_S));
            let grow = grow.max(self.base - s) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.base -= grow as i64;
        }
        let i = (s - self.base) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] = self.counts[i].saturating_add(1);
        Ok(())
    }

    /// The first and last second with a request.
    pub(crate) fn span(&self) -> Option<(i64, i64)> {
        self.span
    }

    /// The count of each second from the first to the last.
    pub(crate) fn counts(&self) -> &[u32] {
        match self.span {
            None => &[],
            Some((lo, hi)) => &self.counts[(lo - self.base) as usize..=(hi - self.base) as usize],
        }
    }
}
