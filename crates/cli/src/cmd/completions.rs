//! `yace completions bash|zsh|fish`: the shell's completion script, made
//! from the clap definition (clap_complete), so it never lags the flags.

use crate::args::{CompletionsArgs, ShellArg};
use crate::{exit, Failure};
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::Write;

pub fn run(a: CompletionsArgs) -> Result<u8, Failure> {
    let shell = match a.shell {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Zsh => Shell::Zsh,
        ShellArg::Fish => Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut crate::Cli::command(), "yace", &mut script);
    write_out(&script, "yace completions")
}

/// Writes `bytes` to standard output; a reader that went away (`| head`)
/// is no failure.
pub fn write_out(bytes: &[u8], who: &str) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(exit::OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(exit::OK),
        Err(e) => Err(Failure::runtime(format!("{who}: standard output: {e}"))),
    }
}
