//! Metrics out while a run goes on (issue #21): the run's figures as
//! Prometheus reads them (`--prometheus`, an OpenMetrics endpoint) and as
//! OpenTelemetry takes them (`--otlp`, OTLP over HTTP/protobuf).
//!
//! Both are fed from the per-second rows the run's observer already hands
//! over ([`Figures::observe`]): nothing on the load threads. At the end the
//! run's result replaces the folded rows ([`Figures::finish`]), so the last
//! values are the result's, exactly. Serving and pushing happen on threads
//! of their own; a slow scraper or collector never holds the observer
//! (it only swaps a snapshot under a lock nobody holds for long).

#![forbid(unsafe_code)]

mod figures;
mod openmetrics;
mod otlp;
mod proto;
mod serve;

pub use figures::{Figures, Info};
pub use openmetrics::render;
pub use otlp::{Otlp, OtlpConfig};
pub use serve::Endpoint;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The exporters a run asked for, fed by its observer.
#[derive(Debug)]
pub struct Exporters {
    info: Info,
    figures: Arc<Mutex<Figures>>,
    endpoint: Option<Endpoint>,
    otlp: Option<Otlp>,
    seen: usize,
    /// CPU seconds the observer spent folding rows and rendering the text.
    observe_cpu_s: f64,
}

impl Exporters {
    /// Starts the endpoint (on `prometheus`, port 0: any free one) and the
    /// OTLP push, as asked.
    pub fn start(
        info: Info,
        prometheus: Option<SocketAddr>,
        otlp: Option<OtlpConfig>,
    ) -> std::io::Result<Exporters> {
        let figures = Arc::new(Mutex::new(Figures::default()));
        let endpoint = prometheus.map(Endpoint::start).transpose()?;
        if let Some(e) = &endpoint {
            e.publish(render(&Figures::default(), &info));
        }
        let otlp = otlp
            .map(|c| Otlp::start(c, info.clone(), figures.clone()))
            .transpose()?;
        Ok(Exporters {
            info,
            figures,
            endpoint,
            otlp,
            seen: 0,
            observe_cpu_s: 0.0,
        })
    }

    /// Where Prometheus scrapes, if it does.
    pub fn scrape_url(&self) -> Option<String> {
        self.endpoint
            .as_ref()
            .map(|e| format!("http://{}/metrics", e.addr()))
    }

    /// New rows (the observer's whole list): folded and published once a
    /// second, when a row was added.
    pub fn observe(&mut self, rows: &[stats::SecondRow]) {
        if rows.len() == self.seen {
            return;
        }
        self.seen = rows.len();
        let t0 = host::thread_cpu_s();
        let text = {
            let mut f = self.figures.lock().unwrap_or_else(|e| e.into_inner());
            f.observe(rows);
            self.endpoint.as_ref().map(|_| render(&f, &self.info))
        };
        if let (Some(e), Some(t)) = (&self.endpoint, text) {
            e.publish(t);
        }
        self.observe_cpu_s += host::thread_cpu_s() - t0;
    }

    /// What the exporters have cost so far: CPU seconds of the endpoint's
    /// and the pusher's threads and of folding the rows for them.
    pub fn cpu_s(&self) -> f64 {
        self.endpoint.as_ref().map_or(0.0, Endpoint::cpu_s)
            + self.otlp.as_ref().map_or(0.0, Otlp::cpu_s)
            + self.observe_cpu_s
    }

    /// The run's end: the result's figures are published (and pushed),
    /// served for `linger` more, then everything stops. Returns what went
    /// wrong on the way, to be said.
    pub fn finish(self, result: &stats::RunResult, linger: Duration) -> Vec<String> {
        let text = {
            let mut f = self.figures.lock().unwrap_or_else(|e| e.into_inner());
            f.finish(result);
            render(&f, &self.info)
        };
        let mut notes = Vec::new();
        if let Some(o) = self.otlp {
            notes.extend(o.finish());
        }
        if let Some(e) = self.endpoint {
            e.publish(text);
            std::thread::sleep(linger);
            e.stop();
        }
        notes
    }
}
