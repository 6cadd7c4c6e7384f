//! `yace import access-log`, end to end, on logs real servers wrote:
//! nginx in front of Apache (one stack start), driven with a known request
//! mix by `yace run`, each server logging every format the importer reads
//! to a file of its own (stacks/nginx-proxy.conf and
//! stacks/apache-prefork-modphp.conf). Then: a timed replay of a log with
//! a known per-second arrival pattern, run against `yace serve`, sends the
//! log's count in each second; bad lines are counted and sampled; and a
//! generated 200 MB log imports in bounded memory.

use crate::harness::{Stack, StackKind};
use crate::support::{temp_path, yace, ServeProcess};
use crate::text;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The three tests below that load the machine (a stack of Apache's 110
/// children, 2 000 requests timed to the millisecond, a 200 MB import)
/// take turns: on a 2-core machine, one's CPU would move the other's
/// requests across a second's boundary.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The request mix driven at the stack: (method, target, count). The
/// token must never reach an import's output.
const MIX: &[(&str, &str, u64)] = &[
    ("GET", "/index.html", 24),
    ("GET", "/hello.php?name=yace", 12),
    ("GET", "/random.php?token=s3cr3t-t0k3n&page=2", 6),
    ("HEAD", "/index.html", 5),
    ("GET", "/missing.html", 3),
    ("POST", "/hello.php", 4),
];
const TOKEN: &str = "s3cr3t-t0k3n";

/// The same string as `yace_custom` in stacks/nginx-proxy.conf.
const CUSTOM: &str = "$remote_addr [$time_local] $msec \"$request_method $request_uri\" $status \
                      $body_bytes_sent $request_time \"$http_user_agent\"";

/// The extra logs of the stack, and the format each is read as.
const FORMATS: &[(&str, &str)] = &[
    ("nginx-combined.log", "combined"),
    ("nginx-json.log", "nginx-json"),
    ("nginx-custom.log", CUSTOM),
    ("apache-combined.log", "combined"),
    ("apache-common.log", "common"),
];

fn import_log(file: &Path, args: &[&str]) -> Output {
    yace()
        .args(["import", "access-log"])
        .arg(file)
        .args(args)
        .output()
        .expect("run yace import access-log")
}

/// `data` compressed by the gzip command (`gzip -c`, as logrotate's
/// `compress` runs it).
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip (the command)");
    let mut stdin = child.stdin.take().unwrap();
    let data = data.to_vec();
    let feed = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().unwrap();
    feed.join().unwrap().unwrap();
    assert!(out.status.success(), "gzip: {}", text(&out.stderr));
    out.stdout
}

