//! Every kind of problem, reported with its exact place, in TOML and YAML.

use crate::{no_env, toml, yaml};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yace_scenario::{parse, Diagnostics, Format, Scenario};

/// (line, column, message with hint) of each problem, in order.
fn problems(r: Result<Scenario, Diagnostics>) -> Vec<(usize, usize, String)> {
    match r {
        Ok(_) => panic!("expected problems, the scenario is valid"),
        Err(d) => {
            d.0.into_iter()
                .map(|d| {
                    let (line, column) = (d.line(), d.column());
                    let text = match d.hint {
                        Some(h) => format!("{} ({h})", d.problem),
                        None => d.problem,
                    };
                    (line, column, text)
                })
                .collect()
        }
    }
}

/// Asserts the problems are exactly these places, each message containing
/// its needle.
fn expect(got: Vec<(usize, usize, String)>, want: &[(usize, usize, &str)]) {
    let shown: Vec<String> = got
        .iter()
        .map(|(l, c, m)| format!("{l}:{c}: {m}"))
        .collect();
    assert_eq!(got.len(), want.len(), "got:\n{}", shown.join("\n"));
    for ((l, c, m), (wl, wc, needle)) in got.iter().zip(want) {
        assert!(
            (l, c) == (wl, wc) && m.contains(needle),
            "want {wl}:{wc} containing {needle:?}; got:\n{}",
            shown.join("\n")
        );
    }
}

const BAD_TOML: &str = r#"base = "http://127.0.0.1:8080"

[load]
users = 10
rate = 5
ramp_up = "5 parsecs"
think = "normal(1s)"

[[data]]
name = "accounts"
file = "nope.csv"

[[journey]]
name = "a"
weight = 0

  [[journey.step]]
  name = "one"
  url = "/x/{{tokn}}"
  thnk = "1s"
  extract = [ { var = "t", regex = "(" }, { var = "u", json = "$.a[" } ]
  [[journey.step]]
  name = "one"
  url = "http://example.com:9/x"

[[journey]]
name = "b"
"#;

const BAD_YAML: &str = r#"base: http://127.0.0.1:8080

load:
  users: 10
  rate: 5
  ramp_up: 5 parsecs
  think: normal(1s)

data:
  - name: accounts
    file: nope.csv

journey:
  - name: a
    weight: 0
    step:
      - name: one
        url: /x/{{tokn}}
        thnk: 1s
        extract: [ { var: t, regex: "(" }, { var: u, json: "$.a[" } ]
      - name: one
        url: http://example.com:9/x
  - name: b
"#;

#[test]
fn every_problem_at_once_toml() {
    expect(
        problems(toml(BAD_TOML)),
        &[
            (5, 8, "`rate` and `users` both set the load"),
            (6, 11, "'5 parsecs' is not a duration"),
            (7, 9, "`think`"),
            (11, 8, "cannot read"),
            (15, 10, "`weight` must be above 0"),
            (19, 13, "unknown variable `tokn`"),
            (
                20,
                3,
                "unknown key `thnk` in a step (did you mean `think`?)",
            ),
            (21, 36, "bad regex '('"),
            (21, 67, "bad JSON path '$.a['"),
            (
                23,
                10,
                "step name 'one' is used twice in journey 'a' (first on line 18)",
            ),
            (
                24,
                9,
                "`url` points at example.com:9, but this run's target is 127.0.0.1:8080",
            ),
            (26, 1, "journey 'b' has no steps"),
        ],
    );
}

#[test]
fn every_problem_at_once_yaml() {
    expect(
        problems(yaml(BAD_YAML)),
        &[
            (5, 9, "`rate` and `users` both set the load"),
            (6, 12, "'5 parsecs' is not a duration"),
            (7, 10, "`think`"),
            (11, 11, "cannot read"),
            (15, 13, "`weight` must be above 0"),
            (18, 17, "unknown variable `tokn`"),
            (
                19,
                9,
                "unknown key `thnk` in a step (did you mean `think`?)",
            ),
            (20, 37, "bad regex '('"),
            (20, 64, "bad JSON path '$.a['"),
            (
                21,
                15,
                "step name 'one' is used twice in journey 'a' (first on line 17)",
            ),
            (
                22,
                14,
                "`url` points at example.com:9, but this run's target is 127.0.0.1:8080",
            ),
            (23, 5, "journey 'b' has no steps"),
        ],
    );
}

