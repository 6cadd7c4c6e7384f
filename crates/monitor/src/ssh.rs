//! `ssh:[user@]host[:port]`: the server's /proc figures over the user's own
//! SSH. No port is opened on the server and yace holds no credential: the
//! user's ssh (its config, agent and keys) is the only authority. Over the
//! one connection the remote side runs `yace probe` when yace is installed
//! there, else a plain POSIX shell loop that prints the /proc files, which
//! are parsed here with the same code as `system`.
//!
//! `YACE_SSH` sets the ssh command (default `ssh`), e.g.
//! `YACE_SSH='ssh -F ~/.ssh/lab_config'`.

use crate::procfs::{SystemFiles, FILES};
use crate::reading::{Kind, Reading};
use crate::source::Source;
use crate::spec::Spec;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The first line `yace probe` prints.
pub const PROBE_HEADER: &str = "yace-probe-v1";
/// The first line of the shell reader.
pub const SHELL_HEADER: &str = "yace-shell-v1";
/// How long the first sample may take (ssh's handshake included).
const FIRST_READ: Duration = Duration::from_secs(15);
/// The remote loop's bound: a day of samples at most.
const MAX_SPAN: Duration = Duration::from_secs(86_400);

#[derive(Debug)]
pub struct Ssh {
    shown: String,
    child: Child,
    rx: Receiver<Result<Reading, String>>,
    stderr: Arc<Mutex<String>>,
    mode: Arc<Mutex<&'static str>>,
    got_one: bool,
}

impl Ssh {
    pub fn new(spec: &Spec, port: Option<u16>, interval: Duration) -> Result<Ssh, String> {
        let Spec::Ssh {
            destination,
            port: ssh_port,
            yace,
        } = spec
        else {
            unreachable!("an ssh spec")
        };
        let ssh = std::env::var("YACE_SSH").unwrap_or_else(|_| "ssh".into());
        let mut words = ssh.split_whitespace();
        let program = words.next().unwrap_or("ssh");
        let mut cmd = Command::new(program);
        cmd.args(words)
            .args(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"])
            .args(["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]);
        if let Some(p) = ssh_port {
            cmd.args(["-p", &p.to_string()]);
        }
        cmd.arg("--")
            .arg(destination)
            .arg(remote_command(yace.as_deref(), port, interval))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| {
            format!("cannot run {program}: {e} (install openssh-client, or set YACE_SSH)")
        })?;
        let stdout = child.stdout.take().expect("piped");
        let mut err_pipe = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let err_text = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut t = err_text.lock().unwrap_or_else(|e| e.into_inner());
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > 8192 {
                    let cut = t.len() - 4096;
                    let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                    t.drain(..cut);
                }
            }
        });
        let (tx, rx) = mpsc::sync_channel(64);
        let mode = Arc::new(Mutex::new("connecting"));
        let mode_w = mode.clone();
        std::thread::spawn(move || read_frames(BufReader::new(stdout), port, &tx, &mode_w));
        Ok(Ssh {
            shown: spec.to_string(),
            child,
            rx,
            stderr,
            mode,
            got_one: false,
        })
    }

    fn ssh_error(&mut self) -> String {
        // Give ssh a moment to exit and say why.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let err = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        if last.is_empty() {
            "the ssh session ended".to_string()
        } else {
            format!("ssh: {last}")
        }
    }
}

/// The one command run on the server: `yace probe` if there is one, else
/// the shell loop. Both are bounded in count and end when ssh goes away.
pub fn remote_command(yace: Option<&str>, port: Option<u16>, interval: Duration) -> String {
    let count = (MAX_SPAN.as_millis() / interval.as_millis().max(1)).max(1);
    let ms = interval.as_millis().max(1);
    let port_arg = port.map(|p| format!(" --port {p}")).unwrap_or_default();
    let yace = yace.unwrap_or("yace");
    let secs = format!("{}.{:03}", ms / 1000, ms % 1000);
    let files: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|f| !f.starts_with("net/tcp"))
        .collect();
    let tcp = match port {
        // Both directions' lines mention the port; the parser keeps the server's side.
        Some(p) => format!(
            "echo \"@@@ net/tcp\"; grep -h -i \":{p:04X} \" /proc/net/tcp /proc/net/tcp6 2>/dev/null; "
        ),
        None => String::new(),
    };
    format!(
        "sh -c 'if command -v {yace} >/dev/null 2>&1; then exec {yace} probe --interval {ms}ms \
         --count {count}{port_arg}; fi; echo {SHELL_HEADER}; i=0; while [ $i -lt {count} ]; do \
         for f in {files}; do echo \"@@@ $f\"; cat /proc/$f; done; {tcp}echo @@; \
         i=$((i+1)); sleep {secs}; done'",
        files = files.join(" ")
    )
}

fn read_frames(
    out: impl BufRead,
    port: Option<u16>,
    tx: &mpsc::SyncSender<Result<Reading, String>>,
    mode: &Mutex<&'static str>,
) {
    let mut lines = out.lines();
    let header = match lines.next() {
        Some(Ok(h)) => h,
        _ => return,
    };
    // A full queue means nobody reads: the newest frame is what matters.
    let send = |r| {
        let _ = tx.try_send(r);
    };
    match header.trim() {
        PROBE_HEADER => {
            *mode.lock().unwrap_or_else(|e| e.into_inner()) = "yace probe";
            for line in lines.map_while(Result::ok) {
                send(decode(&line));
            }
        }
        SHELL_HEADER => {
            *mode.lock().unwrap_or_else(|e| e.into_inner()) = "shell";
            let mut files = SystemFiles::default();
            let mut name: Option<String> = None;
            let mut text = String::new();
            for line in lines.map_while(Result::ok) {
                if let Some(next) = line.strip_prefix("@@@ ") {
                    if let Some(n) = name.take() {
                        files.set(&n, std::mem::take(&mut text));
                    }
                    name = Some(next.trim().to_string());
                } else if line == "@@" {
                    if let Some(n) = name.take() {
                        files.set(&n, std::mem::take(&mut text));
                    }
                    send(std::mem::take(&mut files).reading(port));
                } else {
                    text.push_str(&line);
                    text.push('\n');
                }
            }
        }
        other => {
            send(Err(format!(
                "the remote side printed {other:?}, not a probe's output (a login banner or \
                 shell profile printing to stdout?)"
            )));
        }
    }
}

