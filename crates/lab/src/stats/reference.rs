//! Test helpers: the reference values computed once by
//! `crates/lab/reference/make_reference.py` (SciPy, statsmodels, kneed).

use std::sync::OnceLock;

use serde_json::Value;

/// The parsed `reference.json`.
pub(crate) fn reference() -> &'static Value {
    static REF: OnceLock<Value> = OnceLock::new();
    REF.get_or_init(|| {
        serde_json::from_str(include_str!("../../reference/reference.json"))
            .expect("reference.json parses")
    })
}

/// The parsed `small.json` (`make_small.py`: the small-sample statistics).
pub(crate) fn small() -> &'static Value {
    static REF: OnceLock<Value> = OnceLock::new();
    REF.get_or_init(|| {
        serde_json::from_str(include_str!("../../reference/small.json")).expect("small.json parses")
    })
}

/// The floats of a JSON array.
pub(crate) fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// Asserts |got − want| ≤ rel·|want| (or ≤ rel when want is 0).
#[track_caller]
pub(crate) fn close(got: f64, want: f64, rel: f64, what: &str) {
    let tol = if want == 0.0 { rel } else { rel * want.abs() };
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:e}, want {want:e} (rel err {:e})",
        ((got - want) / want).abs()
    );
}

#[test]
fn reference_records_library_versions() {
    let v = &reference()["versions"];
    for lib in ["scipy", "numpy", "statsmodels", "kneed"] {
        assert!(v[lib].is_string(), "{lib} version recorded");
    }
}
