//! `yace probe`: the server side of `--monitor ssh:HOST`.

use crate::args::ProbeArgs;
use crate::{exit, Failure};

pub fn run(a: ProbeArgs) -> Result<u8, Failure> {
    let interval = plan::parse_duration("--interval", &a.interval)
        .map_err(|e| Failure::usage(e.to_string()))?
        .max(monitor::MIN_INTERVAL);
    let mut out = std::io::stdout().lock();
    match monitor::ssh::probe(interval, a.count, a.port, &mut out) {
        // The reader went away (ssh closed): that is how a probe ends.
        Ok(()) => Ok(exit::OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(exit::OK),
        Err(e) => Err(Failure::runtime(format!("yace probe: {e}"))),
    }
}