/// The log `path` gzipped (under a name that does not say so, and as
/// logrotate names it), and cut in a rotated set (the older part
/// gzipped, the newer plain, read oldest first): each imports to the
/// plain log's plan and notes, byte for byte (its name aside; the rotated
/// set's bad lines are sampled by its own files' names and lines).
fn gzip_imports_as_plain(path: &Path, args: &[&str]) {
    let plain = import_log(path, args);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    let name = path.display().to_string();
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let same = |out: &Output, called: &str, what: &str| {
        assert!(out.status.success(), "{what}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout).replace(called, &name),
            text(&plain.stdout),
            "{what}"
        );
        // Bad lines are sampled as `warning: FILE:LINE: …`.
        let (err, plain_err) = (text(&out.stderr), text(&plain.stderr));
        let unsampled = |t: &str, files: &[&str]| -> (String, usize) {
            let sampled = |l: &&str| {
                files
                    .iter()
                    .any(|f| l.starts_with(&format!("warning: {f}:")))
            };
            let n = t.lines().filter(sampled).count();
            let rest: Vec<&str> = t.lines().filter(|l| !sampled(l)).collect();
            (rest.join("\n").replace(called, &name), n)
        };
        let files: Vec<&str> = called.split(" and ").collect();
        assert_eq!(
            unsampled(&err, &files),
            unsampled(&plain_err, &[name.as_str()]),
            "{what}"
        );
        if files.len() == 1 {
            assert_eq!(err.replace(called, &name), plain_err, "{what}");
        }
    };
    let log = fs::read(path).unwrap();
    let packed = gzip(&log);
    assert_eq!(packed[..2], [0x1f, 0x8b]);
    for called in [format!("{file}.1.gz"), format!("{file}.renamed")] {
        let gz = temp_path(&called);
        fs::write(&gz, &packed).unwrap();
        same(&import_log(&gz, args), &gz.display().to_string(), &called);
    }
    let cut = log[..log.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .expect("a line in the first half")
        + 1;
    let (older, newer) = (
        temp_path(&format!("{file}.2.gz")),
        temp_path(&format!("newer-{file}")),
    );
    fs::write(&older, gzip(&log[..cut])).unwrap();
    fs::write(&newer, &log[cut..]).unwrap();
    let out = yace()
        .args(["import", "access-log"])
        .args([&older, &newer])
        .args(args)
        .output()
        .unwrap();
    let called = format!("{} and {}", older.display(), newer.display());
    same(&out, &called, "a rotated set");
}

fn line_count(path: &Path) -> usize {
    fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// Waits (≤ 15 s) until `path` has at least `n` lines and none came for
/// 250 ms; returns the count.
fn settle(path: &Path, n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut last = line_count(path);
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(25));
        let now = line_count(path);
        if now != last {
            last = now;
            since = Instant::now();
        }
        if (now >= n && since.elapsed() >= Duration::from_millis(250)) || Instant::now() > deadline
        {
            return now;
        }
    }
}

/// Writes the plan to a file and reads it back as `yace run -f --dry-run`
/// does: the scenario as the loader built it.
fn dry_run(plan: &str, name: &str, url: &str) -> Value {
    let path = temp_path(name);
    fs::write(&path, plan).unwrap();
    let out = yace()
        .args(["run", "-f"])
        .arg(&path)
        .arg(url)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert!(out.status.success(), "{plan}\n{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("--dry-run prints JSON")
}

/// (journey name → weight) of a dry run.
fn weights(v: &Value) -> BTreeMap<String, u64> {
    v["scenario"]["journeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap().to_owned(),
                j["weight"].as_f64().unwrap() as u64,
            )
        })
        .collect()
}

/// Requests the open-model stages of a dry run send: Σ rate × duration.
fn planned(v: &Value) -> f64 {
    v["plan"]["load"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (s["from"].as_f64().unwrap() + s["to"].as_f64().unwrap()) / 2.0
                * s["duration"].as_f64().unwrap()
                / 1e9
        })
        .sum()
}

/// The mix as the import names its journeys: GET and HEAD (or every
/// method), the token's value replaced by its variable.
fn expected(all_methods: bool) -> BTreeMap<String, u64> {
    MIX.iter()
        .filter(|(m, _, _)| all_methods || *m != "POST")
        .map(|(m, t, n)| (format!("{m} {}", t.replace(TOKEN, "{{token}}")), *n))
        .collect()
}

