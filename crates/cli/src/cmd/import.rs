//! `yace import`: a user's real traffic as yace input — a curl command
//! as `yace run` flags (or a scenario step), a HAR capture as a scenario.
//! The text goes to standard output; what was not imported, changed or
//! kept (credentials) to standard error.

use crate::args::{AssetsArg, ImportArgs, ImportCommand, ImportCurlArgs, ImportHarArgs};
use crate::{exit, Failure};
use std::io::{IsTerminal, Read, Write};

pub fn run(a: ImportArgs) -> Result<u8, Failure> {
    match a.command {
        ImportCommand::Curl(c) => curl(c),
        ImportCommand::Har(h) => har(h),
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
