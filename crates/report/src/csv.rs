//! The per-second series as CSV: one row per second of the run, for a
//! spreadsheet or a plotting tool. Built from the result alone.

use stats::RunResult;
use std::io::{self, Write};

/// The header row; the columns are [`stats::SecondRow`]'s fields.
pub const HEADER: &str = "second,length_s,responses,errors,cancelled,dropped,non_2xx,\
bytes_in,bytes_out,latency_mean_us,latency_p50_us,latency_p90_us,latency_p99_us,latency_max_us,\
status_2xx,status_3xx,status_4xx,status_5xx,connects,in_flight,client_cpu_s,lag_p99_us,lag_max_us,users";

/// Writes the header and one row per second.
pub fn series(r: &RunResult, mut w: impl Write) -> io::Result<()> {
    writeln!(w, "{HEADER}")?;
    for s in &r.series {
        writeln!(
            w,
            // length_s to the millisecond: a float's full digits are noise.
            "{},{:.3},{},{},{},{},{},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{},{:.2},{:.3},{},{},{}",
            s.second,
            s.length_s,
            s.responses,
            s.errors,
            s.cancelled,
            s.dropped,
            s.non_2xx,
            s.bytes_in,
            s.bytes_out,
            s.latency_mean_us,
            s.latency_p50_us,
            s.latency_p90_us,
            s.latency_p99_us,
            s.latency_max_us,
            s.status_2xx,
            s.status_3xx,
            s.status_4xx,
            s.status_5xx,
            s.connects,
            s.in_flight,
            s.client_cpu_s,
            // Empty where not measured (closed model, or an older result).
            s.lag_p99_us.map_or(String::new(), |v| format!("{v:.1}")),
            s.lag_max_us.map_or(String::new(), |v| format!("{v:.1}")),
            s.users.map_or(String::new(), |v| format!("{v:.2}")),
        )?;
    }
    Ok(())
}