#[test]
fn logs_of_real_nginx_and_apache_import_in_every_format() {
    let _turn = heavy();
    let stack = Stack::start(StackKind::NginxProxyApache);
    let logs = stack.dir().join("logs");
    // The harness's start-up probe is in the extra logs too: let it land,
    // then empty them (the servers append, so their next line is at 0).
    for (file, _) in FORMATS {
        settle(&logs.join(file), 1);
        fs::OpenOptions::new()
            .write(true)
            .open(logs.join(file))
            .and_then(|f| f.set_len(0))
            .unwrap();
    }

    let total: u64 = MIX.iter().map(|(_, _, n)| n).sum();
    for (method, target, n) in MIX {
        let out = yace()
            .args(["run", "-q", "-c", "1", "-n", &n.to_string(), "-m", method])
            .arg(stack.url(target))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{method} {target}: {}",
            text(&out.stderr)
        );
    }

    // What the servers saw, by their own (tab-separated) logs: the mix.
    let seen = |entries: Vec<crate::harness::LogEntry>| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for e in entries {
            *m.entry(format!("{} {}", e.method, e.path)).or_default() += 1;
        }
        m
    };
    let want: BTreeMap<String, u64> = MIX
        .iter()
        .map(|(m, t, n)| (format!("{m} {t}"), *n))
        .collect();
    assert_eq!(seen(stack.wait_access_log(total as usize)), want);
    assert_eq!(seen(stack.wait_backend_log(total as usize).unwrap()), want);

    let url = stack.url("/");
    for (file, format) in FORMATS {
        let path = logs.join(file);
        assert_eq!(settle(&path, total as usize), total as usize, "{file}");
        let out = import_log(&path, &["--format", format]);
        let (plan, err) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{file}: {err}");
        assert!(
            !plan.contains(TOKEN) && !err.contains(TOKEN),
            "{file}: the token leaked\n{plan}\n{err}"
        );
        assert!(!err.contains("warning"), "{file}: {err}");
        assert!(
            err.contains(&format!("{} requests to replay", total - 4)),
            "{file}: {err}"
        );
        assert!(err.contains("POST 4; --methods adds them"), "{file}: {err}");
        let v = dry_run(&plan, &format!("{file}.toml"), &url);
        assert_eq!(weights(&v), expected(false), "{file}\n{plan}");
        // The log's mean rate for the log's length: every request, once.
        let sent = planned(&v);
        assert!(
            (sent - (total - 4) as f64).abs() < 0.01,
            "{file}: {sent}\n{plan}"
        );
        if file.starts_with("nginx-json") || file.starts_with("nginx-custom") {
            assert!(err.contains("less $request_time"), "{file}: {err}");
        }
    }

    // Compressed by gzip, under any name, or rotated: the same plans.
    gzip_imports_as_plain(&logs.join("apache-combined.log"), &["--format", "combined"]);
    gzip_imports_as_plain(
        &logs.join("nginx-json.log"),
        &["--format", "nginx-json", "--replay", "timed"],
    );

    // Every method, and a timed replay of the JSON log: its stages send
    // each request of the log once.
    let json = logs.join("nginx-json.log");
    let out = import_log(
        &json,
        &["--format", "nginx-json", "--methods", "all", "--yaml"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = dry_run(&text(&out.stdout), "all.yaml", &url);
    assert_eq!(weights(&v), expected(true));
    let out = import_log(&json, &["--format", "nginx-json", "--replay", "timed"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = dry_run(&text(&out.stdout), "timed.toml", &url);
    assert!(
        (planned(&v) - (total - 4) as f64).abs() < 1e-6,
        "{}",
        text(&out.stdout)
    );

    // The mix runs as imported, against the stack: the server sees only
    // its URLs (the token as the placeholder the plan holds).
    stack.clear_logs();
    let out = import_log(&logs.join("apache-common.log"), &["--format", "common"]);
    let plan = temp_path("replay-common.toml");
    fs::write(&plan, &out.stdout).unwrap();
    let run = yace()
        .args(["run", "-q", "-f"])
        .arg(&plan)
        .arg(&url)
        .args(["-d", "2s"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let replayed = seen(stack.access_log());
    let n: u64 = replayed.values().sum();
    assert!(n >= 10, "{replayed:?}");
    let allowed: Vec<String> = expected(false)
        .keys()
        .map(|k| k.replace("{{token}}", "REPLACE_ME"))
        .collect();
    for k in replayed.keys() {
        assert!(allowed.contains(k), "{k} is not in the mix {allowed:?}");
    }
}

/// `[count per second]` as a combined log starting at `t0` (seconds since
/// the epoch): each second's requests spread over it, over three URLs.
fn pattern_log(path: &Path, t0: i64, counts: &[u32]) {
    let mut w = BufWriter::new(fs::File::create(path).unwrap());
    for (s, n) in counts.iter().enumerate() {
        let t = t0 + s as i64;
        for k in 0..*n {
            let target = ["/", "/bytes/100", "/status/204"][(k % 3) as usize];
            writeln!(
                w,
                "10.0.0.{} - - [{}] \"GET {target} HTTP/1.1\" 200 12 \"-\" \"replay\"",
                k % 250,
                time_local(t)
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
}

/// `14/May/2024:09:30:00 +0000` for `t` seconds since the epoch.
fn time_local(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let s = t.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{d:02}/{}/{y}:{:02}:{:02}:{:02} +0000",
        MONTHS[m as usize - 1],
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// `GET /_stats` of a `yace serve`.
fn server_stats(port: u16) -> Value {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /_stats HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let body = raw.split_once("\r\n\r\n").expect("a response").1;
    serde_json::from_str(body).expect("stats JSON")
}

/// Requests that ended in each second of a run (every outcome), from its
/// per-second rows.
fn per_second(result: &Value) -> Vec<u64> {
    result["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            ["responses", "errors", "cancelled", "dropped"]
                .iter()
                .map(|k| r[*k].as_u64().unwrap())
                .sum()
        })
        .collect()
}

/// Each second within 1% of the log's count (±1 request below 100: a
/// request due in a second's last milliseconds may end in the next), and
/// all seconds together within 1%.
fn assert_within_1pct(got: &[u64], want: &[u64], what: &str) {
    let mut off = 0;
    for (s, w) in want.iter().enumerate() {
        let g = got.get(s).copied().unwrap_or(0);
        let d = g.abs_diff(*w);
        off += d;
        assert!(
            d <= (w / 100).max(1),
            "{what}: second {s}: {g}, the log has {w}\n{got:?}\n{want:?}"
        );
    }
    let extra: u64 = got.iter().skip(want.len()).sum();
    let total: u64 = want.iter().sum();
    assert!(
        (off + extra) * 100 <= total,
        "{what}: {off} + {extra} requests out of place of {total}\n{got:?}\n{want:?}"
    );
}

#[test]
fn a_timed_replay_sends_the_logs_count_in_each_second() {
    let _turn = heavy();
    // 0 in a second: that second stays quiet.
    let counts: [u32; 6] = [60, 150, 0, 200, 90, 90];
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    let log = temp_path("pattern.log");
    pattern_log(&log, 1_715_679_000, &counts);
    let server = ServeProcess::start(&["--threads", "1"]);

    for (speed, want) in [
        (
            "1",
            counts.iter().map(|&c| u64::from(c)).collect::<Vec<_>>(),
        ),
        (
            "2",
            counts
                .chunks(2)
                .map(|p| p.iter().map(|&c| u64::from(c)).sum())
                .collect(),
        ),
    ] {
        let out = import_log(&log, &["--replay", "timed", "--speed", speed]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let plan = temp_path(&format!("timed-{speed}.toml"));
        fs::write(&plan, &out.stdout).unwrap();
        let before = server_stats(server.port)["requests"].as_u64().unwrap();
        let result = temp_path(&format!("timed-{speed}.json"));
        let run = yace()
            .args(["run", "-q", "-f"])
            .arg(&plan)
            .arg(server.url("/"))
            .arg("--json")
            .arg(&result)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", text(&run.stderr));
        let v: Value = serde_json::from_str(&fs::read_to_string(&result).unwrap()).unwrap();
        assert_eq!(v["summary"]["errors"], 0, "{}", v["summary"]);
        assert_eq!(v["summary"]["dropped"], 0, "{}", v["summary"]);
        assert_eq!(v["summary"]["responses"], total, "{}", v["summary"]);
        let at_server = server_stats(server.port)["requests"].as_u64().unwrap() - before;
        assert_eq!(at_server, total, "the server saw {at_server} requests");
        assert_within_1pct(&per_second(&v), &want, &format!("speed {speed}"));
    }
}

#[test]
fn bad_lines_are_counted_and_sampled_with_their_line_numbers() {
    let log = temp_path("bad.log");
    let good = "10.0.0.1 - - [14/May/2024:09:30:00 +0000] \"GET / HTTP/1.1\" 200 12 \"-\" \"t\"";
    let mut text_log = String::new();
    for i in 1..=30 {
        match i {
            4 => text_log.push_str(
                "10.0.0.1 - - [yesterday] \"GET /?session=abcdef123 HTTP/1.1\" 200 1 \"-\" \"t\"\n",
            ),
            9 => text_log.push_str("{\"time\":\"soon\",\"request\":\"GET / HTTP/1.1\"}\n"),
            17 => text_log.push_str(
                "10.0.0.1 - - [14/May/2024:09:30:00 +0000] \"GET / HTTP/1.1\" two 12 \"-\" \"t\"\n",
            ),
            21..=25 => text_log.push_str("garbage\n"),
            _ => {
                text_log.push_str(good);
                text_log.push('\n');
            }
        }
    }
    fs::write(&log, &text_log).unwrap();
    let out = import_log(&log, &[]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let name = log.display().to_string();
    assert!(
        err.contains("warning: 8 of 30 lines did not read as combined (the first 5 below):"),
        "{err}"
    );
    for (line, why) in [
        (4, "$time_local 'yesterday' is not a time"),
        (
            9,
            "$remote_user from column 33 has no ' [' after it: {\"time\"",
        ),
        (17, "status 'two' is not a status code"),
        (
            21,
            "$remote_addr from column 1 has no ' ' (white space) after it: garbage",
        ),
        (
            22,
            "$remote_addr from column 1 has no ' ' (white space) after it: garbage",
        ),
    ] {
        assert!(
            err.contains(&format!("{name}:{line}: {why}")),
            "line {line}: {err}"
        );
    }
    assert!(!err.contains(&format!("{name}:23:")), "{err}");
    assert!(
        !err.contains("abcdef123") && err.contains("session=***"),
        "{err}"
    );
    assert!(err.contains("22 requests to replay"), "{err}");
    assert!(text(&out.stdout).contains("8 lines of the log did not read as combined"));
    // Gzipped: the same bad lines, at the same line numbers.
    gzip_imports_as_plain(&log, &[]);

    // A gzip log cut short, or damaged: exit 2, the file and the byte
    // named, nothing on standard output.
    let mut big = String::new();
    for _ in 0..300 {
        big.push_str(&text_log);
    }
    let packed = gzip(big.as_bytes());
    let gz = temp_path("cut.log.gz");
    let cut = packed.len() * 2 / 3;
    fs::write(&gz, &packed[..cut]).unwrap();
    let out = import_log(&gz, &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains(&format!(
            "yace import access-log: {}: cannot read line ",
            gz.display()
        )) && err.contains(&format!(
            "the gzip data ends early, at byte {cut} of the file"
        )),
        "{err}"
    );
    let mut damaged = packed.clone();
    for b in &mut damaged[cut - 100..cut] {
        *b ^= 0x5a;
    }
    fs::write(&gz, &damaged).unwrap();
    let out = import_log(&gz, &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains(&format!("{}: cannot read line ", gz.display()))
            && err.contains("the gzip data is damaged at byte ")
            && err.contains("`gzip -t FILE` checks a file"),
        "{err}"
    );
    // A file of a rotated set that is not there: named, before any is read.
    let out = yace()
        .args(["import", "access-log"])
        .arg(&log)
        .arg("/nonexistent.log.1.gz")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent.log.1.gz: cannot read"));

    // A wrong --format: nothing reads, exit 2, and the hint.
    let out = import_log(&log, &["--format", "nginx-json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("nothing to replay in"), "{err}");
    assert!(err.contains("is --format right?"), "{err}");
    assert!(out.stdout.is_empty());

    // Flags are checked together, before the file is read.
    let out = import_log(
        Path::new("/nonexistent.log"),
        &[
            "--format",
            "$status",
            "--speed",
            "0",
            "--top",
            "0",
            "--duration",
            "soon",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    for what in [
        "--format: the log_format names no request",
        "--speed 0",
        "--top 0",
        "--duration",
    ] {
        assert!(err.contains(what), "{what}: {err}");
    }
    let out = import_log(Path::new("/nonexistent.log"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent.log: cannot read"));
}

/// Runs `cmd` to its end; its peak resident set size (the kernel's
/// `ru_maxrss` for this child, from wait4), and its exit status.
// The child is reaped by wait4, which also gives its rusage; `Child::wait`
// would not.
#[allow(clippy::zombie_processes)]
fn peak_rss_kib(mut cmd: Command, out: &Path) -> (i64, i32) {
    let f = fs::File::create(out).unwrap();
    let child = cmd
        .stdout(Stdio::from(f.try_clone().unwrap()))
        .stderr(Stdio::from(f))
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into the two locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    (usage.ru_maxrss, libc::WEXITSTATUS(status))
}

/// A temp folder removed when dropped (the big log must not outlive the test).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_200_mb_log_imports_in_bounded_memory() {
    let _turn = heavy();
    let dir = TempDir(temp_path("big-log"));
    fs::create_dir_all(&dir.0).unwrap();
    let log = dir.0.join("access.log");
    // 1.5 million lines over 4 hours: 30% to three hot URLs, the rest to
    // 400 000 distinct ones (past the 100 000 the importer counts).
    let mut w = BufWriter::with_capacity(1 << 20, fs::File::create(&log).unwrap());
    let t0 = 1_715_679_000i64;
    let mut hot = [0u64; 3];
    let mut n = 0u64;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    while n < 1_500_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = t0 + (n * 14_400 / 1_500_000) as i64;
        let target = if x % 10 < 3 {
            let h = (x / 10 % 3) as usize;
            hot[h] += 1;
            ["/", "/catalog?page=1", "/api/cart"][h].to_owned()
        } else {
            format!("/item/{}?ref=feed&color=blue", x % 400_000)
        };
        writeln!(
            w,
            "192.168.{}.{} - - [{}] \"GET {target} HTTP/1.1\" 200 {} \"https://shop.example/\" \"Mozilla/5.0 (X11; Linux x86_64)\"",
            x >> 56,
            (x >> 48) & 255,
            time_local(t),
            x % 50_000
        )
        .unwrap();
        n += 1;
    }
    w.flush().unwrap();
    drop(w);
    let size = fs::metadata(&log).unwrap().len();
    assert!(size > 200_000_000, "{size} bytes");

    let out = dir.0.join("out.txt");
    let mut cmd = yace();
    cmd.args(["import", "access-log"]).arg(&log);
    let started = Instant::now();
    let (peak_kib, code) = peak_rss_kib(cmd, &out);
    let took = started.elapsed();
    let text_out = fs::read_to_string(&out).unwrap();
    assert_eq!(
        code,
        0,
        "{}",
        &text_out[text_out.len().saturating_sub(3000)..]
    );
    eprintln!(
        "200 MB log: {size} bytes, {n} lines, peak RSS {peak_kib} KiB, {:.1} s",
        took.as_secs_f64()
    );
    assert!(
        peak_kib < 64 * 1024,
        "peak RSS {peak_kib} KiB for a {size}-byte log"
    );
    // The hot URLs survive the folding of the rare ones, counted exactly.
    for (url, count) in ["/", "/catalog?page=1", "/api/cart"].iter().zip(hot) {
        assert!(
            text_out.contains(&format!("{{ name = \"GET {url}\", weight = {count}, ")),
            "{url} {count}\n{}",
            &text_out[..3000.min(text_out.len())]
        );
    }
    assert!(
        text_out.contains("1500000 requests to replay"),
        "{text_out}"
    );
    assert!(text_out.contains("folded into one count"), "{text_out}");
}
