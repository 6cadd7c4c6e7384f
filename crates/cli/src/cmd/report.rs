//! `yace report`: saved results rendered again, from the JSON alone; one
//! result in any format, several side by side (text, Markdown).

use crate::args::{ReportArgs, ReportFormat};
use crate::{exit, Failure};
use std::path::Path;

/// Reads one result file, or says what is wrong with it.
fn read(file: &Path) -> Result<stats::RunResult, Failure> {
    let shown = file.display();
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::usage(format!("{shown}: cannot read: {e}")))?;
    report::json::read(&text).map_err(|e| {
        Failure::usage(format!(
            "{shown}: {e}\n(yace report reads the file `yace run --json FILE` writes)"
        ))
    })
}

/// Renders the file(s); returns the exit code.
pub fn run(a: ReportArgs) -> Result<u8, Failure> {
    let mut out: Vec<u8> = Vec::new();
    let written = if let [file] = &a.files[..] {
        let r = read(file)?;
        match a.format {
            ReportFormat::Text => report::text::summary(&r, &mut out),
            ReportFormat::Markdown => report::markdown::report(&r, &mut out),
            ReportFormat::Csv => report::csv::series(&r, &mut out),
            ReportFormat::Json => report::json::write(&r, &mut out),
            ReportFormat::Junit => report::junit::report(&r, &mut out),
        }
    } else {
        if !matches!(a.format, ReportFormat::Text | ReportFormat::Markdown) {
            return Err(Failure::usage(
                format!(
                    "-F/--format: several results are compared as text or markdown, not {:?} \
                 (give one file for that format)",
                    a.format
                )
                .to_lowercase(),
            ));
        }
        let mut runs = Vec::with_capacity(a.files.len());
        let mut bad = Vec::new();
        for f in &a.files {
            match read(f) {
                Ok(r) => runs.push((f.display().to_string(), r)),
                Err(e) => bad.push(e.message),
            }
        }
        if !bad.is_empty() {
            return Err(Failure::usage(bad.join("\n")));
        }
        match a.format {
            ReportFormat::Markdown => report::compare::markdown(&runs, &mut out),
            _ => report::compare::text(&runs, &mut out),
        }
    };
    let shown = a
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
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
