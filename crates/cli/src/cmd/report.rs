//! `yace report`: a saved result rendered again, from the JSON alone.

use crate::args::{ReportArgs, ReportFormat};
use crate::{exit, Failure};

/// Renders the file; returns the exit code.
pub fn run(a: ReportArgs) -> Result<u8, Failure> {
    let shown = a.file.display();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| Failure::usage(format!("{shown}: cannot read: {e}")))?;
    let r = report::json::read(&text).map_err(|e| {
        Failure::usage(format!(
            "{shown}: {e}\n(yace report reads the file `yace run --json FILE` writes)"
        ))
    })?;
    let mut out: Vec<u8> = Vec::new();
    let written = match a.format {
        ReportFormat::Text => report::text::summary(&r, &mut out),
        ReportFormat::Markdown => report::markdown::report(&r, &mut out),
        ReportFormat::Csv => report::csv::series(&r, &mut out),
        ReportFormat::Json => report::json::write(&r, &mut out),
        ReportFormat::Junit => report::junit::report(&r, &mut out),
    };
    written.map_err(|e| Failure::runtime(format!("rendering {shown}: {e}")))?;
    match &a.output {
        // Into place whole, or not at all: the previous file survives a
        // failure.
        Some(path) => ::run::Output::create(path)
            .map_err(|e| {
                Failure::usage(format!(
                    "-o {}: cannot create the file: {e}",
                    path.display()
                ))
            })?
            .write_with(|w| std::io::Write::write_all(w, &out))
            .map_err(|e| super::driver::output_failure("-o", path, e))?,
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(&out).and_then(|()| stdout.flush());
        }
    }
    Ok(exit::OK)
}