impl Source for Ssh {
    fn read(&mut self, timeout: Duration) -> Result<Reading, String> {
        let wait = if self.got_one { timeout } else { FIRST_READ };
        // The newest frame that came, else wait for the next.
        let mut latest = None;
        loop {
            match self.rx.try_recv() {
                Ok(r) => latest = Some(r),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    if latest.is_none() {
                        return Err(self.ssh_error());
                    }
                    break;
                }
            }
        }
        let r = match latest {
            Some(r) => r,
            None => match self.rx.recv_timeout(wait) {
                Ok(r) => r,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no sample over ssh within {} ms", wait.as_millis()))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.ssh_error()),
            },
        };
        self.got_one = true;
        r
    }

    fn label(&self) -> String {
        let mode = *self.mode.lock().unwrap_or_else(|e| e.into_inner());
        format!("{} ({mode})", self.shown.trim_start_matches("ssh:"))
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One sample as a line: `[["name","unit","c",1.5],…]`.
pub fn encode(r: &Reading) -> String {
    let fields: Vec<serde_json::Value> = r
        .fields
        .iter()
        .map(|f| {
            let kind = match f.kind {
                Kind::Gauge => "g",
                Kind::Counter => "c",
            };
            serde_json::json!([f.name, f.unit, kind, f.value])
        })
        .collect();
    serde_json::Value::Array(fields).to_string()
}

/// A line `encode` wrote, or an error line (`{"error":"…"}`).
pub fn decode(line: &str) -> Result<Reading, String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("bad probe line: {e}"))?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        return Err(format!("the probe: {e}"));
    }
    let arr = v.as_array().ok_or("bad probe line: not an array")?;
    let mut r = Reading::new();
    for f in arr {
        let (Some(name), Some(unit), Some(kind), Some(value)) = (
            f.get(0).and_then(|x| x.as_str()),
            f.get(1).and_then(|x| x.as_str()),
            f.get(2).and_then(|x| x.as_str()),
            // null: not read at that sample (NaN written as JSON).
            f.get(3).map(|x| x.as_f64().unwrap_or(f64::NAN)),
        ) else {
            return Err("bad probe line: a field is not [name, unit, kind, value]".into());
        };
        let unit = match unit {
            "count" => "count",
            "bytes" => "bytes",
            "seconds" => "seconds",
            "%" => "%",
            _ => "1",
        };
        match kind {
            "c" => r.counter(name, unit, value),
            _ => r.gauge(name, unit, value),
        }
    }
    Ok(r)
}

/// `yace probe`: this machine's `system` figures every `interval`, `count`
/// times, as lines on `out`; ends early when `out` is closed.
pub fn probe(
    interval: Duration,
    count: u64,
    port: Option<u16>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "{PROBE_HEADER}")?;
    out.flush()?;
    let start = std::time::Instant::now();
    for k in 0..count {
        let line = match SystemFiles::read_local(port).and_then(|f| f.reading(port)) {
            Ok(r) => encode(&r),
            Err(e) => serde_json::json!({ "error": e }).to_string(),
        };
        writeln!(out, "{line}")?;
        out.flush()?;
        let next = start + interval * (k as u32 + 1);
        std::thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_survives_the_line() {
        let r = SystemFiles::read_local(Some(22))
            .unwrap()
            .reading(Some(22))
            .unwrap();
        let back = decode(&encode(&r)).unwrap();
        assert_eq!(back.fields.len(), r.fields.len());
        for (a, b) in back.fields.iter().zip(&r.fields) {
            assert_eq!((&a.name, a.unit, a.kind), (&b.name, b.unit, b.kind));
            // An unread value (no listener on port 22 here) stays unread.
            assert!(
                (a.value.is_nan() && b.value.is_nan())
                    || (a.value - b.value).abs() <= 1e-9 * b.value.abs().max(1.0),
                "{a:?} {b:?}"
            );
        }
        assert!(decode(r#"{"error":"boom"}"#).unwrap_err().contains("boom"));
    }

    #[test]
    fn the_shell_reader_parses_as_system_does() {
        // Run the remote command's shell loop here, twice, through sh.
        let cmd = remote_command(
            Some("/nonexistent/yace"),
            Some(22),
            Duration::from_millis(50),
        )
        .replace(&format!("-lt {}", 86_400_000 / 50), "-lt 2");
        let out = Command::new("sh").arg("-c").arg(&cmd).output().unwrap();
        let (tx, rx) = mpsc::sync_channel(8);
        let mode = Mutex::new("");
        read_frames(BufReader::new(&out.stdout[..]), Some(22), &tx, &mode);
        drop(tx);
        let got: Vec<_> = rx.iter().collect();
        assert_eq!(got.len(), 2, "{}", String::from_utf8_lossy(&out.stdout));
        let r = got[0].as_ref().unwrap();
        for name in [
            "cpu_idle_seconds",
            "load1",
            "mem_available_bytes",
            "listen_overflows",
            "tcp_port_established",
        ] {
            assert!(r.get(name).is_some(), "{name} missing");
        }
        assert_eq!(*mode.lock().unwrap(), "shell");
    }
}
