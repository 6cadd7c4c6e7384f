//! Several runs side by side: the headline figures of each, and each one's
//! difference to the first in %. A comparison of single runs shows a
//! difference; whether it is real needs repetitions (the lab's job), and
//! the table says so.

use crate::fmt::{bytes, count, duration_us, pad, width};
use crate::lang::{tr, trf, Lang};
use crate::text::model_in;
use stats::RunResult;
use std::io::{self, Write};

/// One row of the table: its label, each run's value shown, and the value
/// compared (None: not comparable, e.g. a latency with no responses).
struct Row {
    label: &'static str,
    shown: Vec<String>,
    values: Vec<Option<f64>>,
}

fn rows(runs: &[(String, RunResult)]) -> Vec<Row> {
    let pct = |r: &RunResult, p: f64| {
        r.summary
            .latency
            .at(p)
            .filter(|_| r.summary.latency.count > 0)
    };
    let mut rows = vec![
        Row {
            label: "responses/s",
            shown: runs
                .iter()
                .map(|(_, r)| format!("{:.1}", r.summary.rps))
                .collect(),
            values: runs.iter().map(|(_, r)| Some(r.summary.rps)).collect(),
        },
        Row {
            label: "responses",
            shown: runs
                .iter()
                .map(|(_, r)| count(r.summary.responses))
                .collect(),
            values: runs
                .iter()
                .map(|(_, r)| Some(r.summary.responses as f64))
                .collect(),
        },
        Row {
            label: "errors",
            shown: runs
                .iter()
                .map(|(_, r)| {
                    let s = &r.summary;
                    format!(
                        "{} ({:.2}%)",
                        count(s.errors),
                        s.errors as f64 * 100.0 / s.requests.max(1) as f64
                    )
                })
                .collect(),
            values: runs
                .iter()
                .map(|(_, r)| Some(r.summary.errors as f64))
                .collect(),
        },
    ];
    for (label, p) in [
        ("latency p50", 50.0),
        ("latency p90", 90.0),
        ("latency p99", 99.0),
        ("latency p99.9", 99.9),
    ] {
        rows.push(Row {
            label,
            shown: runs
                .iter()
                .map(|(_, r)| pct(r, p).map_or("—".into(), duration_us))
                .collect(),
            values: runs.iter().map(|(_, r)| pct(r, p)).collect(),
        });
    }
    rows.push(Row {
        label: "latency max",
        shown: runs
            .iter()
            .map(|(_, r)| duration_us(r.summary.latency.max_us))
            .collect(),
        values: runs
            .iter()
            .map(|(_, r)| (r.summary.latency.count > 0).then_some(r.summary.latency.max_us))
            .collect(),
    });
    rows.push(Row {
        label: "transfer in/s",
        shown: runs
            .iter()
            .map(|(_, r)| format!("{}/s", bytes(r.summary.bytes_in_per_s)))
            .collect(),
        values: runs
            .iter()
            .map(|(_, r)| Some(r.summary.bytes_in_per_s))
            .collect(),
    });
    rows.push(Row {
        label: "client CPU-s",
        shown: runs
            .iter()
            .map(|(_, r)| format!("{:.2}", r.client.cpu_s))
            .collect(),
        values: runs.iter().map(|(_, r)| Some(r.client.cpu_s)).collect(),
    });
    rows
}

/// The comparison as cells, for renderers other than text and Markdown:
/// per row, its label and per run (value shown, change to the first).
pub(crate) struct Table {
    pub rows: Vec<TableRow>,
    pub notes: Vec<String>,
}

pub(crate) struct TableRow {
    pub label: &'static str,
    pub cells: Vec<(String, String)>,
}

pub(crate) fn table_in(runs: &[(String, RunResult)], lang: Lang) -> Table {
    Table {
        rows: rows(runs)
            .into_iter()
            .map(|row| TableRow {
                label: tr(lang, row.label),
                cells: row
                    .shown
                    .into_iter()
                    .zip(&row.values)
                    .map(|(shown, v)| (shown, change(row.values[0], *v)))
                    .collect(),
            })
            .collect(),
        notes: caveats(runs, lang),
    }
}

/// The change from `base` to `v` in %, as shown: `+12.3%`, `−4.0%`, `±0%`.
fn change(base: Option<f64>, v: Option<f64>) -> String {
    match (base, v) {
        (Some(b), Some(v)) if b != 0.0 => {
            let d = (v - b) / b * 100.0;
            if d.abs() < 0.05 {
                "±0%".into()
            } else {
                format!("{}{:.1}%", if d > 0.0 { "+" } else { "−" }, d.abs())
            }
        }
        (Some(b), Some(v)) if b == v => "±0%".into(),
        _ => "—".into(),
    }
}

/// What a reader must know before reading the differences.
fn caveats(runs: &[(String, RunResult)], lang: Lang) -> Vec<String> {
    let mut out = vec![tr(
        lang,
        "a comparison of single runs cannot tell whether a difference is real: repeat each run and compare the spread (yace compare and yace lab do this with statistics)",
    )
    .to_string()];
    let models: Vec<String> = runs.iter().map(|(_, r)| model_in(r, lang)).collect();
    if models.iter().any(|m| *m != models[0]) {
        out.push(
            tr(
                lang,
                "the runs used different load models or settings (see each run's model)",
            )
            .into(),
        );
    }
    for (name, r) in runs {
        if r.end.partial {
            out.push(trf(lang, "{} is a partial result (interrupted)", &[name]));
        }
        if !r.warnings.is_empty() {
            let n = r.warnings.len();
            let text = trf(
                lang,
                "{} has {} validity warning(s): see its own report",
                &[name, &n],
            );
            out.push(if lang == Lang::En {
                text.replace("warning(s)", if n == 1 { "warning" } else { "warnings" })
            } else {
                text
            });
        }
    }
    out
}

