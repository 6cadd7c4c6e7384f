//! The real `yace` binary against the real embedded
//! target on loopback, asserting on what the server saw and what yace
//! reported. One test binary, topic modules (STYLE.md §12).

pub use crate::support::{run_json, settled, temp_path, u, yace};

mod ab;
mod campaign;
mod capacity;
mod combos;
mod dashboard;
mod dashboard_control;
mod doctor;
mod errors;
mod export;
mod first_contact;
mod foreground;
mod live;
mod pane;
mod preflight;
mod report;
mod run;
mod schema;
mod secrets;
mod serve_h2;
mod signals;
mod sources;
mod unix;

use std::process::Output;

pub fn server() -> serve::Server {
    serve::Server::start(serve::Config {
        threads: 2,
        ..Default::default()
    })
    .expect("start the embedded target")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
