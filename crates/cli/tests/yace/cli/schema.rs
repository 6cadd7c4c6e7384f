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
