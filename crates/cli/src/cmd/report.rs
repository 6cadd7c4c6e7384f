//! `yace report`: saved results rendered again, from the JSON alone; one
//! result in any format, several side by side (text, Markdown).

use crate::args::{ReportArgs, ReportFormat};
use crate::{exit, Failure};
use std::path::Path;

/// Reads one result file (or the results an HTML report embeds), each
/// labelled for a comparison; or says what is wrong with it.
fn read(file: &Path) -> Result<Vec<(String, stats::RunResult)>, Failure> {
    let shown = file.display();
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::usage(format!("{shown}: cannot read: {e}")))?;
    if text.trim_start().starts_with('<') {
        let runs = report::html::embed::read(&text).map_err(|e| {
            Failure::usage(format!(
                "{shown}: {e}\n(yace report reads a yace HTML report, or the file `yace run --json FILE` writes)"
            ))
        })?;
        let many = runs.len() > 1;
        return Ok(runs
            .into_iter()
            .enumerate()
            .map(|(i, (label, r))| {
                let label = match (many, label.is_empty()) {
                    (false, _) => shown.to_string(),
                    (true, false) => format!("{shown}: {label}"),
                    (true, true) => format!("{shown} [{}]", i + 1),
                };
                (label, r)
            })
            .collect());
    }
    let r = report::json::read(&text).map_err(|e| {
        Failure::usage(format!(
            "{shown}: {e}\n(yace report reads the file `yace run --json FILE` writes; an access \
             log is read by `yace import access-log FILE`)"
        ))
    })?;
    Ok(vec![(shown.to_string(), r)])
}

/// A `yace find-max --json` answer: its own table and chart.
fn search(a: &ReportArgs, file: &Path, text: &str, out: &mut Vec<u8>) -> Result<(), Failure> {
    let shown = file.display();
    if a.files.len() > 1 {
        return Err(Failure::usage(format!(
            "{shown}: a find-max answer is reported on its own (give only it)"
        )));
    }
    let s = report::findmax::read(text).map_err(|e| Failure::usage(format!("{shown}: {e}")))?;
    let lang = super::driver::language(a.lang);
    match a.format {
        ReportFormat::Text => report::findmax::text(&s, &mut *out, lang),
        ReportFormat::Markdown => report::findmax::markdown(&s, &mut *out, lang),
        ReportFormat::Html => report::html::search_page(&s, &mut *out, lang),
        f => {
            return Err(Failure::usage(format!(
                "-F/--format: a find-max answer renders as text, markdown or html, not {}",
                format!("{f:?}").to_lowercase()
            )))
        }
    }
    .map_err(|e| Failure::runtime(format!("rendering {shown}: {e}")))
}

/// Renders the file(s); returns the exit code.
pub fn run(a: ReportArgs) -> Result<u8, Failure> {
    let mut out: Vec<u8> = Vec::new();
    if let [file] = &a.files[..] {
        if let Ok(text) = std::fs::read_to_string(file) {
            if report::findmax::is_search(&text) {
                search(&a, file, &text, &mut out)?;
                return write_out(&a, &out);
            }
        }
    }
    let mut runs = Vec::with_capacity(a.files.len());
    let mut bad = Vec::new();
    for f in &a.files {
        match read(f) {
            Ok(rs) => runs.extend(rs),
            Err(e) => bad.push(e.message),
        }
    }
    if !bad.is_empty() {
        return Err(Failure::usage(bad.join("\n")));
    }
    let lang = super::driver::language(a.lang);
    let written = if let [(_, r)] = &runs[..] {
        match a.format {
            ReportFormat::Text => report::text::summary_in(r, &mut out, false, lang),
            ReportFormat::Markdown => report::markdown::report_in(r, &mut out, lang),
            ReportFormat::Csv => report::csv::series(r, &mut out),
            ReportFormat::Json => report::json::write(r, &mut out),
            ReportFormat::Junit => report::junit::report(r, &mut out),
            ReportFormat::Html => report::html::page_in(&runs, &mut out, lang),
        }
    } else {
        match a.format {
            ReportFormat::Markdown => report::compare::markdown_in(&runs, &mut out, lang),
            ReportFormat::Text => report::compare::text_in(&runs, &mut out, lang),
            ReportFormat::Html => report::html::page_in(&runs, &mut out, lang),
            f @ (ReportFormat::Csv | ReportFormat::Json | ReportFormat::Junit) => {
                return Err(Failure::usage(format!(
                    "-F/--format: {} results are compared as text, markdown or html, not {} \
                     (give one result for that format)",
                    runs.len(),
                    format!("{f:?}").to_lowercase()
                )));
            }
        }
    };
    let shown = a
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    written.map_err(|e| Failure::runtime(format!("rendering {shown}: {e}")))?;
    write_out(&a, &out)
}

/// Writes the rendered report to `-o FILE` (whole, or not at all) or stdout.
fn write_out(a: &ReportArgs, out: &[u8]) -> Result<u8, Failure> {
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
            .write_with(|w| std::io::Write::write_all(w, out))
            .map_err(|e| super::driver::output_failure("-o", path, e))?,
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(out).and_then(|()| stdout.flush());
        }
    }
    Ok(exit::OK)
}