#[test]
fn display_is_file_line_col_message_hint() {
    let d = toml(BAD_TOML).unwrap_err().to_string();
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(lines.len(), 12);
    assert_eq!(
        lines[6],
        "s.toml:20:3: unknown key `thnk` in a step (did you mean `think`?)"
    );
    assert!(lines[5].starts_with("s.toml:19:13: `url`: unknown variable `tokn`"));
}

/// One-problem scenarios: (TOML, its place, YAML, its place, needle).
#[allow(clippy::type_complexity)]
const CASES: &[(&str, (usize, usize), &str, (usize, usize), &str)] = &[
    // Wrong types.
    (
        "base = 'http://h'\n[load]\nusers = 'many'\n[[step]]\nurl = '/'\n",
        (3, 9),
        "base: http://h\nload:\n  users: many\nstep:\n  - url: /\n",
        (3, 10),
        "`users` must be a whole number, not a string",
    ),
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\ncheck = { status = 200 }\n",
        (4, 9),
        "base: http://h\nstep:\n  - url: /\n    check: { status: 200 }\n",
        (4, 12),
        "`check` must be a list, not a table",
    ),
    // A choice option's weight.
    (
        "base = 'http://h'\n[[step]]\nname = 'c'\nchoice = [ { url = '/a', weight = -1 }, { url = '/b' } ]\n",
        (4, 35),
        "base: http://h\nstep:\n  - name: c\n    choice:\n      - { url: /a, weight: -1 }\n      - { url: /b }\n",
        (5, 28),
        "`weight` must be above 0",
    ),
    // Weight outside a choice.
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\nweight = 2\n",
        (4, 1),
        "base: http://h\nstep:\n  - url: /\n    weight: 2\n",
        (4, 5),
        "`weight` applies to the options of a `choice`",
    ),
    // Unknown top-level key.
    (
        "base = 'http://h'\njourneys = []\n[[step]]\nurl = '/'\n",
        (2, 1),
        "base: http://h\njourneys: []\nstep:\n  - url: /\n",
        (2, 1),
        "unknown key `journeys` in the scenario (did you mean `journey`?)",
    ),
    // Stages conflict with ramp keys.
    (
        "base = 'http://h'\n[load]\nstages = [{ duration = '5s', users = 5 }]\nhold = '10s'\n[[step]]\nurl = '/'\n",
        (4, 8),
        "base: http://h\nload:\n  stages: [{ duration: 5s, users: 5 }]\n  hold: 10s\nstep:\n  - url: /\n",
        (4, 9),
        "`hold` does not apply with `stages`",
    ),
    // A bad stage range.
    (
        "base = 'http://h'\n[load]\nstages = [{ duration = '5s', users = 'lots' }]\n[[step]]\nurl = '/'\n",
        (3, 38),
        "base: http://h\nload:\n  stages: [{ duration: 5s, users: lots }]\nstep:\n  - url: /\n",
        (3, 35),
        "`users` must be a whole number or a range",
    ),
    // A url that is not relative.
    (
        "base = 'http://h'\n[[step]]\nurl = 'login'\n",
        (3, 7),
        "base: http://h\nstep:\n  - url: login\n",
        (3, 10),
        "must start with '/' (it is relative to `base`) (write \"/login\")",
    ),
    // A reserved header.
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\nheaders = { Host = 'x' }\n",
        (4, 13),
        "base: http://h\nstep:\n  - url: /\n    headers: { Host: x }\n",
        (4, 16),
        "yace writes `Host` itself",
    ),
    // Two bodies.
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\nbody = 'a'\nform = { a = 'b' }\n",
        (5, 1),
        "base: http://h\nstep:\n  - url: /\n    body: a\n    form: { a: b }\n",
        (5, 5),
        "`form` and `body` both give the body",
    ),
    // A check with two kinds.
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\ncheck = [{ status = 200, body_contains = 'x' }]\n",
        (4, 26),
        "base: http://h\nstep:\n  - url: /\n    check: [{ status: 200, body_contains: x }]\n",
        (4, 28),
        "`body_contains` and `status` in one check",
    ),
    // A status out of range.
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\ncheck = [{ status = 700 }]\n",
        (4, 21),
        "base: http://h\nstep:\n  - url: /\n    check: [{ status: 700 }]\n",
        (4, 23),
        "700 is not an HTTP status",
    ),
    // A variable only extracted later.
    (
        "base = 'http://h'\n[[step]]\nurl = '/a?t={{t}}'\n[[step]]\nname = 'b'\nurl = '/b'\nextract = [{ var = 't', header = 'X' }]\n",
        (3, 13),
        "base: http://h\nstep:\n  - url: /a?t={{t}}\n  - name: b\n    url: /b\n    extract: [{ var: t, header: X }]\n",
        (3, 15),
        "unknown variable `t` (`t` is extracted by step 'b', which runs after this one)",
    ),
    // An unknown column of a data set.
    (
        "base = 'http://h'\n[[data]]\nname = 'accounts'\nfile = 'accounts.csv'\n[[step]]\nurl = '/'\nform = { u = 'x{{accounts.usr}}' }\n",
        (7, 16),
        "base: http://h\ndata:\n  - name: accounts\n    file: accounts.csv\nstep:\n  - url: /\n    form: { u: 'x{{accounts.usr}}' }\n",
        (7, 18),
        "data set `accounts` has no column `usr` (did you mean `user`?)",
    ),
    // A template error in a json body.
    (
        "base = 'http://h'\n[[step]]\nurl = '/'\njson = { a = [1, 'x{{user'] }\n",
        (4, 20),
        "base: http://h\nstep:\n  - url: /\n    json: { a: [1, 'x{{user'] }\n",
        (4, 22),
        "'{{' is never closed",
    ),
    // Missing url.
    (
        "base = 'http://h'\n[[step]]\nname = 'x'\n",
        (2, 1),
        "base: http://h\nstep:\n  - name: x\n",
        (3, 5),
        "a step has no `url`",
    ),
    // A bad base.
    (
        "base = 'ftp://h'\n[[step]]\nurl = '/'\n",
        (1, 8),
        "base: ftp://h\nstep:\n  - url: /\n",
        (1, 7),
        "uses scheme 'ftp'",
    ),
    // Thresholds must not be empty.
    (
        "base = 'http://h'\n[load]\nthresholds = ['p99<1s', ' ']\n[[step]]\nurl = '/'\n",
        (3, 25),
        "base: http://h\nload:\n  thresholds: ['p99<1s', ' ']\nstep:\n  - url: /\n",
        (3, 26),
        "an entry is empty",
    ),
];

