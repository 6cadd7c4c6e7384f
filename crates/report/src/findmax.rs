//! A `yace find-max --json` answer (`yace.find-max.v1`) rendered again:
//! every trial (its rate, length, figures and verdict) as a table in text
//! and Markdown, and as a chart of latency against rate with the SLO line
//! in HTML ([`crate::html::search_page`]).

use crate::fmt::count;
use crate::lang::{tr, trf, Lang};
use serde::Deserialize;
use std::io::{self, Write};

/// The schema tag of a find-max answer.
pub const SCHEMA: &str = "yace.find-max.v1";

#[derive(Debug, Clone, Deserialize)]
pub struct Search {
    pub url: String,
    pub slos: Vec<String>,
    pub answer: Answer,
    #[serde(default)]
    pub recommended: Option<[f64; 2]>,
    #[serde(default)]
    pub figures: Vec<Figures>,
    #[serde(default)]
    pub slo_bounds: Vec<SloBound>,
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub yace_version: Option<String>,
    /// `--frontier`: one search per level (the first is the one above).
    #[serde(default)]
    pub frontier: Vec<FrontierLevel>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FrontierLevel {
    pub slos: Vec<String>,
    pub answer: Answer,
}

/// The frontier's rows: each level's last SLO and its answer.
pub(crate) fn frontier_rows(s: &Search, lang: Lang) -> Vec<(String, String)> {
    s.frontier
        .iter()
        .map(|l| {
            let level = l.slos.last().cloned().unwrap_or_default();
            let answer = match (l.answer.max_rate, l.answer.failed_at) {
                (Some(m), Some(h)) => trf(
                    lang,
                    "{}/s (bracket {}–{})",
                    &[&rate(m), &rate(m), &rate(h)],
                ),
                (Some(m), None) => trf(lang, "at least {}/s", &[&rate(m)]),
                (None, _) => "—".to_string(),
            };
            (level, answer)
        })
        .collect()
}

#[derive(Debug, Clone, Deserialize)]
pub struct Answer {
    pub end: String,
    pub max_rate: Option<f64>,
    pub failed_at: Option<f64>,
    pub trials: Vec<Trial>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Trial {
    pub rate: f64,
    pub seconds: f64,
    pub stage: String,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Verdict {
    pub verdict: String,
    #[serde(default)]
    pub marginal: bool,
    #[serde(default)]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Figures {
    pub rate: f64,
    pub responses_per_s: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub errors_pct: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SloBound {
    pub expr: String,
    pub bound: f64,
    pub latency: bool,
}

/// Reads an answer, checking its schema tag.
pub fn read(text: &str) -> Result<Search, String> {
    if crate::json::schema(text)?.as_deref() != Some(SCHEMA) {
        return Err(format!("not a {SCHEMA} document"));
    }
    serde_json::from_str(text).map_err(|e| format!("does not match {SCHEMA}: {e}"))
}

/// True when `text` is a find-max answer (by its schema tag).
pub fn is_search(text: &str) -> bool {
    crate::json::schema(text).is_ok_and(|s| s.as_deref() == Some(SCHEMA))
}

pub(crate) fn rate(r: f64) -> String {
    if r >= 100.0 {
        count(r.round() as u64)
    } else {
        format!("{r}")
    }
}

/// The verdict in a word or two.
pub(crate) fn verdict_word(t: &Trial, lang: Lang) -> String {
    match &t.verdict {
        Some(v) if v.verdict == "pass" && v.marginal => tr(lang, "pass (close to an SLO)").into(),
        Some(v) if v.verdict == "pass" => tr(lang, "pass").into(),
        Some(v) if v.verdict == "fail" => format!(
            "{}: {}",
            tr(lang, "FAIL"),
            v.why.as_deref().unwrap_or_default()
        ),
        Some(v) => format!(
            "{}: {}",
            tr(lang, "NOT VALID"),
            v.why.as_deref().unwrap_or_default()
        ),
        None => "—".into(),
    }
}

/// The answer in one or two sentences.
pub(crate) fn conclusion(s: &Search, lang: Lang) -> Vec<String> {
    let a = &s.answer;
    let mut out = Vec::new();
    match a.max_rate {
        Some(max) => {
            let mut line = trf(lang, "Max rate under the SLOs: {}/s", &[&rate(max)]);
            if let Some(hi) = a.failed_at {
                line.push_str(&trf(
                    lang,
                    ", between {} and {} (which failed)",
                    &[&rate(max), &rate(hi)],
                ));
            }
            line.push_str(match a.end.as_str() {
                "max_rate" => tr(
                    lang,
                    " — at least: the SLOs still held at the highest rate searched",
                ),
                "out_of_trials" => tr(
                    lang,
                    " — not confirmed: the search ran out of time or trials",
                ),
                "interrupted" => tr(
                    lang,
                    " — interrupted before the search ended: not confirmed",
                ),
                _ => "",
            });
            line.push('.');
            out.push(line);
            if let Some([lo, hi]) = s.recommended {
                out.push(trf(
                    lang,
                    "Recommended operating rate: {}–{}/s (70–80% of it).",
                    &[&rate(lo), &rate(hi)],
                ));
            }
        }
        None => out.push(
            tr(
                lang,
                match a.end.as_str() {
                    "client_bound" => "Stopped: the client, not the server, was the limit.",
                    _ => "No rate held the SLOs.",
                },
            )
            .into(),
        ),
    }
    out
}

fn ms(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| crate::fmt::duration_us(v * 1000.0))
}

/// One trial's row, as every renderer shows it: #, stage, rate, length,
/// responses/s, p50, p99, errors, verdict.
pub(crate) struct Row {
    pub cells: [String; 9],
    pub passed: bool,
}

pub(crate) fn rows(s: &Search, lang: Lang) -> Vec<Row> {
    s.answer
        .trials
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let f = s.figures.get(i);
            Row {
                cells: [
                    (i + 1).to_string(),
                    tr(
                        lang,
                        match t.stage.as_str() {
                            "bracket" => "bracket",
                            "bisect" => "bisect",
                            "repeat" => "repeat",
                            "recheck" => "recheck",
                            "confirm" => "confirm",
                            _ => "?",
                        },
                    )
                    .to_string(),
                    rate(t.rate),
                    format!("{} s", t.seconds),
                    f.map_or("—".into(), |f| format!("{:.1}", f.responses_per_s)),
                    ms(f.and_then(|f| f.p50_ms)),
                    ms(f.and_then(|f| f.p99_ms)),
                    f.map_or("—".into(), |f| format!("{:.2}%", f.errors_pct)),
                    verdict_word(t, lang),
                ],
                passed: t.verdict.as_ref().is_some_and(|v| v.verdict == "pass"),
            }
        })
        .collect()
}

/// The search as terminal text.
pub fn text(s: &Search, mut w: impl Write, lang: Lang) -> io::Result<()> {
    writeln!(
        w,
        "{}",
        trf(
            lang,
            "find-max {} — SLOs: {}",
            &[&s.url, &s.slos.join(" & ")]
        )
    )?;
    if let Some(at) = &s.started_at {
        writeln!(w, "  {}", trf(lang, "started {}", &[at]))?;
    }
    // Column widths in terminal columns: a CJK character takes two.
    const WIDTHS: [usize; 8] = [2, 8, 10, 6, 13, 10, 10, 8];
    let fit = |i: usize, c: &str| {
        let gap = " ".repeat(WIDTHS[i].saturating_sub(crate::fmt::width(c)));
        if i == 1 {
            format!("{c}{gap}")
        } else {
            format!("{gap}{c}")
        }
    };
    let line = |cells: [&str; 9]| {
        let mut out = String::from(" ");
        for (i, c) in cells[..8].iter().enumerate() {
            out.push_str(if i == 1 { "  " } else { " " });
            out.push_str(&fit(i, c));
        }
        format!("{out}   {}", cells[8])
    };
    writeln!(w)?;
    writeln!(
        w,
        "{}",
        line([
            "#",
            tr(lang, "stage"),
            tr(lang, "rate/s"),
            tr(lang, "for"),
            tr(lang, "responses/s"),
            "p50",
            "p99",
            tr(lang, "errors"),
            tr(lang, "verdict"),
        ])
    )?;
    for row in rows(s, lang) {
        let c = &row.cells;
        writeln!(
            w,
            "{}",
            line([&c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8]])
        )?;
    }
    writeln!(w)?;
    for line in conclusion(s, lang) {
        writeln!(w, "{line}")?;
    }
    let front = frontier_rows(s, lang);
    if !front.is_empty() {
        writeln!(
            w,
            "\n{}",
            tr(
                lang,
                "Frontier (the highest rate at which each level holds):"
            )
        )?;
        for (level, answer) in front {
            writeln!(w, "  {level:<28} {answer}")?;
        }
    }
    Ok(())
}

