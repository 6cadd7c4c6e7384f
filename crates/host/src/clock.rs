//! The system clock's sync state, as the kernel keeps it: a shard records
//! it so a merged run can say how far its shards' start times can be
//! trusted (docs/design/010-shards.md).

use stats::shard::{ClockStatus, ClockSync};

/// Reads the kernel's clock discipline state with `adjtimex(2)` in
/// read-only mode (`modes = 0`): synchronized when NTP/PTP keeps it
/// (`STA_UNSYNC` clear and not `TIME_ERROR`), with the kernel's maximum
/// and estimated error.
#[cfg(target_os = "linux")]
pub fn sync() -> ClockSync {
    // SAFETY: `timex` is plain data, zeroed is a valid value, and with
    // `modes = 0` the call only fills it in.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    t.modes = 0;
    let state = unsafe { libc::adjtimex(&mut t) };
    if state < 0 {
        return ClockSync {
            status: ClockStatus::Unknown,
            max_error_ms: None,
            est_error_ms: None,
        };
    }
    let unsync = state == libc::TIME_ERROR || t.status & libc::STA_UNSYNC != 0;
    ClockSync {
        status: if unsync {
            ClockStatus::Unsynchronized
        } else {
            ClockStatus::Synchronized
        },
        // Microseconds in the kernel's struct.
        max_error_ms: Some(t.maxerror as f64 / 1000.0),
        est_error_ms: Some(t.esterror as f64 / 1000.0),
    }
}

/// Elsewhere the state is not known.
#[cfg(not(target_os = "linux"))]
pub fn sync() -> ClockSync {
    ClockSync {
        status: ClockStatus::Unknown,
        max_error_ms: None,
        est_error_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_answers_with_a_bound() {
        let s = sync();
        // On Linux the read-only call always works; whether the clock is
        // synchronized depends on the machine.
        #[cfg(target_os = "linux")]
        {
            assert_ne!(s.status, ClockStatus::Unknown);
            let max = s.max_error_ms.unwrap();
            assert!((0.0..=16_000.0).contains(&max), "maxerror {max} ms");
        }
        let _ = s;
    }
}