#[test]
fn each_problem_at_its_place_in_both_formats() {
    for (t, tp, y, yp, needle) in CASES {
        let got = problems(toml(t));
        expect(got, &[(tp.0, tp.1, needle)]);
        let got = problems(yaml(y));
        expect(got, &[(yp.0, yp.1, needle)]);
    }
}

#[test]
fn syntax_errors_are_placed() {
    let got = problems(toml("base = 'http://h'\n[[step]]\nurl = = '/'\n"));
    assert_eq!((got[0].0, got[0].1), (3, 7), "{got:?}");
    assert!(got[0].2.starts_with("TOML syntax: "), "{got:?}");
    let got = problems(yaml("base: http://h\nstep:\n  - url: [/\n"));
    assert_eq!((got[0].0, got[0].1), (4, 1), "{got:?}");
    assert!(got[0].2.starts_with("YAML syntax: "), "{got:?}");
    let got = problems(yaml("base: http://h\n  bad: indent\n"));
    assert_eq!(got[0].0, 2, "{got:?}");
    let got = problems(toml(""));
    assert!(
        got[0].2.contains("has no journey") || got[0].2.contains("no `base`"),
        "{got:?}"
    );
    let got = problems(yaml(""));
    assert!(got[0].2.contains("empty"), "{got:?}");
}

