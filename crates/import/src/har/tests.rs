use super::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

const FIXTURE: &str = include_str!("../../tests/fixtures/shop-login.har");

/// The scenario crate accepts it (what `yace run -f` would load).
fn validate(text: &str, format: Format) -> scenario::Scenario {
    let f = match format {
        Format::Toml => scenario::Format::Toml,
        Format::Yaml => scenario::Format::Yaml,
    };
    scenario::parse(text, f, "imported", Path::new("."), &BTreeMap::new())
        .unwrap_or_else(|d| panic!("{text}\n{d}"))
}

fn import_ok(har: &str, opts: &HarOptions) -> Output {
    let out = import(har, opts).unwrap_or_else(|e| panic!("{e}"));
    validate(&out.text, opts.format);
    out
}

/// One HAR entry: a request at `at` seconds and its response.
#[allow(clippy::too_many_arguments)]
fn ent(
    at: f64,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    post: Option<(&str, &str)>,
    status: u16,
    resp_headers: &[(&str, &str)],
    mime: &str,
    body: &str,
) -> Value {
    let h = |hs: &[(&str, &str)]| -> Vec<Value> {
        hs.iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect()
    };
    let ms = (at * 1000.0).round() as u64;
    let mut req = json!({
        "method": method, "url": url, "httpVersion": "HTTP/1.1",
        "headers": h(headers), "queryString": [], "cookies": [],
        "headersSize": -1, "bodySize": 0,
    });
    if let Some((mime, text)) = post {
        req["postData"] = json!({"mimeType": mime, "text": text});
    }
    json!({
        "startedDateTime": format!("2024-05-14T10:00:{:02}.{:03}Z", ms / 1000, ms % 1000),
        "time": 20.0,
        "request": req,
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1",
            "headers": h(resp_headers), "cookies": [],
            "content": {"size": body.len(), "mimeType": mime, "text": body},
            "redirectURL": "", "headersSize": -1, "bodySize": body.len(),
        },
        "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 10},
    })
}

fn har(entries: Vec<Value>) -> String {
    json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}})
        .to_string()
}

