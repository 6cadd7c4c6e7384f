//! The `yace` binary: parses arguments, runs the command, maps the outcome
//! to an exit code. The only crate that prints.
//!
//! `args` holds the clap structs (a leaf), `flags` turns them into plans,
//! `cmd` has one module per command (doctor has its own, `doctor/`), and
//! `failure` the exit codes.

// System calls live in the libraries (host, engine): the binary has none.
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod doctor;
mod failure;
mod flags;

pub use failure::{exit, Failure};

use args::{
    FindMaxArgs, ReportArgs, RunArgs, ServeArgs, FIND_MAX_EXAMPLES, REPORT_EXAMPLES, RUN_EXAMPLES,
    SERVE_HELP,
};
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `yace --version`: the version, the commit and the build date (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("YACE_COMMIT"),
    ", built ",
    env!("YACE_BUILD_DATE"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "yace",
    version = VERSION,
    about = "yace (压测): load-test web servers, honestly",
    long_about = "yace (压测, \"load test\"): one fast binary to load-test web servers.\n\n\
        Run `yace run` with no URL to benchmark the embedded target, or give it a URL.",
    after_help = "Exit codes: 0 success, 1 runtime failure (unreachable target, a TLS or\n\
        protocol mismatch found before any load, every request failed, I/O),\n\
        2 bad input, 3 threshold breached, 4 disk full writing a result,\n\
        5 a shard too late to start (--start-at), 6 an incomplete merge,\n\
        130 interrupted (SIGINT), 143 terminated (SIGTERM)",
    // Help reads well in an 80-column terminal and in a pipe (clap's
    // fallback without a terminal is 100 columns, which wraps the examples).
    max_term_width = 80
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one load test (closed model by default).
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// ApacheBench's options and report on yace's engine (yace ab -h).
    Ab(Box<args::AbArgs>),
    /// Run the embedded reference target in the foreground.
    #[command(after_help = SERVE_HELP)]
    Serve(ServeArgs),
    /// Check this machine (and a target) before a big run.
    Doctor(doctor::DoctorArgs),
    /// Render saved results (yace run --json FILE, an HTML report, a
    /// find-max answer) as text, Markdown, CSV, JUnit or one HTML page.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// The rate a server must hold, from page views, step by step (and back).
    #[command(after_help = args::CAPACITY_EXAMPLES)]
    Capacity(args::CapacityArgs),
    /// The highest request rate at which every SLO holds: bracket by
    /// doubling, bisect to 2%, confirm with a long hold.
    #[command(name = "find-max", after_help = FIND_MAX_EXAMPLES)]
    FindMax(Box<FindMaxArgs>),
    /// Experiments: targets × sweeps × repetitions, and statistics that
    /// say whether a difference is real.
    Lab(args::LabArgs),
    /// Compare groups of saved results (before -- after): medians with
    /// confidence intervals, Welch's t on logs, a verdict in words.
    #[command(after_help = "Example:\n  yace compare before-*.json -- after-*.json")]
    Compare(args::CompareArgs),
    /// Print this machine's /proc figures as lines, for `--monitor ssh:HOST`
    /// (which runs it on the server over ssh; rarely run by hand).
    Probe(args::ProbeArgs),
    /// Turn real traffic into yace input: a curl command (a browser's Copy
    /// as cURL) into `yace run` flags or a scenario step, a HAR capture
    /// into a scenario.
    Import(args::ImportArgs),
    /// Join the shards of one run (`yace run --shard I/N`) into one
    /// result: counters and histograms merged exactly, never averaged.
    #[command(after_help = args::MERGE_EXAMPLES)]
    Merge(args::MergeArgs),
    /// A sharded run on Kubernetes: `yace k8s render` prints the manifests,
    /// `yace k8s run` runs them with your kubectl and merges the shards.
    K8s(args::K8sArgs),
    /// A sharded run on Slurm: `yace slurm render` prints the sbatch script.
    Slurm(args::SlurmArgs),
    /// A shell's completion script (bash, zsh, fish), from yace's own flags.
    #[command(after_help = args::COMPLETIONS_EXAMPLES)]
    Completions(args::CompletionsArgs),
    /// Manual pages (roff), from yace's own flags and help.
    #[command(after_help = args::MAN_EXAMPLES)]
    Man(args::ManArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(*a),
        Command::Ab(a) => cmd::ab::run(*a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Capacity(a) => cmd::capacity::run(a),
        Command::FindMax(a) => cmd::findmax::run(*a),
        Command::Probe(a) => cmd::probe::run(a),
        Command::Lab(a) => cmd::lab::run(a),
        Command::Compare(a) => cmd::lab::compare(a),
        Command::Import(a) => cmd::import::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::K8s(a) => match a.command {
            args::K8sCommand::Render(r) => cmd::render::k8s(r),
            args::K8sCommand::Run(r) => cmd::k8s::run(*r),
        },
        Command::Slurm(a) => match a.command {
            args::SlurmCommand::Render(r) => cmd::render::slurm(r),
        },
        Command::Completions(a) => cmd::completions::run(a),
        Command::Man(a) => cmd::man::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            for line in f.message.lines() {
                eprintln!("error: {line}");
            }
            ExitCode::from(f.code)
        }
    }
}
