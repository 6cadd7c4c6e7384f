use crate::wire;
use crate::{examples_dir, no_env};
use std::path::Path;
use std::time::Duration;
use yace_scenario::{load, parse, Capture, Format, Stage, Think};

#[test]
fn every_example_parses() {
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "toml" | "yaml" | "yml") {
            if let Err(d) = load(&path, &no_env()) {
                panic!("{}:\n{d}", path.display());
            }
        }
    }
}

#[test]
fn ramp_5000_users_is_5000_users_over_50s_every_5s_for_100s() {
    let s = load(&examples_dir().join("ramp-5000-users.toml"), &no_env()).unwrap();
    let l = s.load_spec();
    let secs = Duration::from_secs;
    assert_eq!(
        l.users,
        [
            Stage {
                duration: secs(50),
                from: 0.0,
                to: 5000.0
            },
            Stage {
                duration: secs(100),
                from: 5000.0,
                to: 5000.0
            },
        ]
    );
    assert!(l.rate.is_empty());
    assert_eq!(l.pacing, Some(secs(5)));
    assert_eq!(l.think, Think::None);
    assert_eq!(l.length(), secs(150));
    // No base: the run's URL or the embedded target.
    assert!(s.base().is_none());
    assert_eq!(s.steps().len(), 1);
    assert_eq!(s.steps()[0].name, "home");
    assert_eq!(s.steps()[0].journey, "main");
    assert_eq!(s.thresholds(), ["errors<1%"]);
    // Peak rate: one request per user per pacing period.
    let peak = l.users.iter().map(|s| s.to).fold(0.0, f64::max) / 5.0;
    assert_eq!(peak, 1000.0);
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let mut out = Vec::new();
    let a = r.next(&mut u, &mut out);
    assert!(matches!(
        a,
        yace_scenario::Action::Request {
            step: 0,
            capture: Capture::Head,
            ..
        }
    ));
    // No base in the file: requests are written for the stand-in host until
    // a base is given, which replaces it everywhere.
    assert!(out.starts_with(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
    let path = examples_dir().join("ramp-5000-users.toml");
    let s =
        yace_scenario::load_with_base(&path, &no_env(), Some("http://10.1.2.3:8080/app")).unwrap();
    assert_eq!(s.base().unwrap().port, 8080);
    assert_eq!(s.base_origin(), yace_scenario::Base::Given);
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let mut out = Vec::new();
    r.next(&mut u, &mut out);
    assert!(
        out.starts_with(b"GET /app/ HTTP/1.1\r\nHost: 10.1.2.3:8080\r\n"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn toml_and_yaml_spell_the_same_scenario() {
    for name in ["journey", "shop"] {
        let t = load(&examples_dir().join(format!("{name}.toml")), &no_env()).unwrap();
        let y = load(&examples_dir().join(format!("{name}.yaml")), &no_env()).unwrap();
        let (mut tj, mut yj) = (t.to_json(), y.to_json());
        tj.as_object_mut().unwrap().remove("file");
        yj.as_object_mut().unwrap().remove("file");
        assert_eq!(tj, yj, "{name}");
        assert_eq!(t.steps(), y.steps());
        assert_eq!(t.load_spec(), y.load_spec());
        // And they send the same bytes.
        let (mut rt, mut ry) = (t.runner(), y.runner());
        for user in 0..5 {
            let (mut ut, mut uy) = (rt.new_user(user), ry.new_user(user));
            for _ in 0..30 {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let at = rt.next(&mut ut, &mut a);
                let ay = ry.next(&mut uy, &mut b);
                assert_eq!(at, ay);
                assert_eq!(a, b);
                if let yace_scenario::Action::Request { step, .. } = at {
                    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
                    rt.response(
                        &mut ut,
                        step,
                        200,
                        Some(&wire(resp, 200)),
                        Duration::from_millis(1),
                    );
                    ry.response(
                        &mut uy,
                        step,
                        200,
                        Some(&wire(resp, 200)),
                        Duration::from_millis(1),
                    );
                }
            }
        }
        assert_eq!(rt.counters(), ry.counters());
    }
}

/// The TOML and YAML blocks of docs/scenario.md are valid scenarios, and
/// its complete example is examples/shop.toml.
#[test]
fn documentation_examples_parse() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenario.md");
    let doc = std::fs::read_to_string(doc_path).unwrap();
    let mut blocks = 0;
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let (lang, body) = after.split_once('\n').unwrap();
        let end = body.find("```").unwrap();
        let text = &body[..end];
        rest = &body[end + 3..];
        let format = match lang.trim() {
            "toml" => Format::Toml,
            "yaml" => Format::Yaml,
            _ => continue,
        };
        // Fragments (one table of a file) are skipped; whole scenarios
        // have a step or a journey.
        let whole = |keys: &[&str]| keys.iter().any(|k| text.contains(k));
        if !(whole(&["base", "[load]", "load:"])
            && whole(&["[[step]]", "[[journey]]", "step:", "journey:"]))
        {
            continue;
        }
        blocks += 1;
        if let Err(d) = parse(text, format, "doc", &examples_dir(), &no_env()) {
            panic!("docs block:\n{text}\n{d}");
        }
    }
    assert!(blocks >= 4, "{blocks}");
    let shop = std::fs::read_to_string(examples_dir().join("shop.toml")).unwrap();
    let body = shop.split_once("\nbase = ").unwrap().1;
    assert!(
        doc.contains(body),
        "docs/scenario.md's complete example differs from shop.toml"
    );
}
