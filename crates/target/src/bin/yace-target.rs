//! The reference server on its own, without the rest of yace: for pointing
//! another load generator at it, or for checking `serve_foreground`.
//!
//! Usage: `yace-target [ADDR] [THREADS] [--idle-close MS] [--on-accept close|reset]`
//! (default `127.0.0.1:8080`, one worker thread per CPU). The flags set the
//! [`yace_target::Hostile`] misbehaviours. Stops on SIGINT or SIGTERM.

use std::process::ExitCode;
use std::time::Duration;

use yace_target::{Config, Hostile, OnAccept};

const USAGE: &str =
    "usage: yace-target [ADDR] [THREADS] [--idle-close MS] [--on-accept close|reset]\n\
                     e.g. yace-target 127.0.0.1:8080 2 --idle-close 200";

fn parse(mut args: impl Iterator<Item = String>) -> Option<(Config, Hostile)> {
    let mut positional = Vec::new();
    let mut hostile = Hostile::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--idle-close" => {
                let ms: u64 = args.next()?.parse().ok()?;
                hostile.idle_close = Some(Duration::from_millis(ms));
            }
            "--on-accept" => {
                hostile.on_accept = Some(match args.next()?.as_str() {
                    "close" => OnAccept::Close,
                    "reset" => OnAccept::Reset,
                    _ => return None,
                });
            }
            _ if arg.starts_with("--") => return None,
            _ => positional.push(arg),
        }
    }
    if positional.len() > 2 {
        return None;
    }
    let mut positional = positional.into_iter();
    let addr = positional
        .next()
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let threads = positional.next().unwrap_or_else(|| "0".to_owned());
    let config = Config {
        addr: addr.parse().ok()?,
        threads: threads.parse().ok()?,
        ..Config::default()
    };
    Some((config, hostile))
}

fn main() -> ExitCode {
    let Some((config, hostile)) = parse(std::env::args().skip(1)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match yace_target::serve_foreground_with(config, hostile) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("yace-target: {e}");
            ExitCode::FAILURE
        }
    }
}
