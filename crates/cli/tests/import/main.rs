//! `yace import`, end to end: a curl command imported and the `yace run`
//! command it gives run as pasted into bash; a HAR capture imported,
//! validated, and replayed against a live copy of the shop it recorded;
//! access logs written by real nginx and Apache imported in each format,
//! and a timed replay's arrivals counted second by second (`logs`).

#[path = "../stacks/harness.rs"]
mod harness;
mod logs;
mod shop;
#[path = "../support/mod.rs"]
mod support;

use shop::Shop;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use support::{temp_path, u, yace};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn import(args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = yace();
    c.arg("import").args(args);
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("run yace import");
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Runs the imported command line as a user would: pasted into bash
/// (`yace` being the binary under test), with more flags after it.
fn run_pasted(command: &str, more: &str) -> Output {
    let script = format!(
        "yace() {{ \"$YACE_BIN\" \"$@\"; }}\n{} {more}\n",
        command.trim_end()
    );
    Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env("YACE_BIN", env!("CARGO_BIN_EXE_yace"))
        .env("YACE_LANG", "en")
        .output()
        .expect("run bash")
}

fn fixture() -> String {
    format!(
        "{}/../import/tests/fixtures/shop-login.har",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A browser's Copy as cURL for a JSON POST, with a line continuation,
/// an ANSI-C body, credentials and curl-only flags.
fn chrome_curl(base: &str) -> String {
    format!(
        "curl '{base}/echo?from=import' \\\n  -H 'accept: application/json' \\\n  \
         -H 'content-type: application/json' \\\n  -H 'X-Trace: imp-42' \\\n  \
         -b 'session=abc123' \\\n  -u alice:s3cret \\\n  -A 'Mozilla/5.0 (X11; Linux x86_64)' \\\n  \
         --data-raw $'{{\"sku\":\"A-100\",\"note\":\"it\\'s\"}}' \\\n  --compressed -s --max-time 5"
    )
}

const BODY: &str = r#"{"sku":"A-100","note":"it's"}"#;

#[test]
fn curl_import_runs_as_pasted_and_the_server_sees_the_request() {
    let shop = Shop::start();
    let out = import(&["curl", &chrome_curl(&shop.url())], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let command = text(&out.stdout);
    let err = text(&out.stderr);
    assert!(command.starts_with("yace run "), "{command}");
    assert!(
        err.contains("note: the output keeps the credentials"),
        "{err}"
    );
    assert!(
        err.contains("curl flag -s changes only curl's own output"),
        "{err}"
    );

    let result = temp_path("import-curl.json");
    let run = run_pasted(
        &command,
        &format!("-n 5 -c 1 -q --json {}", result.display()),
    );
    assert!(run.status.success(), "{command}\n{}", text(&run.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).expect("a JSON result");
    assert_eq!(u(&v, "summary.responses"), 5, "{v}");
    assert_eq!(u(&v, "statuses.200"), 5);

    let seen = shop.state.lock().unwrap().echoed.clone();
    assert!(seen.len() >= 5, "the server saw {} requests", seen.len());
    for r in &seen {
        assert_eq!(r.method, "POST");
        assert_eq!(r.target, "/echo?from=import");
        assert_eq!(text(&r.body), BODY);
        for (name, value) in [
            ("accept", "application/json"),
            ("content-type", "application/json"),
            ("x-trace", "imp-42"),
            ("cookie", "session=abc123"),
            ("authorization", "Basic YWxpY2U6czNjcmV0"),
            ("user-agent", "Mozilla/5.0 (X11; Linux x86_64)"),
            ("accept-encoding", "deflate, gzip, br, zstd"),
        ] {
            assert_eq!(r.header(name), Some(value), "{name} in {r:?}");
        }
    }
}

#[test]
fn curl_import_against_the_embedded_echo() {
    let server = serve::Server::start(serve::Config {
        threads: 1,
        ..Default::default()
    })
    .expect("start the embedded target");
    let base = format!("http://{}", server.local_addr());
    // From standard input, as pasted.
    let out = import(&["curl"], Some(&chrome_curl(&base)));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = temp_path("import-echo.json");
    let run = run_pasted(
        &text(&out.stdout),
        &format!("-n 5 -c 1 -q --json {}", result.display()),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(u(&v, "summary.responses"), 5);
    assert_eq!(u(&v, "statuses.200"), 5);
    // /echo answered each with the body it was sent.
    assert_eq!(u(&v, "summary.body_bytes"), 5 * BODY.len() as u64, "{v}");
    let stats = support::settled(&server);
    assert!(
        stats.by_route.get("/echo").copied().unwrap_or(0) >= 5,
        "{stats:?}"
    );
}

#[test]
fn curl_import_as_a_step_validates() {
    let out = import(
        &[
            "curl",
            "--step",
            "curl -X PUT 'http://127.0.0.1:9/api/items/7?x=1' -H 'Authorization: Bearer t0k' \
             --json '{\"a\":1}' -k",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let step = text(&out.stdout);
    assert!(
        step.contains("method = \"PUT\"\nurl = \"/api/items/7?x=1\""),
        "{step}"
    );
    let file = temp_path("import-step.toml");
    std::fs::write(&file, &step).unwrap();
    let dry = yace()
        .args(["run", "-f"])
        .arg(&file)
        .args(["http://127.0.0.1:9", "--dry-run"])
        .output()
        .unwrap();
    assert!(dry.status.success(), "{step}\n{}", text(&dry.stderr));
    let plan = text(&dry.stdout);
    assert!(plan.contains("\"PUT\""), "{plan}");
    // The dry run hides the credential the step keeps.
    assert!(!plan.contains("t0k"), "{plan}");

    // Already split by the shell: the words are curl's own.
    let out = import(
        &[
            "curl",
            "--step",
            "--yaml",
            "curl",
            "-d",
            "a=1",
            "http://h/x",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("step:\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn curl_import_errors_and_warnings_say_where() {
    let out = import(&["curl", "curl -X POST -H 'A: b http://h/"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: yace import curl: line 1, column 17: this ' (single quote) is never closed\n"
    );
    let out = import(&["curl", "curl -X POST"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("has no URL"),
        "{}",
        text(&out.stderr)
    );
    let out = import(&["curl", "curl -L --frobnicate http://h/"], None);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: curl flag -L is not imported: yace does not follow"),
        "{err}"
    );
    assert!(
        err.contains("warning: curl flag --frobnicate is not imported"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "yace run http://h/\n");
}

#[test]
fn har_import_validates_and_dry_runs() {
    for (flags, ext) in [(&[][..], "toml"), (&["--yaml"][..], "yaml")] {
        let out = import(&[&["har", &fixture()][..], flags].concat(), None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains("note: imported 9 of 17 requests"), "{err}");
        assert!(
            err.contains("{{csrf_token}}: handed out by step 1"),
            "{err}"
        );
        let file = temp_path(&format!("import-har.{ext}"));
        std::fs::write(&file, &out.stdout).unwrap();
        let dry = yace()
            .args(["run", "-f"])
            .arg(&file)
            .arg("--dry-run")
            .output()
            .unwrap();
        assert!(
            dry.status.success(),
            "{}\n{}",
            text(&out.stdout),
            text(&dry.stderr)
        );
        let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
        let steps = &plan["scenario"]["journeys"][0]["steps"];
        let names: Vec<&str> = steps
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "GET /login",
                "POST /login",
                "GET /account",
                "POST /api/session",
                "GET /api/me",
                "GET /api/orders/48213",
                "POST /api/cart",
                "POST /logout",
                "GET /login #2"
            ],
            "{ext}"
        );
        assert_eq!(steps[5]["url"], "/api/orders/{{id}}?limit=10&page=1");
        // Credentials are hidden in the dry run too.
        let shown = dry.stdout.clone();
        assert!(!text(&shown).contains("s3cret"), "{ext}");
    }
}

#[test]
fn har_import_replays_against_a_live_shop() {
    let out = import(&["har", &fixture(), "--max-think", "0s"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = temp_path("import-shop.toml");
    std::fs::write(&file, &out.stdout).unwrap();
    let shop = Shop::start();
    let result = temp_path("import-shop.json");
    // Two walks of the journey's 9 steps.
    let run = yace()
        .args(["run", "-f"])
        .arg(&file)
        .arg(shop.url())
        .args(["-n", "18", "-q", "--json"])
        .arg(&result)
        .output()
        .unwrap();
    let st = shop.state.lock().unwrap();
    assert!(
        run.status.success(),
        "{}\nrefused: {:#?}",
        text(&run.stderr),
        st.refused
    );
    assert!(st.refused.is_empty(), "{:#?}", st.refused);
    for what in [
        "login page",
        "login",
        "account",
        "api session",
        "api me",
        "api orders",
        "api cart",
        "logout",
    ] {
        assert!(
            st.ok.get(what).copied().unwrap_or(0) >= 2,
            "{what}: {:?}",
            st.ok
        );
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    for c in v["checks"].as_array().unwrap() {
        assert_eq!(c["failed"], 0, "{c}");
    }
}
