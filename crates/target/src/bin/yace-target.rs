//! The reference server on its own, without the rest of yace: for pointing
//! another load generator at it, or for checking `serve_foreground`.
//!
//! Usage: `yace-target [ADDR] [THREADS]` (default `127.0.0.1:8080`, one
//! worker thread per CPU). Stops on SIGINT or SIGTERM.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let threads = args.next().unwrap_or_else(|| "0".to_owned());
    let (Ok(addr), Ok(threads)) = (addr.parse(), threads.parse()) else {
        eprintln!("usage: yace-target [ADDR] [THREADS]   e.g. yace-target 127.0.0.1:8080 2");
        return ExitCode::from(2);
    };
    match yace_target::serve_foreground(yace_target::Config { addr, threads }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("yace-target: {e}");
            ExitCode::FAILURE
        }
    }
}
