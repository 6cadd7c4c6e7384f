use super::*;
use crate::{curl, curl_args, CurlOutput};

/// The `yace run` arguments the import writes, read back as bash would.
fn argv(cmd: &str) -> Vec<String> {
    let out = curl(cmd, CurlOutput::Run).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    let (words, warnings) = shell::split(&out.text).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    words.into_iter().map(|w| w.text).collect()
}

fn req(cmd: &str) -> (Request, Vec<String>, Vec<String>) {
    parse_text(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

const CHROME: &str = r#"curl 'https://shop.example.test/api/cart?x=1' \
  -H 'accept: application/json, text/plain, */*' \
  -H 'accept-language: en-US,en;q=0.9' \
  -H 'content-type: application/json' \
  -b 'sid=Yw3kP9; _ga=GA1.1.1234.5678' \
  -H 'origin: https://shop.example.test' \
  -H 'priority: u=1, i' \
  -H 'sec-ch-ua: "Chromium";v="124", "Not-A.Brand";v="99"' \
  -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' \
  --data-raw $'{"sku":"A-100","note":"it\'s \\"gift\\"\\n"}'"#;

#[test]
fn chrome_copy_as_curl() {
    let a = argv(CHROME);
    assert_eq!(
        a,
        [
            "yace",
            "run",
            "https://shop.example.test/api/cart?x=1",
            "-m",
            "POST",
            "-H",
            "accept: application/json, text/plain, */*",
            "-H",
            "accept-language: en-US,en;q=0.9",
            "-H",
            "content-type: application/json",
            "-H",
            "origin: https://shop.example.test",
            "-H",
            "priority: u=1, i",
            "-H",
            r#"sec-ch-ua: "Chromium";v="124", "Not-A.Brand";v="99""#,
            "-H",
            "user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
            "-H",
            "Cookie: sid=Yw3kP9; _ga=GA1.1.1234.5678",
            "--body",
            "{\"sku\":\"A-100\",\"note\":\"it's \\\"gift\\\"\\n\"}",
        ]
    );
    let out = curl(CHROME, CurlOutput::Run).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("credentials") && n.contains("Cookie")),
        "{:?}",
        out.notes
    );
    // One flag a line, continued with backslashes: ready to paste.
    assert!(out
        .text
        .starts_with("yace run 'https://shop.example.test/api/cart?x=1'"));
    assert!(
        out.text.contains(" \\\n  -m POST \\\n  -H 'accept: "),
        "{}",
        out.text
    );
}

#[test]
fn firefox_copy_as_curl() {
    let cmd = "curl 'https://shop.example.test/login' -X POST -H 'User-Agent: Mozilla/5.0 (X11; \
               Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' -H 'Accept: text/html' \
               -H 'Accept-Encoding: gzip, deflate, br' -H 'Content-Type: \
               application/x-www-form-urlencoded' -H 'Connection: keep-alive' -H 'Cookie: \
               sid=abc' --data-raw 'csrf_token=f3a9&username=alice&password=s3cret'";
    let (r, w, _) = req(cmd);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(r.method, "POST");
    assert_eq!(
        r.body,
        Body::Text("csrf_token=f3a9&username=alice&password=s3cret".into())
    );
    assert_eq!(r.headers.len(), 6);
    let types = r
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    assert_eq!(types.count(), 1, "{:?}", r.headers);
}

#[test]
fn methods() {
    assert_eq!(req("curl http://h/").0.method, "GET");
    assert_eq!(req("curl -d a=1 http://h/").0.method, "POST");
    assert_eq!(req("curl -XPUT -d a=1 http://h/").0.method, "PUT");
    assert_eq!(req("curl --request DELETE http://h/").0.method, "DELETE");
    assert_eq!(req("curl -I http://h/").0.method, "HEAD");
    assert_eq!(req("curl --head http://h/").0.method, "HEAD");
    assert_eq!(req("curl -G -d a=1 http://h/").0.method, "GET");
    let (r, _, _) = req("curl -T up.bin http://h/u");
    assert_eq!(
        (r.method.as_str(), &r.body),
        ("PUT", &Body::File("up.bin".into()))
    );
    let (r, _, _) = req("curl -F a=1 http://h/");
    assert_eq!(r.method, "POST");
}