#[test]
fn the_recorded_login_flow() {
    let out = import_ok(FIXTURE, &HarOptions::default());
    let t = &out.text;
    // One journey to the first page's host; assets and the other hosts out.
    assert!(t.contains("base = \"https://shop.example.test\"\n"), "{t}");
    assert_eq!(t.matches("[[step]]").count(), 9, "{t}");
    assert!(!t.contains("/static/"), "{t}");
    assert!(!t.contains("google-analytics"), "{t}");
    assert!(out.notes[0].starts_with(
        "imported 9 of 17 requests, to https://shop.example.test, as steps; left out: 6 static \
         assets"
    ));
    assert!(
        out.notes[0].contains("1 to other hosts (www.google-analytics.com 1;"),
        "{:?}",
        out.notes
    );
    assert!(
        out.notes[0].contains("1 that got no response"),
        "{:?}",
        out.notes
    );
    // The hidden input's CSRF token, sent back in the login form.
    assert!(t.contains(
        r#"extract = [{ var = "csrf_token", regex = '<input\b[^>]*?\bname\s*=\s*"csrf_token"[^>]*?\bvalue\s*=\s*"([^"]*)"' }]"#
    ), "{t}");
    assert!(t.contains(
        r#"form = { csrf_token = "{{csrf_token}}", email = "alice@example.test", password = "{{password}}" }"#
    ), "{t}");
    // The account page's <meta name="csrf-token">, sent as a header and a form field.
    assert!(
        t.contains(
            r#"regex = '<meta\b[^>]*?\bname\s*=\s*"csrf\-token"[^>]*?\bcontent\s*=\s*"([^"]*)"'"#
        ),
        "{t}"
    );
    assert_eq!(
        t.matches("x-csrf-token = \"{{csrf_token_2}}\"").count(),
        2,
        "{t}"
    );
    assert!(
        t.contains("form = { csrf_token = \"{{csrf_token_2}}\" }"),
        "{t}"
    );
    // The JSON token, as a bearer token; the user's id and cart, from /api/me.
    assert!(
        t.contains("extract = [{ var = \"token\", json = '$.token' }]"),
        "{t}"
    );
    assert_eq!(
        t.matches("authorization = \"Bearer {{token}}\"").count(),
        3,
        "{t}"
    );
    assert!(
        t.contains("  { var = \"id\", json = '$.id' },\n  { var = \"cart\", json = '$.cart' },"),
        "{t}"
    );
    assert!(
        t.contains("url = \"/api/orders/{{id}}?limit=10&page=1\""),
        "{t}"
    );
    // A number in a JSON body: written raw, so it stays a number.
    assert!(
        t.contains(
            r#"body = "{\"cart\":\"{{cart}}\",\"sku\":\"A-100\",\"qty\":1,\"user_id\":{{id}}}""#
        ),
        "{t}"
    );
    assert!(
        t.contains("json = { client = \"web\", remember = true }"),
        "{t}"
    );
    // Cookies: the session's to the jar, the others (and the password) in [vars].
    assert!(
        t.contains(
            "[vars]\ncookie = \"_ga=GA1.1.1780235514.1715679000\"\npassword = \"s3cret!pw\"\n"
        ),
        "{t}"
    );
    assert!(!t.contains("sid="), "{t}");
    assert!(t.contains("cookie = \"{{cookie}}\""), "{t}");
    assert!(out
        .notes
        .iter()
        .any(|n| n.contains("(sid) are left to each user's cookie jar")));
    // Browser noise and hop-by-hop headers out, the rest kept; common ones on top.
    assert!(
        !t.contains("sec-ch-ua") && !t.contains(":authority") && !t.contains("priority"),
        "{t}"
    );
    assert!(
        t.contains("[headers]\naccept-language = \"en-US,en;q=0.9\"\nuser-agent = "),
        "{t}"
    );
    assert!(t.contains("origin = \"https://shop.example.test\""), "{t}");
    // Steps whose body is read ask for it uncompressed.
    let first =
        &t[t.find("name = \"GET /login\"").unwrap()..t.find("name = \"POST /login\"").unwrap()];
    assert!(!first.contains("accept-encoding"), "{first}");
    assert!(
        t.contains("Accept-Encoding left out: the extracts read the body"),
        "{t}"
    );
    // Think times from the gaps; none after a redirect or a quick call.
    let thinks: Vec<&str> = t.lines().filter(|l| l.starts_with("think = ")).collect();
    assert_eq!(
        thinks,
        [
            "think = \"6s 600ms\"",
            "think = \"400ms\"",
            "think = \"2s 500ms\"",
            "think = \"4s 300ms\"",
            "think = \"4s 200ms\""
        ]
    );
    // Checks from the recorded statuses; unique step names.
    assert!(t.contains("check = [{ status = 302 }]") && t.contains("check = [{ status = 201 }]"));
    assert!(t.contains("name = \"GET /login #2\""), "{t}");
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn the_same_in_yaml() {
    let out = import_ok(
        FIXTURE,
        &HarOptions {
            format: Format::Yaml,
            ..Default::default()
        },
    );
    let s = validate(&out.text, Format::Yaml);
    assert_eq!(s.steps().len(), 9);
    let toml = validate(
        &import_ok(FIXTURE, &HarOptions::default()).text,
        Format::Toml,
    );
    // Both spell the same scenario.
    assert_eq!(s.to_json()["journeys"], toml.to_json()["journeys"]);
}

#[test]
fn options() {
    let keep = import_ok(
        FIXTURE,
        &HarOptions {
            keep_assets: true,
            ..Default::default()
        },
    );
    assert_eq!(keep.text.matches("[[step]]").count(), 14, "{}", keep.text);
    assert!(keep.text.contains("url = \"/static/logo.png\""));
    let all = import_ok(
        FIXTURE,
        &HarOptions {
            all_hosts: true,
            ..Default::default()
        },
    );
    assert_eq!(all.text.matches("\n[[step]]").count(), 9);
    assert!(
        all.text
            .contains("# [[step]]\n# name = \"POST /g/collect\""),
        "{}",
        all.text
    );
    assert!(all.text.contains("another host, not part of this run"));
    let font = import_ok(
        FIXTURE,
        &HarOptions {
            host: Some("https://fonts.cdn-example.test/".into()),
            keep_assets: true,
            ..Default::default()
        },
    );
    assert!(
        font.text
            .contains("base = \"https://fonts.cdn-example.test\""),
        "{}",
        font.text
    );
    let e = import(
        FIXTURE,
        &HarOptions {
            host: Some("nowhere.test".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("its hosts are ads.tracker-example.test, fonts.cdn-example.test, shop.example.test, www.google-analytics.com"), "{e}");
    let capped = import_ok(
        FIXTURE,
        &HarOptions {
            max_think_ms: 3000,
            ..Default::default()
        },
    );
    assert!(capped.text.contains("think = \"3s\""));
    assert!(
        capped
            .notes
            .iter()
            .any(|n| n.contains("cut to it, after steps 1 (6s 600ms), 6 (4s 300ms), 7 (4s 200ms)")),
        "{:?}",
        capped.notes
    );
    let none = import_ok(
        FIXTURE,
        &HarOptions {
            max_think_ms: 0,
            ..Default::default()
        },
    );
    assert!(!none.text.contains("think ="));
}

#[test]
fn a_redirect_to_a_new_resource() {
    let h = har(vec![
        ent(
            0.0,
            "GET",
            "http://app.test/",
            &[],
            None,
            200,
            &[],
            "text/html",
            "<p>hi</p>",
        ),
        ent(
            1.0,
            "POST",
            "http://app.test/orders",
            &[],
            Some(("application/json", "{\"sku\":\"x\"}")),
            303,
            &[("Location", "http://app.test/orders/9f8e7d6c5b4a")],
            "",
            "",
        ),
        ent(
            1.05,
            "GET",
            "http://app.test/orders/9f8e7d6c5b4a",
            &[],
            None,
            200,
            &[],
            "text/html",
            "<p>order</p>",
        ),
    ]);
    let out = import_ok(&h, &HarOptions::default());
    assert!(
        out.text
            .contains("extract = [{ var = \"next\", header = 'Location' }]"),
        "{}",
        out.text
    );
    assert!(out.text.contains("url = \"{{next}}\""), "{}", out.text);
}

#[test]
fn cookies_and_headers_read_by_script() {
    // A double-submit CSRF cookie (XSRF-TOKEN, copied into a header by the
    // page's script), and a token in a response header.
    let h = har(vec![
        ent(
            0.0,
            "GET",
            "http://app.test/",
            &[],
            None,
            200,
            &[
                ("Set-Cookie", "XSRF-TOKEN=q1w2e3r4t5y6; Path=/"),
                ("X-Request-Token", "rt-8d7c6b5a4"),
            ],
            "text/html",
            "<p>hi</p>",
        ),
        ent(
            2.0,
            "POST",
            "http://app.test/api/save",
            &[
                ("X-XSRF-TOKEN", "q1w2e3r4t5y6"),
                ("X-Request-Token", "rt-8d7c6b5a4"),
                ("Cookie", "XSRF-TOKEN=q1w2e3r4t5y6"),
            ],
            Some(("text/plain", "hello")),
            200,
            &[],
            "text/plain",
            "ok",
        ),
    ]);
    let out = import_ok(&h, &HarOptions::default());
    let t = &out.text;
    assert!(
        t.contains("{ var = \"xsrf_token\", cookie = 'XSRF-TOKEN' }"),
        "{t}"
    );
    assert!(
        t.contains("{ var = \"x_request_token\", header = 'X-Request-Token' }"),
        "{t}"
    );
    assert!(t.contains("X-XSRF-TOKEN = \"{{xsrf_token}}\""), "{t}");
    // The cookie itself is the jar's.
    assert!(!t.contains("Cookie ="), "{t}");
    assert!(!t.contains("[vars]"), "{t}");
    assert!(out
        .notes
        .iter()
        .any(|n| n.contains("(XSRF-TOKEN) are left to each user's cookie jar")));
}

#[test]
fn a_token_in_a_script_and_values_the_user_typed() {
    let page = "<html><script>\nwindow.__token = \"k8s9d8f7g6h5\";\n</script>\
                <p>Results for laptop2024x</p></html>";
    let h = har(vec![
        ent(
            0.0,
            "GET",
            "http://app.test/search?q=laptop2024x",
            &[],
            None,
            200,
            &[],
            "text/html",
            page,
        ),
        ent(
            3.0,
            "GET",
            "http://app.test/api/more?q=laptop2024x&page=2",
            &[("X-Token", "k8s9d8f7g6h5")],
            None,
            200,
            &[],
            "application/json",
            "{\"items\":[]}",
        ),
    ]);
    let out = import_ok(&h, &HarOptions::default());
    let t = &out.text;
    assert!(
        t.contains("extract = [{ var = \"token\", regex = '__token = \"([A-Za-z0-9]+)' }]"),
        "{t}"
    );
    assert!(t.contains("X-Token = \"{{token}}\""), "{t}");
    // The search term came from the user (the first request), not the server.
    assert!(
        t.contains("url = \"/api/more?q=laptop2024x&page=2\""),
        "{t}"
    );
}

#[test]
fn bodies_kept_as_sent() {
    let h = har(vec![
        ent(
            0.0,
            "POST",
            "http://app.test/a",
            &[("Content-Type", "application/json")],
            Some(("application/json", "{\"a\": null, \"b\": [1, 2]}")),
            200,
            &[],
            "text/plain",
            "ok",
        ),
        ent(
            1.0,
            "POST",
            "http://app.test/b",
            &[],
            Some(("application/x-www-form-urlencoded", "tag=a&tag=b&q=x+y")),
            200,
            &[],
            "text/plain",
            "ok",
        ),
        ent(
            2.0,
            "POST",
            "http://app.test/c",
            &[],
            Some(("application/x-www-form-urlencoded", "q=x+y%26z&n=")),
            200,
            &[],
            "text/plain",
            "ok",
        ),
        ent(
            3.0,
            "PUT",
            "http://app.test/d",
            &[],
            Some((
                "multipart/form-data; boundary=XyZ",
                "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n--XyZ--\r\n",
            )),
            204,
            &[],
            "",
            "",
        ),
    ]);
    let out = import_ok(&h, &HarOptions::default());
    let t = &out.text;
    // TOML has no null: the JSON is sent as recorded.
    assert!(
        t.contains(r#"body = "{\"a\": null, \"b\": [1, 2]}""#),
        "{t}"
    );
    // A form with a field twice is sent as recorded; others as forms.
    assert!(t.contains("body = \"tag=a&tag=b&q=x+y\""), "{t}");
    assert!(t.contains("form = { q = \"x y&z\", n = \"\" }"), "{t}");
    assert!(t.contains("body = \"--XyZ\\r\\nContent-Disposition: form-data; name=\\\"f\\\"\\r\\n\\r\\nv\\r\\n--XyZ--\\r\\n\""), "{t}");
    assert!(t.contains("method = \"PUT\""));
}

#[test]
fn what_a_scenario_cannot_say() {
    let h = har(vec![
        ent(
            0.0,
            "GET",
            "http://app.test/",
            &[],
            None,
            200,
            &[],
            "text/html",
            "x",
        ),
        ent(
            1.0,
            "POST",
            "http://app.test/t",
            &[],
            Some(("text/plain", "Hello {{name}}")),
            200,
            &[],
            "text/plain",
            "ok",
        ),
    ]);
    let out = import_ok(&h, &HarOptions::default());
    assert!(
        out.warnings[0].contains("request 2 (POST /t) holds '{{'"),
        "{:?}",
        out.warnings
    );
    assert_eq!(out.text.matches("\n[[step]]").count(), 1, "{}", out.text);
    assert!(
        out.notes.iter().any(|n| n.contains("sanitized export")),
        "{:?}",
        out.notes
    );
}

#[test]
fn errors() {
    let e = import("{\"log\": [1,", &HarOptions::default()).unwrap_err();
    assert_eq!((e.line, e.column), (Some(1), Some(11)), "{e}");
    assert!(
        e.message
            .starts_with("this is not a HAR file: it is not JSON"),
        "{e}"
    );
    let e = import("{\"log\": {}}", &HarOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no log.entries"), "{e}");
    let e = import(&har(vec![]), &HarOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no requests"), "{e}");
    let ws = har(vec![ent(
        0.0,
        "GET",
        "wss://app.test/live",
        &[],
        None,
        101,
        &[],
        "",
        "",
    )]);
    let e = import(&ws, &HarOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("no http:// or https:// request"),
        "{e}"
    );
    let only_assets = har(vec![ent(
        0.0,
        "GET",
        "http://app.test/a.png",
        &[],
        None,
        200,
        &[],
        "image/png",
        "",
    )]);
    let e = import(&only_assets, &HarOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("nothing to import: no request to app.test is left (1 static asset"),
        "{e}"
    );
}
