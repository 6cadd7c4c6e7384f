//! Real web stacks (nginx, Apache prefork/event, mod_php, php-fpm from
//! Debian's packages) started on loopback from the configs in `stacks/`:
//! the harness others test `yace ab` against, and tests that each stack
//! serves the pages and logs exactly what it served. Also the daemons
//! `--monitor` reads (`daemons.rs`: node_exporter, sshd) and a check that
//! they start and stop cleanly.
//!
//! Needs the packages `scripts/test.sh` installs; a missing one fails the
//! test with a message saying so.

mod ab;
mod client;
pub mod daemons;
mod daemons_check;
mod fcgi;
pub mod harness;
mod lifecycle;
mod paced;
mod pages;
mod sessions;

use std::sync::atomic::{AtomicU32, Ordering};

/// A session id no other test uses (PHP accepts [a-zA-Z0-9,-]).
pub fn unique_sid(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "yace{tag}{}x{}x{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
