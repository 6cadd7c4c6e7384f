//! A real terminal for the live views' tests: a tmux server of the test's
//! own (its own socket, no user config) with one pane running `yace`, read
//! with capture-pane and driven with send-keys.

use crate::cli::{stderr, temp_path};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of this test's own (its own socket, no user config),
/// with one pane running a command; killed when dropped.
pub struct Pane {
    socket: PathBuf,
}

impl Pane {
    /// Runs `yace ARGS` in a `width`×`height` pane with `env` set; when it
    /// ends, the pane prints `EXIT=<code>` and stays for reading.
    pub fn start(name: &str, width: u16, height: u16, env: &[(&str, &str)], args: &[&str]) -> Pane {
        let socket = temp_path(&format!("tmux-{name}"));
        let _ = std::fs::remove_file(&socket);
        let envs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        let cmd = format!(
            "env YACE_LANG=en {} {} {}; echo EXIT=$?; sleep 60",
            envs.join(" "),
            env!("CARGO_BIN_EXE_yace"),
            quoted.join(" ")
        );
        let pane = Pane { socket };
        let out = pane
            .tmux()
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "t"])
            .args(["-x", &width.to_string(), "-y", &height.to_string(), &cmd])
            .output()
            .expect("tmux runs (Debian package tmux; scripts/test.sh installs it)");
        assert!(out.status.success(), "tmux: {}", stderr(&out));
        pane
    }

    pub fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket);
        c
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = self.tmux().args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// The screen and the scrollback above it.
    pub fn scrollback(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"])
    }

    /// The screen with its colours and attributes as escape codes.
    pub fn screen_with_codes(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-t", "t"])
    }

    /// The pane shows the alternate screen (a full-screen program's).
    pub fn alternate(&self) -> bool {
        self.run(&["display", "-p", "-t", "t", "#{alternate_on}"])
            .trim()
            == "1"
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend(keys);
        self.run(&args);
    }

    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "t", "-l", text]);
    }

    pub fn resize(&self, width: u16, height: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// Waits (at most `secs`) until the screen satisfies `ok`; returns it.
    pub fn wait(&self, secs: u64, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "no {what} on screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the command's end; its exit code.
    pub fn exit_code(&self, secs: u64) -> i32 {
        let s = self.wait(secs, "EXIT=", |s| s.contains("EXIT="));
        let at = s.find("EXIT=").unwrap() + 5;
        s[at..].split_whitespace().next().unwrap().parse().unwrap()
    }

    /// The PID of the `yace` the pane's shell runs.
    pub fn yace_pid(&self) -> i32 {
        let shell: i32 = self
            .run(&["display", "-p", "-t", "t", "#{pane_pid}"])
            .trim()
            .parse()
            .unwrap();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid …
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let comm = &stat[stat.find('(').unwrap() + 1..close];
            let ppid: i32 = stat[close + 2..]
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            if ppid == shell && comm == "yace" {
                return e.file_name().to_string_lossy().parse().unwrap();
            }
        }
        panic!("no yace under the pane's shell {shell}");
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        // Only this test's tmux server, on its own socket.
        let _ = self.tmux().arg("kill-server").output();
        let _ = std::fs::remove_file(&self.socket);
    }
}
