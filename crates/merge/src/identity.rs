//! What makes shards one run: the run id and the plan's hash.

use plan::Plan;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Longest run id accepted.
pub const MAX_RUN_ID: usize = 64;

/// `sha256:` + hex of the canonical JSON (keys sorted) of the redacted plan
/// without the fields that may differ per machine without changing the
/// load: `shard`, `threads`, `socket.bind` and `socket.sources` (each
/// machine or pod leaves from its own addresses). Secrets never reach it.
pub fn plan_hash(plan: &Plan) -> String {
    let mut v = serde_json::to_value(plan.redacted()).expect("a plan serializes");
    if let Value::Object(m) = &mut v {
        m.remove("shard");
        m.remove("threads");
        if let Some(Value::Object(s)) = m.get_mut("socket") {
            s.remove("bind");
            s.remove("sources");
        }
    }
    let mut text = String::new();
    canonical(&v, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    format!("sha256:{}", hex(&digest))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// JSON with object keys sorted, whatever order the map kept them in.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                canonical(&m[*k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Checks a run id: 1–64 of letters, digits, `.`, `_`, `-` (it travels in
/// framed log lines, file names and Kubernetes labels).
pub fn check_run_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > MAX_RUN_ID {
        return Err(format!("'{id}' must be 1 to {MAX_RUN_ID} characters long"));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "'{id}' holds '{c}': use letters, digits, '.', '_' and '-' (e.g. shop-2026-12-01)"
        ));
    }
    Ok(())
}

/// The run id of shards started without `--run-id`: the shard count and the
/// plan hash's first 12 hex digits, so shards of one plan agree.
pub fn default_run_id(count: u64, plan_hash: &str) -> String {
    let h = plan_hash.trim_start_matches("sha256:");
    format!("{count}-shards-{}", &h[..h.len().min(12)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::{Load, Shard, Stop, Target};

    fn plan() -> Plan {
        Plan {
            threads: 2,
            ..Plan::get(
                Target::parse("http://127.0.0.1/?token=abc").unwrap(),
                Load::Closed { connections: 4 },
                Stop {
                    requests: None,
                    duration: Some(std::time::Duration::from_secs(2)),
                },
            )
        }
    }

    #[test]
    fn the_hash_ignores_what_may_differ_per_machine() {
        let p = plan();
        let h = plan_hash(&p);
        assert!(h.starts_with("sha256:") && h.len() == 7 + 64, "{h}");
        let mut q = p.clone();
        q.threads = 16;
        q.shard = Some(Shard::new(2, 3).unwrap());
        q.socket.bind = Some("127.0.0.2".parse().unwrap());
        q.socket.sources = vec!["10.0.0.7".parse().unwrap(), "10.0.0.8".parse().unwrap()];
        assert_eq!(plan_hash(&q), h);
        let mut r = p.clone();
        r.load = Load::Closed { connections: 5 };
        assert_ne!(plan_hash(&r), h);
        // The secret is redacted before hashing: another token, same hash.
        let mut s = p.clone();
        s.target = Target::parse("http://127.0.0.1/?token=xyz").unwrap();
        assert_eq!(plan_hash(&s), h);
    }

    #[test]
    fn run_ids_are_checked() {
        assert!(check_run_id("shop-2026.12_01").is_ok());
        assert!(check_run_id("").is_err());
        assert!(check_run_id("a b").unwrap_err().contains("' '"));
        assert!(check_run_id(&"x".repeat(65)).is_err());
        assert_eq!(
            default_run_id(3, "sha256:0123456789abcdef"),
            "3-shards-0123456789ab"
        );
    }
}