/// The search as Markdown.
pub fn markdown(s: &Search, mut w: impl Write, lang: Lang) -> io::Result<()> {
    let cell = |x: &str| x.replace('|', "\\|");
    writeln!(
        w,
        "# {}\n",
        trf(
            lang,
            "find-max {} — SLOs: {}",
            &[&cell(&s.url), &cell(&s.slos.join(" & "))]
        )
    )?;
    for line in conclusion(s, lang) {
        writeln!(w, "**{}**\n", cell(&line))?;
    }
    writeln!(
        w,
        "| # | {} | {} | {} | {} | p50 | p99 | {} | {} |",
        tr(lang, "stage"),
        tr(lang, "rate/s"),
        tr(lang, "for"),
        tr(lang, "responses/s"),
        tr(lang, "errors"),
        tr(lang, "verdict")
    )?;
    writeln!(
        w,
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    )?;
    for row in rows(s, lang) {
        let cells: Vec<String> = row.cells.iter().map(|c| cell(c)).collect();
        writeln!(w, "| {} |", cells.join(" | "))?;
    }
    let front = frontier_rows(s, lang);
    if !front.is_empty() {
        writeln!(
            w,
            "\n## {}\n\n| SLO | {} |\n| --- | ---: |",
            tr(lang, "Frontier"),
            tr(lang, "max rate")
        )?;
        for (level, answer) in front {
            writeln!(w, "| `{}` | {} |", cell(&level), cell(&answer))?;
        }
    }
    Ok(())
}
