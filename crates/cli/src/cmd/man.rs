//! `yace man [--out DIR]`: manual pages in roff, made from the clap
//! definition (clap_mangen): `yace(1)`, and with `--out` one page per
//! subcommand too (`yace-run(1)`, `yace-import-access-log(1)`, …).

use crate::args::ManArgs;
use crate::Failure;
use clap::CommandFactory;
use std::path::Path;

pub fn run(a: ManArgs) -> Result<u8, Failure> {
    let cmd = crate::Cli::command();
    match a.out {
        None => super::completions::write_out(&page(&cmd)?, "yace man"),
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| {
                Failure::usage(format!(
                    "yace man: --out {}: cannot create: {e}",
                    dir.display()
                ))
            })?;
            let mut written = 0;
            write_pages(&cmd, "yace", &dir, &mut written)?;
            eprintln!("yace man: {written} pages in {}", dir.display());
            Ok(crate::exit::OK)
        }
    }
}

/// One page in roff.
fn page(cmd: &clap::Command) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(|e| Failure::runtime(format!("yace man: {e}")))?;
    Ok(out)
}

/// `NAME.1` for `cmd`, then a page for each visible subcommand, named
/// `NAME-SUB` as git names its pages.
fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut usize,
) -> Result<(), Failure> {
    let named = cmd.clone().name(name.to_owned());
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, page(&named)?)
        .map_err(|e| Failure::runtime(format!("yace man: {}: {e}", path.display())))?;
    *written += 1;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}