#[test]
fn headers_and_header_flags() {
    let (r, w, n) = req(
        "curl -H 'X-A: 1' -H 'X-Empty;' -H 'Accept:' -A 'agent/1' -e http://ref/ \
         --referer ';auto' -r 0-99 http://h/",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(
        r.headers,
        [
            ("X-A".into(), "1".into()),
            ("X-Empty".into(), String::new()),
            ("User-Agent".into(), "agent/1".into()),
            ("Referer".into(), "http://ref/".into()),
            ("Range".into(), "bytes=0-99".into()),
        ]
    );
    assert!(
        n.iter()
            .any(|n| n.contains("-H 'Accept:'") && n.contains("*/*")),
        "{n:?}"
    );
    // -H wins over -A, as in curl.
    let (r, _, _) = req("curl -A a -H 'User-Agent: b' http://h/");
    assert_eq!(r.headers, [("User-Agent".into(), "b".into())]);
    // Headers yace writes itself are left out, with a note.
    let (r, _, n) = req("curl -H 'Content-Length: 3' -d abc http://h/");
    assert!(!r.headers.iter().any(|(h, _)| h == "Content-Length"));
    assert!(n.iter().any(|n| n.contains("Content-Length")), "{n:?}");
}

#[test]
fn data_flags() {
    let (r, _, _) = req("curl -d a=1 --data b=2 --data-ascii c=3 http://h/");
    assert_eq!(r.body, Body::Text("a=1&b=2&c=3".into()));
    assert_eq!(
        r.headers,
        [(
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into()
        )]
    );
    let (r, _, _) = req("curl --data-raw @not-a-file http://h/");
    assert_eq!(r.body, Body::Text("@not-a-file".into()));
    let (r, _, n) = req("curl -d @form.txt http://h/");
    assert_eq!(r.body, Body::File("form.txt".into()));
    assert!(n.iter().any(|n| n.contains("line ends")), "{n:?}");
    let (r, _, n) =
        req("curl --data-binary @req.json -H 'Content-Type: application/json' http://h/");
    assert_eq!(r.body, Body::File("req.json".into()));
    assert!(n.is_empty(), "{n:?}");
    let (r, _, _) = req(
        "curl --data-urlencode 'q=a b&c' --data-urlencode '=x/y' --data-urlencode plain http://h/",
    );
    assert_eq!(r.body, Body::Text("q=a+b%26c&x%2Fy&plain".into()));
    let (_, w, _) = req("curl --data-urlencode name@file.txt http://h/");
    assert!(
        w[0].contains("--data-urlencode") && w[0].contains("file.txt"),
        "{w:?}"
    );
    let (r, _, _) = req(r#"curl --json '{"a":1}' http://h/"#);
    assert_eq!(r.body, Body::Text(r#"{"a":1}"#.into()));
    assert_eq!(
        r.headers,
        [
            ("Content-Type".into(), "application/json".into()),
            ("Accept".into(), "application/json".into())
        ]
    );
    // -G moves the data into the query.
    let (r, _, _) = req("curl -G -d a=1 --data-urlencode 'q=x y' 'http://h/s?z=0'");
    assert_eq!(r.url, "http://h/s?z=0&a=1&q=x+y");
    assert_eq!(r.body, Body::None);
    let (r, _, _) = req("curl --url-query 'q=a b' --url-query +raw%20 http://h/s");
    assert_eq!(r.url, "http://h/s?q=a+b&raw%20");
}

#[test]
fn multipart_forms() {
    let (r, w, _) = req(
        r#"curl -F name=alice -F 'note="a;b"' -F 'f=hello;type=text/plain;filename=h.txt' -F pic=@me.png --form-string 'raw=@x' http://h/up"#,
    );
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("pic=@me.png"), "{w:?}");
    let Body::Text(body) = &r.body else {
        panic!("{:?}", r.body)
    };
    let b = "------------------------yace0import0boundary";
    assert_eq!(
        body,
        &format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nalice\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\na;b\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"h.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"raw\"\r\n\r\n@x\r\n\
             --{b}--\r\n"
        )
    );
    assert_eq!(
        r.headers,
        [(
            "Content-Type".into(),
            format!("multipart/form-data; boundary={b}")
        )]
    );
    // The body's CR LF survive the trip through bash as $'…'.
    let a = argv("curl -F a=1 http://h/");
    let body = &a[a.iter().position(|w| w == "--body").unwrap() + 1];
    assert!(body.contains("\r\n\r\n1\r\n"), "{body:?}");
}

#[test]
fn credentials() {
    let (r, _, _) = req("curl -u alice:s3cret http://h/");
    assert_eq!(
        r.headers,
        [("Authorization".into(), "Basic YWxpY2U6czNjcmV0".into())]
    );
    let (r, w, _) = req("curl --user alice http://h/");
    assert_eq!(r.headers[0].1, "Basic YWxpY2U6");
    assert!(w[0].contains("no password"), "{w:?}");
    let (r, w, _) = req("curl --digest -u a:b http://h/");
    assert!(r.headers.is_empty());
    assert!(
        w.iter()
            .any(|w| w.starts_with("curl flag --digest is not imported")),
        "{w:?}"
    );
    let (r, _, _) = req("curl --oauth2-bearer t0k3n http://h/");
    assert_eq!(r.headers, [("Authorization".into(), "Bearer t0k3n".into())]);
    let (r, _, _) = req("curl -b a=1 -H 'Cookie: z=0' --cookie 'b=2' http://h/");
    assert_eq!(r.headers, [("Cookie".into(), "z=0; a=1; b=2".into())]);
    let (r, w, _) = req("curl -b cookies.txt http://h/");
    assert!(r.headers.is_empty());
    assert!(w[0].contains("cookies.txt"), "{w:?}");
    // Each is said to be kept.
    for cmd in [
        "curl -u a:b http://h/",
        "curl -b a=1 http://h/",
        "curl -H 'X-Api-Key: k' http://h/",
        "curl 'http://h/?access_token=abc'",
    ] {
        let out = curl(cmd, CurlOutput::Run).unwrap();
        assert!(
            out.notes.iter().any(|n| n.contains("credentials")),
            "{cmd}: {:?}",
            out.notes
        );
    }
    let out = curl("curl http://h/", CurlOutput::Run).unwrap();
    assert!(out.notes.is_empty(), "{:?}", out.notes);
}

#[test]
fn run_options() {
    let a = argv(
        "curl -k --compressed --http2 -m 2.5 --connect-timeout 3 --cacert ca.pem --cert c.pem \
         --key k.pem https://h/",
    );
    assert_eq!(
        a,
        [
            "yace",
            "run",
            "https://h/",
            "-H",
            "Accept-Encoding: deflate, gzip, br, zstd",
            "--insecure",
            "--cacert",
            "ca.pem",
            "--cert",
            "c.pem",
            "--key",
            "k.pem",
            "--http2",
            "--timeout",
            "2s 500ms",
            "--connect-timeout",
            "3s",
        ]
    );
    let (r, _, _) =
        req("curl --http2-prior-knowledge --compressed -H 'accept-encoding: gzip' http://h/");
    assert!(r.http2);
    assert_eq!(r.headers, [("accept-encoding".into(), "gzip".into())]);
    let e = parse_text("curl -m soon http://h/").unwrap_err();
    assert!(e.to_string().contains("-m: 'soon' is not a number"), "{e}");
}

#[test]
fn every_flag_is_accounted_for() {
    let out = curl(
        "curl -sSL --retry 3 -o out.html --foo -x http://proxy:3128 -c jar.txt --resolve \
         h:80:127.0.0.1 -v --http3 -Q x http://h/",
        CurlOutput::Run,
    )
    .unwrap();
    let w = out.warnings.join("\n");
    for flag in [
        "-L",
        "--retry",
        "--foo",
        "-x",
        "-c",
        "--resolve",
        "--http3",
        "-Q",
    ] {
        assert!(
            w.contains(&format!("curl flag {flag} is not imported: ")),
            "{flag} not named in:\n{w}"
        );
    }
    assert!(w.contains("yace does not follow redirects"), "{w}");
    assert!(w.contains("curl has no such flag"), "{w}");
    let n = out.notes.join("\n");
    assert!(
        n.contains("curl flags -s -S -o -v change only curl's own output"),
        "{n}"
    );
    // Values of options not imported are not taken for URLs.
    assert!(!w.contains("second URL"), "{w}");
    let (r, _, _) = req("curl --max-redirs 5 --user-agent=x --url http://h/a");
    assert_eq!(r.url, "http://h/a");
    assert_eq!(r.headers, [("User-Agent".into(), "x".into())]);
}

#[test]
fn urls() {
    assert_eq!(req("curl example.test/a").0.url, "http://example.test/a");
    assert_eq!(req("curl 'http://h/a#frag'").0.url, "http://h/a");
    let (_, w, _) = req("curl 'http://h/a' 'http://h/b'");
    assert!(
        w[0].contains("'http://h/b'") && w[0].contains("second URL"),
        "{w:?}"
    );
    let (_, w, _) = req("curl 'http://h/file[1-3].txt'");
    assert!(w[0].contains("globbing"), "{w:?}");
    assert!(req("curl -g 'http://h/a[1]'").1.is_empty());
    let e = parse_text("curl ftp://h/x").unwrap_err();
    assert!(e.to_string().contains("not an http"), "{e}");
}

#[test]
fn errors_say_what_and_where() {
    let e = parse_text("curl -X POST -H 'A: b'").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 1, column 17: the curl command has no URL (give it as an argument, or with --url)"
    );
    let e = parse_text("curl 'http://h/ -d x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 1, column 6: this ' (single quote) is never closed"
    );
    let e = parse_text("wget http://h/").unwrap_err();
    assert!(e.to_string().contains("not a curl command"), "{e}");
    let e = parse_text("curl http://h/ -H").unwrap_err();
    assert!(e.to_string().contains("-H needs a value"), "{e}");
    let e = parse_text("").unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = curl_args(&["curl".into(), "-X".into(), "GET".into()], CurlOutput::Run).unwrap_err();
    assert!(e.to_string().starts_with("argument 3: "), "{e}");
}

#[test]
fn args_already_split() {
    let args: Vec<String> = ["curl", "-X", "POST", "http://h/echo", "-d", "a b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = curl_args(&args, CurlOutput::Run).unwrap();
    assert!(out.text.contains("--body 'a b'"), "{}", out.text);
    // Without the leading `curl` too.
    let out = curl_args(&args[1..], CurlOutput::Run).unwrap();
    assert!(
        out.text.starts_with("yace run http://h/echo"),
        "{}",
        out.text
    );
}

#[test]
fn as_a_step() {
    let out = curl(
        "curl -k -m 5 'https://h:8443/api/x?y=1' -H 'X-A: 1' -H 'Host: other' --data-binary '{\"a\":1}'",
        CurlOutput::Step(Format::Toml),
    )
    .unwrap();
    assert!(
        out.text.contains(
            "[[step]]\nname = \"POST /api/x\"\nmethod = \"POST\"\nurl = \"/api/x?y=1\"\n"
        ),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("body = \"{\\\"a\\\":1}\""),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("# Its url is relative to the scenario's base: base = \"https://h:8443\""),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("yace run -f FILE --insecure"),
        "{}",
        out.text
    );
    assert!(out.text.contains("timeout = \"5s\""), "{}", out.text);
    assert!(
        out.warnings.iter().any(|w| w.contains("Host: other")),
        "{:?}",
        out.warnings
    );
    let y = curl(
        "curl http://h/a -d @body.json",
        CurlOutput::Step(Format::Yaml),
    )
    .unwrap();
    assert!(y.text.starts_with("step:\n"), "{}", y.text);
    assert!(
        y.text.contains("    body_file: 'body.json'\n"),
        "{}",
        y.text
    );
    let abs = curl(
        "curl http://h/a -d @/tmp/b.json",
        CurlOutput::Step(Format::Toml),
    )
    .unwrap();
    assert!(
        abs.text
            .contains("body_file = \"/tmp/b.json\"\nallow_outside = true\n"),
        "{}",
        abs.text
    );
}

#[test]
fn steps_validate_as_scenarios() {
    use std::collections::BTreeMap;
    use std::path::Path;
    for (cmd, fmt) in [
        (CHROME, Format::Toml),
        (CHROME, Format::Yaml),
        ("curl -F a=1 -u u:p 'http://h:81/x?q=1'", Format::Toml),
        ("curl -F a=1 -u u:p 'http://h:81/x?q=1'", Format::Yaml),
        ("curl -I http://h/", Format::Yaml),
    ] {
        let out = curl(cmd, CurlOutput::Step(fmt)).unwrap();
        let f = match fmt {
            Format::Toml => scenario::Format::Toml,
            Format::Yaml => scenario::Format::Yaml,
        };
        let s = scenario::parse(&out.text, f, "step", Path::new("."), &BTreeMap::new())
            .unwrap_or_else(|d| panic!("{}\n{d}", out.text));
        assert_eq!(s.steps().len(), 1);
    }
}
