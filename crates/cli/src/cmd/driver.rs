//! What the commands that send load share: the run library's notes shown
//! as yace always showed them, SIGINT/SIGTERM as the run's stop handle, and
//! output files with their errors.

use crate::{exit, Failure};
use ::run::{Finished, Note, Prepared, StopCause, StopHandle};
use engine::Sink;
use host::signals;
use stats::{RunResult, SecondRow};
use std::path::Path;

/// Prints what preparing a run noticed: `yace: …` for what it did,
/// `warning: …` for what it found.
fn show(notes: &[Note]) {
    for n in notes {
        match n {
            Note::RaisedNofile(what) => eprintln!("yace: {what}"),
            Note::Preflight(w) => eprintln!("warning: {w}"),
            Note::Embedded { url } => eprintln!(
                "yace: no URL given, so benchmarking the embedded target started at {url} \
                 (`yace serve`); it shares this machine's CPUs with the client"
            ),
        }
    }
}

/// Starts the embedded target, for a run without a URL.
pub fn embedded() -> Result<::run::Embedded, Failure> {
    ::run::Embedded::start().map_err(Failure::from)
}

/// Prepares the job, showing its notes (also when it fails).
pub fn prepare(job: ::run::Job) -> Result<Prepared, Failure> {
    match ::run::prepare(job) {
        Ok(p) => {
            show(&p.notes);
            Ok(p)
        }
        Err(e) => {
            show(e.notes());
            Err(Failure::from(e))
        }
    }
}

/// Runs the prepared job; SIGINT and SIGTERM stop it (a second one exits
/// at once). `observe` sees the finished per-second rows as they come.
pub fn execute<X: Sink>(
    p: Prepared,
    extra: impl FnMut(usize) -> X,
    observe: impl FnMut(&[SecondRow]),
) -> Result<Finished<X>, Failure> {
    execute_with(p, extra, observe, &StopHandle::new())
}

/// [`execute`], with a stop handle the caller holds too (the live view's
/// `q`).
pub fn execute_with<X: Sink>(
    p: Prepared,
    extra: impl FnMut(usize) -> X,
    mut observe: impl FnMut(&[SecondRow]),
    stop: &StopHandle,
) -> Result<Finished<X>, Failure> {
    signals::install();
    p.execute(
        extra,
        |rows| {
            if let Some(sig) = signals::received() {
                stop.stop(if sig == libc::SIGTERM {
                    StopCause::Terminated
                } else {
                    StopCause::Interrupted
                });
            }
            observe(rows);
        },
        stop,
    )
    .map_err(Failure::from)
}

/// Creates an output file before the run, so a bad path fails before any load.
pub fn create_output(flag: &str, path: Option<&Path>) -> Result<Option<::run::Output>, Failure> {
    path.map(|p| {
        ::run::Output::create(p).map_err(|e| {
            Failure::usage(format!(
                "{flag} {}: cannot create the file: {e} (check that its directory exists and is \
                 writable)",
                p.display()
            ))
        })
    })
    .transpose()
}

/// An output file could not be written: a full disk gets its own exit code.
pub fn output_failure(flag: &str, path: &Path, e: ::run::Error) -> Failure {
    let shown = path.display();
    match e.io() {
        Some(io) if e.is_disk_full() => Failure {
            code: exit::DISK_FULL,
            message: format!(
                "{flag} {shown}: the disk is full ({io}); the summary above is complete, free \
                 some space and re-run to keep the JSON"
            ),
        },
        Some(io) => Failure::runtime(format!("{flag} {shown}: cannot write: {io}")),
        None => Failure::from(e),
    }
}

/// Writes the JUnit report (`--junit`) into the file created before the
/// run, from the result as every output is (partial runs too).
pub fn write_junit(result: &RunResult, out: Option<::run::Output>) -> Result<(), Failure> {
    write_rendered("--junit", out, |w| report::junit::report(result, w))
}

/// The reports' language: the flag, else `YACE_LANG`, else the locale.
pub fn language(flag: Option<crate::args::LangArg>) -> report::lang::Lang {
    use report::lang::Lang;
    match flag {
        Some(crate::args::LangArg::En) => Lang::En,
        Some(crate::args::LangArg::Zh) => Lang::Zh,
        None => Lang::from_env(|k| std::env::var(k).ok()),
    }
}

/// Writes the HTML report (`--html`) into
/// the file created before the run (partial runs too).
pub fn write_html(
    result: &RunResult,
    out: Option<::run::Output>,
    lang: report::lang::Lang,
) -> Result<(), Failure> {
    write_rendered("--html", out, |w| report::html::report_in(result, w, lang))
}

fn write_rendered(
    flag: &str,
    out: Option<::run::Output>,
    render: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    if let Some(out) = out {
        let path = out.path().to_owned();
        out.write_with(|w| render(w))
            .map_err(|e| output_failure(flag, &path, e))?;
    }
    Ok(())
}

/// Writes the JSON result into the file created before the run.
pub fn write_json(result: &RunResult, out: Option<::run::Output>) -> Result<(), Failure> {
    if let Some(out) = out {
        let path = out.path().to_owned();
        out.write_json(result)
            .map_err(|e| output_failure("--json", &path, e))?;
        if result.end.partial {
            eprintln!("yace: partial result written to {}", path.display());
        }
    }
    Ok(())
}
