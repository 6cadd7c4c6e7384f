//! A run as JUnit XML, for CI systems: thresholds, scenario checks and the
//! run's validity as test cases (the Apache Ant schema every CI reads;
//! tests validate against it). Three suites, so a CI can tell a breached
//! threshold from a failed check from a measurement that is not valid:
//!
//! - `thresholds`: one case per threshold, failed when breached;
//! - `checks`: one case per scenario check, failed when any request failed
//!   it, skipped when it never ran;
//! - `validity`: "run completed" (failed when interrupted) and one failed
//!   case per validity warning (client saturated, shortfall, …).

use crate::fmt::{count, markup as esc};
use crate::text::{end, model};
use stats::RunResult;
use std::io::{self, Write};

/// One test case.
struct Case {
    name: String,
    classname: &'static str,
    /// (type, message) of a failure.
    failure: Option<(&'static str, String)>,
    skipped: Option<String>,
}

/// Writes the report.
pub fn report(r: &RunResult, mut w: impl Write) -> io::Result<()> {
    let thresholds: Vec<Case> = r
        .thresholds
        .iter()
        .map(|t| {
            let scope = t
                .step
                .as_ref()
                .map(|s| format!(" (step {s})"))
                .unwrap_or_default();
            let actual = crate::actual(t.actual, stats::threshold::actual_unit(t));
            Case {
                name: format!("{}{scope}", t.expr),
                classname: "yace.thresholds",
                failure: (!t.passed).then(|| ("threshold", format!("breached: actual {actual}"))),
                skipped: None,
            }
        })
        .collect();
    let checks: Vec<Case> = r
        .checks
        .iter()
        .map(|c| {
            let total = c.passed + c.failed;
            Case {
                name: format!("{} · {}", c.step, c.name),
                classname: "yace.checks",
                failure: (c.failed > 0).then(|| {
                    (
                        "check",
                        format!("{} of {} failed", count(c.failed), count(total)),
                    )
                }),
                skipped: (total == 0).then(|| "not run".to_string()),
            }
        })
        .collect();
    let mut validity = vec![Case {
        name: "run completed".into(),
        classname: "yace.validity",
        failure: r.end.partial.then(|| {
            (
                "partial",
                format!("{}: the figures cover part of the run", end(r)),
            )
        }),
        skipped: None,
    }];
    validity.extend(r.warnings.iter().enumerate().map(|(i, warning)| Case {
        name: format!("warning {}: {}", i + 1, first_words(warning)),
        classname: "yace.validity",
        failure: Some(("warning", warning.clone())),
        skipped: None,
    }));

    let timestamp = r.started_at.trim_end_matches('Z');
    let hostname = if r.environment.hostname.is_empty() {
        "localhost"
    } else {
        &r.environment.hostname
    };
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(w, "<testsuites>")?;
    for (id, (name, cases)) in [
        ("thresholds", &thresholds),
        ("checks", &checks),
        ("validity", &validity),
    ]
    .into_iter()
    .enumerate()
    {
        let failures = cases.iter().filter(|c| c.failure.is_some()).count();
        let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
        writeln!(
            w,
            r#"  <testsuite package="yace" id="{id}" name="{name}" timestamp="{}" hostname="{}" tests="{}" failures="{failures}" errors="0" skipped="{skipped}" time="{:.3}">"#,
            esc(timestamp),
            esc(hostname),
            cases.len(),
            r.summary.duration_s
        )?;
        writeln!(w, "    <properties>")?;
        for (k, v) in [
            (
                "request",
                format!("{} {}", r.plan.request.method, r.plan.target.url),
            ),
            ("load", model(r)),
            ("end", end(r).to_string()),
            ("yace_version", r.yace_version.clone()),
        ] {
            writeln!(w, r#"      <property name="{k}" value="{}"/>"#, esc(&v))?;
        }
        writeln!(w, "    </properties>")?;
        for c in cases.iter() {
            write!(
                w,
                r#"    <testcase name="{}" classname="{}" time="0""#,
                esc(&c.name),
                c.classname
            )?;
            match (&c.failure, &c.skipped) {
                (Some((ty, msg)), _) => {
                    writeln!(w, ">")?;
                    writeln!(
                        w,
                        r#"      <failure type="{ty}" message="{}">{}</failure>"#,
                        esc(msg),
                        esc(msg)
                    )?;
                    writeln!(w, "    </testcase>")?;
                }
                (None, Some(why)) => {
                    writeln!(w, ">")?;
                    writeln!(w, r#"      <skipped message="{}"/>"#, esc(why))?;
                    writeln!(w, "    </testcase>")?;
                }
                (None, None) => writeln!(w, "/>")?,
            }
        }
        writeln!(w, "    <system-out/>")?;
        writeln!(w, "    <system-err/>")?;
        writeln!(w, "  </testsuite>")?;
    }
    writeln!(w, "</testsuites>")
}

/// A warning's first words, as a case name.
fn first_words(s: &str) -> String {
    let cut: String = s.split(':').next().unwrap_or(s).chars().take(60).collect();
    cut.trim().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_what_xml_cannot_carry() {
        assert_eq!(
            super::esc("p99<200ms & \"x\"\n\u{1}"),
            "p99&lt;200ms &amp; &quot;x&quot;&#10; "
        );
        assert_eq!(
            super::first_words("the load generator was saturated: its"),
            "the load generator was saturated"
        );
    }
}
