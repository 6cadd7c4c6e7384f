//! `yace import`: a user's real traffic as yace input — a curl command
//! as `yace run` flags (or a scenario step), a HAR capture as a scenario,
//! an access log as a replay plan. The text goes to standard output; what
//! was not imported, changed or kept (credentials) to standard error.

use crate::args::{
    AssetsArg, ImportAccessLogArgs, ImportArgs, ImportCommand, ImportCurlArgs, ImportHarArgs,
    ReplayArg,
};
use crate::{exit, Failure};
use std::io::{IsTerminal, Read, Write};

pub fn run(a: ImportArgs) -> Result<u8, Failure> {
    match a.command {
        ImportCommand::Curl(c) => curl(c),
        ImportCommand::Har(h) => har(h),
        ImportCommand::AccessLog(l) => access_log(l),
    }
}

fn curl(a: ImportCurlArgs) -> Result<u8, Failure> {
    let format = if a.yaml {
        import::Format::Yaml
    } else {
        import::Format::Toml
    };
    let out = if a.step {
        import::CurlOutput::Step(format)
    } else {
        import::CurlOutput::Run
    };
    let result = match a.command.as_slice() {
        [] => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("yace import curl: paste the curl command, then Ctrl-D");
            }
            let mut text = String::new();
            stdin.lock().read_to_string(&mut text).map_err(|e| {
                Failure::usage(format!("yace import curl: cannot read standard input: {e}"))
            })?;
            import::curl(&text, out)
        }
        [one] => import::curl(one, out),
        many => import::curl_args(many, out),
    };
    let output = result.map_err(|e| Failure::usage(format!("yace import curl: {e}")))?;
    emit(&output)
}

fn har(a: ImportHarArgs) -> Result<u8, Failure> {
    let max_think = plan::parse_duration("--max-think", &a.max_think)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let name = a.file.display().to_string();
    let text = if name == "-" {
        let mut t = String::new();
        std::io::stdin()
            .lock()
            .read_to_string(&mut t)
            .map_err(|e| Failure::usage(format!("yace import har: standard input: {e}")))?;
        t
    } else {
        let bytes = std::fs::read(&a.file)
            .map_err(|e| Failure::usage(format!("yace import har: {name}: cannot read: {e}")))?;
        String::from_utf8(bytes).map_err(|e| {
            Failure::usage(format!(
                "yace import har: {name}: not UTF-8 text (byte {}): a HAR file is JSON",
                e.utf8_error().valid_up_to()
            ))
        })?
    };
    let options = import::HarOptions {
        keep_assets: a.assets == AssetsArg::Keep,
        all_hosts: a.all_hosts,
        host: a.host,
        format: if a.yaml {
            import::Format::Yaml
        } else {
            import::Format::Toml
        },
        max_think_ms: max_think.as_millis().min(u128::from(u64::MAX)) as u64,
    };
    let output = import::har(&text, &options)
        .map_err(|e| Failure::usage(format!("yace import har: {name}: {e}")))?;
    emit(&output)
}

