//! Secrets never reach an output: every output of runs that used each kind
//! of secret is searched for the secrets' values.

use crate::cli::{server, stderr, stdout, yace};
use std::path::Path;

/// One value per kind of secret; none may appear in any output.
const SECRETS: [&str; 8] = [
    "hunter2pw",     // URL userinfo password
    "SEKRETqueryT",  // ?access_token=
    "SEKRETbearer",  // Authorization
    "SEKRETcookie",  // Cookie
    "SEKRETapikey",  // X-Api-Key
    "SEKRETtenantH", // --redact-header X-Tenant
    "SEKRETtenantQ", // --redact-param tenant
    "SEKRETformpw",  // a scenario's form field `password`
];

fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} shows the secret {s}:\n{text}");
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn no_output_of_a_run_shows_a_secret() {
    let s = server();
    let dir = crate::cli::temp_path("secrets");
    std::fs::create_dir_all(&dir).unwrap();
    let port = s.local_addr().port();
    let url = format!(
        "http://ann:hunter2pw@127.0.0.1:{port}/?access_token=SEKRETqueryT&tenant=SEKRETtenantQ&page=2"
    );
    let headers = [
        "-H",
        "Authorization: Bearer SEKRETbearer",
        "-H",
        "Cookie: session=SEKRETcookie",
        "-H",
        "X-Api-Key: SEKRETapikey",
        "-H",
        "X-Tenant: SEKRETtenantH",
        "--redact-header",
        "X-Tenant",
        "--redact-param",
        "tenant",
    ];
    // yace run: summary, stderr, --json, --dry-run.
    let json = dir.join("run.json");
    let out = yace()
        .args(["run", &url, "-n", "20", "-c", "2", "--json"])
        .arg(&json)
        .args(headers)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean("yace run's summary", &stdout(&out));
    assert_clean("yace run's stderr", &stderr(&out));
    let result = read(&json);
    assert_clean("--json", &result);
    // The request sent was unchanged (the server answered it), and the
    // result says secrets were hidden.
    let r: serde_json::Value = serde_json::from_str(&result).unwrap();
    assert_eq!(r["summary"]["responses"], 20);
    assert_eq!(r["plan"]["secrets"]["shown"], false);
    let out = yace()
        .args(["run", &url, "-n", "20", "--dry-run"])
        .args(headers)
        .output()
        .unwrap();
    assert!(stdout(&out).contains("***"), "{}", stdout(&out));
    assert_clean("--dry-run", &stdout(&out));
    // Every yace report format.
    for format in ["text", "markdown", "csv", "json"] {
        let out = yace()
            .args(["report", json.to_str().unwrap(), "-F", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_clean(&format!("yace report -F {format}"), &stdout(&out));
    }
    // An error message (nothing listens on port 1).
    let out = yace()
        .args([
            "run",
            "http://ann:hunter2pw@127.0.0.1:1/?token=SEKRETqueryT",
            "-n",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_clean("an error", &stderr(&out));

    // yace ab: its report, -v 2's INFO line, -e, -g and --json.
    let (e, g, j) = (dir.join("ab.csv"), dir.join("ab.tsv"), dir.join("ab.json"));
    let out = yace()
        .args([
            "ab",
            "-n",
            "20",
            "-c",
            "2",
            "-v",
            "2",
            "-C",
            "session=SEKRETcookie",
        ])
        .args([
            "-H",
            "Authorization: Bearer SEKRETbearer",
            "-H",
            "X-Api-Key: SEKRETapikey",
        ])
        .args([
            "-H",
            "X-Tenant: SEKRETtenantH",
            "--redact-header",
            "X-Tenant",
        ])
        .args(["--redact-param", "tenant", "-e"])
        .arg(&e)
        .arg("-g")
        .arg(&g)
        .arg("--json")
        .arg(&j)
        .arg(&url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Document Path:"), "{}", stdout(&out));
    assert_clean("yace ab's report", &stdout(&out));
    assert_clean("yace ab's stderr", &stderr(&out));
    for p in [&e, &g, &j] {
        assert_clean(&p.display().to_string(), &read(p));
    }

    // A scenario's --dry-run: literal secret headers, variables and form
    // fields.
    let plan = dir.join("login.toml");
    std::fs::write(
        &plan,
        "[vars]\napi_token = \"SEKRETapikey\"\nuser = \"ann\"\n\n[[step]]\nname = \"login\"\n\
         method = \"POST\"\nurl = \"/echo?access_token=SEKRETqueryT\"\n\
         headers = { Authorization = \"Bearer SEKRETbearer\" }\n\
         form = { user = \"{{user}}\", password = \"SEKRETformpw\" }\n",
    )
    .unwrap();
    let out = yace()
        .args(["run", "-f", plan.to_str().unwrap(), &s.url(), "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"ann\""),
        "names that are not secret stay"
    );
    assert_clean("a scenario's --dry-run", &stdout(&out));

    // --show-secrets opts out, and the result records it.
    let out = yace()
        .args(["run", &url, "-n", "5", "--show-secrets", "--json"])
        .arg(&json)
        .args(headers)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let result = read(&json);
    assert!(result.contains("SEKRETbearer") && result.contains("hunter2pw"));
    let r: serde_json::Value = serde_json::from_str(&result).unwrap();
    assert_eq!(r["plan"]["secrets"]["shown"], true);
    s.shutdown();
}
