//! Cooling down to the baseline: between the lab's runs, wait until the
//! server's CPU, load and TIME_WAIT sockets are back near where they were
//! before the experiment (seed 002 slept 60 s and read `uptime`).

use crate::sampler::{Config, Monitors};
use std::time::Duration;

/// The server's state over a short window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Quiet {
    /// Mean CPU busy of the machine, % of all CPUs.
    pub cpu_pct: Option<f64>,
    /// 1-minute load average per CPU, at the end of the window.
    pub load_per_cpu: Option<f64>,
    /// TIME_WAIT sockets (on the target's port when known, else all).
    pub time_wait: Option<f64>,
}

/// CPU within this many points of the baseline is back.
pub const CPU_MARGIN_PCT: f64 = 10.0;
/// Load per CPU within this of the baseline is back (the 1-minute average
/// decays with a one-minute time constant: waiting for all of it would
/// take minutes).
pub const LOAD_MARGIN: f64 = 0.25;

impl Quiet {
    /// Watches the sources in `config` for `window` and sums them up.
    pub fn measure(
        config: &Config,
        port: Option<u16>,
        local: bool,
        window: Duration,
    ) -> Result<Quiet, String> {
        let config = Config {
            specs: config.specs.clone(),
            interval: (window / 4).max(crate::MIN_INTERVAL),
            answered_before: config.answered_before,
        };
        let monitors = Monitors::connect(&config, port, local).map_err(|p| p.join("; "))?;
        let running = monitors.start();
        std::thread::sleep(window);
        let m = running.finish();
        let mut q = Quiet::default();
        for s in &m.sources {
            let metric = |name: &str| stats::monitor::Monitoring::metric(s, name);
            let last = |name: &str| {
                metric(name).and_then(|m| m.values.iter().rev().flatten().next().copied())
            };
            if q.cpu_pct.is_none() {
                q.cpu_pct = metric("cpu_busy").and_then(|m| m.mean());
                let cpus = last("cpus").unwrap_or(1.0).max(1.0);
                q.load_per_cpu = last("load1").map(|l| l / cpus);
            }
            if q.time_wait.is_none() {
                q.time_wait = last("tcp_port_time_wait").or_else(|| last("tcp_time_wait_all"));
            }
        }
        Ok(q)
    }

    /// What is still above `baseline`, in words; `None` when all is back.
    pub fn still_busy(&self, baseline: &Quiet) -> Option<String> {
        let mut busy = Vec::new();
        if let (Some(now), Some(base)) = (self.cpu_pct, baseline.cpu_pct) {
            if now > base + CPU_MARGIN_PCT {
                busy.push(format!("CPU {now:.0}% (baseline {base:.0}%)"));
            }
        }
        if let (Some(now), Some(base)) = (self.load_per_cpu, baseline.load_per_cpu) {
            if now > base + LOAD_MARGIN {
                busy.push(format!("load {now:.2} per CPU (baseline {base:.2})"));
            }
        }
        if let (Some(now), Some(base)) = (self.time_wait, baseline.time_wait) {
            if now > base * 1.2 + 100.0 {
                busy.push(format!(
                    "{now:.0} sockets in TIME_WAIT (baseline {base:.0})"
                ));
            }
        }
        (!busy.is_empty()).then(|| busy.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_near_the_baseline() {
        let base = Quiet {
            cpu_pct: Some(5.0),
            load_per_cpu: Some(0.1),
            time_wait: Some(50.0),
        };
        let hot = Quiet {
            cpu_pct: Some(80.0),
            load_per_cpu: Some(0.9),
            time_wait: Some(5000.0),
        };
        let words = hot.still_busy(&base).unwrap();
        assert!(
            words.contains("CPU 80%")
                && words.contains("load 0.90")
                && words.contains("5000 sockets"),
            "{words}"
        );
        let cool = Quiet {
            cpu_pct: Some(12.0),
            load_per_cpu: Some(0.3),
            time_wait: Some(120.0),
        };
        assert_eq!(cool.still_busy(&base), None);
        // Nothing measured: nothing to wait for.
        assert_eq!(Quiet::default().still_busy(&base), None);
    }
}