/// The comparison as a terminal table.
pub fn text(runs: &[(String, RunResult)], w: impl Write) -> io::Result<()> {
    text_in(runs, w, Lang::En)
}

/// [`text`] in `lang`.
pub fn text_in(runs: &[(String, RunResult)], mut w: impl Write, lang: Lang) -> io::Result<()> {
    let rows = rows(runs);
    let label_w = rows
        .iter()
        .map(|r| width(tr(lang, r.label)))
        .max()
        .unwrap_or(0);
    writeln!(
        w,
        "{}",
        trf(
            lang,
            "Comparing {} runs (differences to the first)",
            &[&runs.len()]
        )
    )?;
    for (i, (name, r)) in runs.iter().enumerate() {
        writeln!(
            w,
            "  [{}] {name}: {} {}",
            i + 1,
            r.plan.request.method,
            r.plan.target.url
        )?;
        writeln!(
            w,
            "      {}  ·  {}  ·  {:.2}s",
            model_in(r, lang),
            r.started_at,
            r.summary.duration_s
        )?;
    }
    writeln!(w)?;
    // Column widths: each run's values and, after the first, its change.
    let cols: Vec<usize> = (0..runs.len())
        .map(|i| {
            rows.iter()
                .map(|row| {
                    let v = row.shown[i].chars().count();
                    if i == 0 {
                        v
                    } else {
                        v + 2 + change(row.values[0], row.values[i]).chars().count() + 2
                    }
                })
                .max()
                .unwrap_or(0)
                .max(3)
        })
        .collect();
    write!(w, "  {}", pad("", label_w))?;
    for (i, width) in cols.iter().enumerate() {
        write!(w, "   {:>width$}", format!("[{}]", i + 1))?;
    }
    writeln!(w)?;
    for row in &rows {
        write!(w, "  {}", pad(tr(lang, row.label), label_w))?;
        for (i, width) in cols.iter().enumerate() {
            let cell = if i == 0 {
                row.shown[0].clone()
            } else {
                format!(
                    "{} ({})",
                    row.shown[i],
                    change(row.values[0], row.values[i])
                )
            };
            write!(w, "   {cell:>width$}")?;
        }
        writeln!(w)?;
    }
    writeln!(w)?;
    let note = tr(lang, "note: ");
    for c in caveats(runs, lang) {
        for (i, line) in crate::fmt::wrap(&c, 70).iter().enumerate() {
            let lead = if i == 0 {
                note.to_string()
            } else {
                " ".repeat(width(note))
            };
            writeln!(w, "  {lead}{line}")?;
        }
    }
    Ok(())
}

/// The comparison as Markdown.
pub fn markdown(runs: &[(String, RunResult)], w: impl Write) -> io::Result<()> {
    markdown_in(runs, w, Lang::En)
}

/// [`markdown`] in `lang`.
pub fn markdown_in(runs: &[(String, RunResult)], mut w: impl Write, lang: Lang) -> io::Result<()> {
    let cell = |s: &str| s.replace('|', "\\|");
    writeln!(w, "# {}\n", trf(lang, "Comparing {} runs", &[&runs.len()]))?;
    for (i, (name, r)) in runs.iter().enumerate() {
        writeln!(
            w,
            "{}. `{}`: {} {} — {} · {} · {:.2} s",
            i + 1,
            cell(name),
            r.plan.request.method,
            cell(&r.plan.target.url),
            model_in(r, lang),
            r.started_at,
            r.summary.duration_s
        )?;
    }
    write!(w, "\n| |")?;
    for i in 0..runs.len() {
        write!(w, " [{}] |", i + 1)?;
        if i > 0 {
            write!(w, " {} |", tr(lang, "vs [1]"))?;
        }
    }
    write!(w, "\n| --- |")?;
    for i in 0..runs.len() {
        write!(w, " ---: |")?;
        if i > 0 {
            write!(w, " ---: |")?;
        }
    }
    writeln!(w)?;
    for row in rows(runs) {
        write!(w, "| {} |", tr(lang, row.label))?;
        for i in 0..runs.len() {
            write!(w, " {} |", cell(&row.shown[i]))?;
            if i > 0 {
                write!(w, " {} |", change(row.values[0], row.values[i]))?;
            }
        }
        writeln!(w)?;
    }
    writeln!(w, "\n**{}**\n", tr(lang, "Notes"))?;
    for c in caveats(runs, lang) {
        writeln!(w, "- {}", cell(&c))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::change;

    #[test]
    fn changes_are_signed_percentages_of_the_first() {
        assert_eq!(change(Some(100.0), Some(139.0)), "+39.0%");
        assert_eq!(change(Some(100.0), Some(96.0)), "−4.0%");
        assert_eq!(change(Some(100.0), Some(100.01)), "±0%");
        assert_eq!(change(Some(0.0), Some(0.0)), "±0%");
        assert_eq!(change(Some(0.0), Some(3.0)), "—");
        assert_eq!(change(None, Some(3.0)), "—");
    }
}
