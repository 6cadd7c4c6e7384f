//! The JSON result is a published contract: the schema in the repository is
//! the one the code produces, and real output validates against it.

use std::path::PathBuf;

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema/result.schema.json")
}

fn published() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(schema_path()).expect("schema file")).unwrap()
}

#[test]
fn published_schema_matches_the_code() {
    let generated = stats::RunResult::json_schema();
    if std::env::var_os("YACE_UPDATE_SCHEMA").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(schema_path(), text).unwrap();
    }
    assert!(
        published() == generated,
        "docs/schema/result.schema.json is stale: run `YACE_UPDATE_SCHEMA=1 cargo test -p yace \
         published_schema` and review the diff"
    );
}

#[test]
fn real_results_validate_against_the_schema() {
    let s = crate::cli::server();
    let schema = jsonschema::JSONSchema::compile(&published()).expect("schema compiles");
    let closed = crate::cli::run_json("schema-closed", &[&s.url(), "-c", "4", "-n", "200"]).1;
    let open = crate::cli::run_json("schema-open", &[&s.url(), "--rate", "50", "-d", "1s"]).1;
    for r in [closed, open] {
        if let Err(errors) = schema.validate(&r) {
            let msgs: Vec<String> = errors
                .map(|e| format!("{} at {}", e, e.instance_path))
                .collect();
            panic!("result does not validate:\n{}", msgs.join("\n"));
        }
        let back: stats::RunResult = serde_json::from_value(r.clone()).expect("reads back");
        let hist = stats::hist::decode(&back.histograms.latency).expect("histogram decodes");
        assert_eq!(
            hist.len(),
            back.summary.responses,
            "the histogram holds every response"
        );
    }
    s.shutdown();
}

/// `histograms.intervals`: consecutive slices of the run, aligned to its
/// start, that hold every response of the run's latency histogram.
#[test]
fn latency_intervals_cover_the_run() {
    let s = crate::cli::server();
    let (_, r) = crate::cli::run_json("intervals", &[&s.url(), "-c", "2", "-d", "12s"]);
    s.shutdown();
    let r: stats::RunResult = serde_json::from_value(r).expect("reads back");
    let intervals = &r.histograms.intervals;
    let starts: Vec<f64> = intervals.iter().map(|i| i.start_s).collect();
    assert_eq!(starts, [0.0, 5.0, 10.0], "{intervals:#?}");
    let length: f64 = intervals.iter().map(|i| i.length_s).sum();
    let duration = r.summary.duration_s;
    let rows: f64 = r.series.iter().map(|row| row.length_s).sum();
    assert!(
        (length - duration).abs() < 1e-6,
        "{length} s of intervals in {duration} s"
    );
    assert!(
        (length - rows).abs() < 1e-9,
        "{length} s of intervals, {rows} s of rows"
    );
    assert!(intervals[..2]
        .iter()
        .all(|i| i.length_s == stats::INTERVAL_S as f64));
    let hists = lab::stats::decode_intervals(intervals).expect("intervals decode");
    let mut merged = stats::hist::new_coarse_hist();
    for h in &hists {
        assert!(
            !h.is_empty(),
            "every interval of a steady run has responses"
        );
        merged.add(h).unwrap();
    }
    let latency = stats::hist::decode(&r.histograms.latency).unwrap();
    assert_eq!(
        merged.len(),
        latency.len(),
        "the intervals hold every response"
    );
    assert_eq!(latency.len(), r.summary.responses);
    // Three intervals are too few for a block bootstrap.
    assert_eq!(
        lab::stats::block_bootstrap_quantile_ci(&hists, 0.99, 0.95, 100, 1),
        None
    );
}