/// Reads the log as a stream (never whole): the flags are checked first,
/// all of them, then the file is opened.
fn access_log(a: ImportAccessLogArgs) -> Result<u8, Failure> {
    let mut problems = Vec::new();
    let format = import::LogFormat::parse(&a.format)
        .map_err(|e| problems.push(e.to_string()))
        .ok();
    let speed = a.speed.trim().trim_end_matches(['x', 'X']).parse::<f64>();
    let speed = match speed {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 1000.0 => s,
        _ => {
            problems.push(format!(
                "--speed {}: give a number above 0 and at most 1000 (2: twice as fast as the log)",
                a.speed
            ));
            1.0
        }
    };
    let duration_ms = match &a.duration {
        None => None,
        Some(d) => match plan::parse_duration("--duration", d) {
            Ok(d) if !d.is_zero() => Some(d.as_millis().min(u128::from(u64::MAX)) as u64),
            Ok(_) => {
                problems.push("--duration 0: give a length above 0 (30s, 10m)".to_owned());
                None
            }
            Err(e) => {
                problems.push(e.to_string());
                None
            }
        },
    };
    let methods = match a.methods.trim().to_ascii_uppercase().as_str() {
        "ALL" | "*" => None,
        list => {
            let m: Vec<String> = list
                .split(',')
                .map(|m| m.trim().to_owned())
                .filter(|m| !m.is_empty())
                .collect();
            let bad: Vec<&String> = m
                .iter()
                .filter(|m| {
                    !m.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                })
                .collect();
            if m.is_empty() || !bad.is_empty() {
                problems.push(format!(
                    "--methods {}: give methods separated by commas (GET,HEAD,POST), or all",
                    a.methods
                ));
            }
            Some(m)
        }
    };
    if a.top == 0 || a.top > import::MAX_TOP {
        problems.push(format!(
            "--top {}: give from 1 to {} URLs",
            a.top,
            import::MAX_TOP
        ));
    }
    if let Some(b) = &a.base {
        match plan::Target::parse(b) {
            Ok(t) if t.path.contains('?') => {
                problems.push(format!("--base {b}: a scenario's base has no query"))
            }
            Ok(_) => {}
            Err(e) => problems.push(format!("--base {b}: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(Failure::usage(format!(
            "yace import access-log: {}",
            problems.join("\nyace import access-log: ")
        )));
    }
    // Every file is opened before any is read: a missing one is named
    // before minutes go into the others. Each is buffered (and, if it is
    // gzip, decompressed) only when its turn comes.
    let mut files = Vec::with_capacity(a.files.len());
    let mut names = Vec::with_capacity(a.files.len());
    for path in &a.files {
        let name = path.display().to_string();
        if name == "-" {
            if names.iter().any(|n| n == "standard input") {
                return Err(Failure::usage(
                    "yace import access-log: - (standard input) is given twice; it can be read once",
                ));
            }
            names.push("standard input".to_owned());
            files.push(import::LogFile {
                name: "standard input".to_owned(),
                reader: Box::new(std::io::stdin()),
            });
            continue;
        }
        if let Ok(m) = std::fs::metadata(path) {
            if m.is_dir() {
                return Err(Failure::usage(format!(
                    "yace import access-log: {name} is a folder; give the log file"
                )));
            }
        }
        let f = std::fs::File::open(path).map_err(|e| {
            Failure::usage(format!("yace import access-log: {name}: cannot read: {e}"))
        })?;
        names.push(name.clone());
        files.push(import::LogFile {
            name,
            reader: Box::new(f),
        });
    }
    let mut options = import::AccessLogOptions::new(format.expect("checked above"));
    options.replay = match a.replay {
        ReplayArg::Mix => import::Replay::Mix,
        ReplayArg::Timed => import::Replay::Timed,
    };
    options.speed = speed;
    options.duration_ms = duration_ms;
    options.methods = methods;
    options.top = a.top;
    options.base = a.base;
    options.output = if a.yaml {
        import::Format::Yaml
    } else {
        import::Format::Toml
    };
    options.source = match names.as_slice() {
        [one] => one.clone(),
        [first @ .., last] if names.len() <= 3 => format!("{} and {last}", first.join(", ")),
        [first, .., last] => format!("{first} … {last} ({} files)", names.len()),
        [] => unreachable!("clap requires a FILE"),
    };
    let output = import::access_logs(files, &options)
        .map_err(|e| Failure::usage(format!("yace import access-log: {e}")))?;
    emit(&output)
}

/// The text on standard output; warnings, then notes, on standard error.
fn emit(o: &import::Output) -> Result<u8, Failure> {
    {
        let mut err = std::io::stderr().lock();
        for w in &o.warnings {
            let _ = writeln!(err, "warning: {w}");
        }
        for n in &o.notes {
            let _ = writeln!(err, "note: {n}");
        }
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(o.text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(exit::OK),
        // A reader that went away (| head) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(exit::OK),
        Err(e) => Err(Failure::runtime(format!(
            "yace import: standard output: {e}"
        ))),
    }
}