/// A folder of its own for file tests, removed afterwards.
struct Folder(PathBuf);

impl Folder {
    fn new(tag: &str) -> Folder {
        let p = std::env::temp_dir().join(format!("yace-scenario-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("sub")).unwrap();
        Folder(p)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn parse_in(dir: &Path, text: &str) -> Result<Scenario, Diagnostics> {
    parse(text, Format::Toml, "s.toml", dir, &no_env())
}

#[test]
fn data_files_with_ragged_or_no_rows() {
    let f = Folder::new("csv");
    f.write("ragged.csv", "user,pass\na,b\nc\n\nd,e,f\n");
    f.write("empty.csv", "user,pass\n");
    f.write("nothing.csv", "");
    let text = "base = 'http://h'\n\
        [[data]]\nname = 'r'\nfile = 'ragged.csv'\n\
        [[data]]\nname = 'e'\nfile = 'empty.csv'\n\
        [[data]]\nname = 'n'\nfile = 'nothing.csv'\n\
        [[step]]\nurl = '/{{r.user}}/{{e.pass}}'\n";
    let d = parse_in(&f.0, text).unwrap_err();
    let shown: Vec<String> =
        d.0.iter()
            .map(|d| {
                let file = Path::new(d.file().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                format!("{file}:{}:{}: {}", d.line(), d.column(), d.problem)
            })
            .collect();
    assert_eq!(
        shown,
        [
            "ragged.csv:3:1: this row has 1 fields, the header has 2",
            "ragged.csv:5:1: this row has 3 fields, the header has 2",
            "empty.csv:1:1: the file has a header but no data rows",
            "nothing.csv:1:1: the file is empty (it needs a header row and data rows)",
        ]
    );
}

#[test]
fn files_stay_in_the_scenario_folder() {
    let f = Folder::new("escape");
    f.write("sub/ok.csv", "a\n1\n");
    f.write("body.txt", "hello");
    let dir = f.0.join("sub");
    let outside = f.0.join("body.txt");
    // `..`, an absolute path, and a symbolic link out are all refused.
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, dir.join("link.txt")).unwrap();
    let text = format!(
        "base = 'http://h'\n\
         [[data]]\nname = 'ok'\nfile = 'ok.csv'\n\
         [[step]]\nurl = '/a'\nbody_file = '../body.txt'\n\
         [[step]]\nurl = '/b'\nbody_file = '{}'\n\
         [[step]]\nurl = '/c'\nbody_file = 'link.txt'\n",
        outside.display()
    );
    let got = problems(parse_in(&dir, &text));
    let mut want = vec![
        (
            7,
            13,
            "'../body.txt' leaves the scenario's folder (through '..') (set allow_outside = true",
        ),
        (10, 13, "is an absolute path"),
    ];
    if cfg!(unix) {
        want.push((
            13,
            13,
            "leads outside the scenario's folder (through a symbolic link)",
        ));
    }
    expect(got, &want);
    // With allow_outside they are read.
    let text = text.replace("body_file", "allow_outside = true\nbody_file");
    let s = parse_in(&dir, &text).unwrap();
    let mut r = s.runner();
    let mut u = r.new_user(0);
    let mut out = Vec::new();
    r.next(&mut u, &mut out);
    assert!(
        out.ends_with(b"\r\n\r\nhello"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    // A data set may also be allowed outside.
    let text = "base = 'http://h'\n[[data]]\nname = 'd'\nfile = '../sub/ok.csv'\nallow_outside = true\n[[step]]\nurl = '/{{d.a}}'\n";
    assert!(parse_in(&dir, text).is_ok());
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn environment_problems_name_the_variable() {
    let text = "base = 'http://h'\n[load]\nstages = [{ duration = '5s', users = 5 }]\n[[step]]\nurl = '/'\n";
    let d = parse(
        text,
        Format::Toml,
        "s.toml",
        Path::new("."),
        &env(&[("YACE_THREADS", "zero"), ("YACE_HOLD", "1m")]),
    )
    .unwrap_err();
    let shown: Vec<String> = d.0.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "$YACE_THREADS: 'zero' is not a whole number",
            "$YACE_HOLD: `hold` does not apply with `stages` (each stage carries its own duration)",
        ]
    );
}

#[test]
fn file_extension_picks_the_format() {
    let f = Folder::new("ext");
    let p = f.write("plan.txt", "base = 'http://h'\n[[step]]\nurl = '/'\n");
    let d = yace_scenario::load(&p, &no_env()).unwrap_err();
    assert!(
        d.to_string().contains("must end in .toml, .yaml or .yml"),
        "{d}"
    );
    let p = f.write("plan.yml", "base: http://h\nstep:\n  - url: /\n");
    assert!(yace_scenario::load(&p, &no_env()).is_ok());
    let d = yace_scenario::load(&f.0.join("missing.toml"), &no_env()).unwrap_err();
    assert!(d.to_string().contains("cannot read"), "{d}");
}

/// Any prefix of a valid file is either valid or a list of problems, never
/// a panic; every problem has a place in the file.
#[test]
fn truncated_files_never_panic() {
    for (name, format) in [("shop.toml", Format::Toml), ("shop.yaml", Format::Yaml)] {
        let text = std::fs::read_to_string(crate::examples_dir().join(name)).unwrap();
        let lines = text.lines().count();
        for cut in (0..text.len())
            .step_by(7)
            .filter(|c| text.is_char_boundary(*c))
        {
            if let Err(d) = parse(
                &text[..cut],
                format,
                name,
                &crate::examples_dir(),
                &no_env(),
            ) {
                for p in &d.0 {
                    assert!(p.line() <= lines + 1, "{name} cut at {cut}: {p}");
                }
            }
        }
    }
}

#[test]
fn duration_is_a_whole_run_so_the_hold_is_called_hold() {
    // One meaning per word: -d is the whole run, so [load] has no
    // `duration` that would mean "after the ramp" — it says what to write.
    let d = parse(
        "[load]\nusers = 5\nramp_up = '50s'\nduration = '100s'\n[[step]]\nurl = '/'\n",
        Format::Toml,
        "s.toml",
        Path::new("."),
        &env(&[]),
    )
    .unwrap_err();
    let shown = d.to_string();
    assert!(
        shown.starts_with("s.toml:4:12: `duration` in [load] is called `hold`"),
        "{shown}"
    );
    assert!(shown.contains("write hold = \"100s\""), "{shown}");
    let d = parse(
        "[load]\nusers = 5\n[[step]]\nurl = '/'\n",
        Format::Toml,
        "s.toml",
        Path::new("."),
        &env(&[("YACE_DURATION", "1m")]),
    )
    .unwrap_err();
    assert!(
        d.to_string()
            .contains("$YACE_DURATION: YACE_DURATION is YACE_HOLD"),
        "{d}"
    );
}

#[test]
fn a_load_without_users_is_reported_where_it_is_written() {
    // Found by fuzzing: the error had no place (line 0).
    let d = parse(
        "[load]\nstages = [{ duration = '30s', users = '0-0' }]\n[[step]]\nurl = '/'\n",
        Format::Toml,
        "s.toml",
        Path::new("."),
        &env(&[]),
    )
    .unwrap_err();
    let shown = d.to_string();
    assert!(
        shown.starts_with("s.toml:2:") && shown.contains("never has a user"),
        "{shown}"
    );
}
