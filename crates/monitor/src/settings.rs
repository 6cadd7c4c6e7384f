//! The settings a diagnosis names, read where the server keeps them: the
//! config file of a watched process (`pid:`, `pidfile:`, `proc:`), found
//! from its command line at the end of the run. php-fpm's master shows its
//! config in its title (`php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)`),
//! Apache takes `-f FILE`. Only what a file says plainly is read; a value
//! that cannot be found is left out, never guessed.

use crate::procfs;
use stats::monitor::{Monitoring, ServerSetting};
use std::path::{Path, PathBuf};

/// Fills `m.settings` from the watched processes on this machine.
pub fn read(m: &mut Monitoring) {
    let mut out = Vec::new();
    for s in m.sources.iter().filter(|s| s.kind == "process") {
        let Some(pid) = root_pid(&s.spec) else {
            continue;
        };
        let Some(program) = comm(pid) else { continue };
        let cmdline = cmdline(pid);
        let found = if program.starts_with("php-fpm") {
            fpm_config(&cmdline).map(|f| (f, vec!["pm.max_children", "listen.backlog"]))
        } else if program.starts_with("apache2") || program.starts_with("httpd") {
            apache_config(&cmdline).map(|f| {
                (
                    f,
                    vec![
                        "MaxRequestWorkers",
                        "ServerLimit",
                        "ThreadsPerChild",
                        "ListenBacklog",
                    ],
                )
            })
        } else {
            None
        };
        out.push(ServerSetting {
            source: s.spec.clone(),
            program: program.clone(),
            name: "program".into(),
            value: f64::from(pid),
            file: String::new(),
        });
        let Some((file, names)) = found else { continue };
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for name in names {
            if let Some(value) = setting(&text, name) {
                out.push(ServerSetting {
                    source: s.spec.clone(),
                    program: program.clone(),
                    name: name.into(),
                    value,
                    file: file.display().to_string(),
                });
            }
        }
    }
    m.settings = out;
}

/// The process a source's spec names: `pid:N`, the PID in `pidfile:PATH`,
/// or for `proc:NAME` the oldest process of that name (the master).
fn root_pid(spec: &str) -> Option<u32> {
    if let Some(n) = spec.strip_prefix("pid:") {
        return n.trim().parse().ok();
    }
    if let Some(f) = spec.strip_prefix("pidfile:") {
        return std::fs::read_to_string(f).ok()?.trim().parse().ok();
    }
    let name = spec.strip_prefix("proc:")?;
    procfs::pids_named(name).into_iter().min()
}

fn comm(pid: u32) -> Option<String> {
    let c = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(c.trim().to_string())
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// php-fpm's master retitles itself `php-fpm: master process (FILE)`;
/// started as `php-fpm -y FILE` (or `--fpm-config`) before it does.
fn fpm_config(cmdline: &[String]) -> Option<PathBuf> {
    let joined = cmdline.join(" ");
    if let Some(at) = joined.find("master process (") {
        let rest = &joined[at + "master process (".len()..];
        return rest.rfind(')').map(|end| PathBuf::from(&rest[..end]));
    }
    flag_value(cmdline, &["-y", "--fpm-config"])
}

/// Apache's `-f FILE` (relative to `-d ROOT` when not absolute); Debian's
/// packaged server keeps its MPM settings in mods-enabled.
fn apache_config(cmdline: &[String]) -> Option<PathBuf> {
    if let Some(f) = flag_value(cmdline, &["-f"]) {
        if f.is_absolute() {
            return Some(f);
        }
        let root = flag_value(cmdline, &["-d"])?;
        return Some(root.join(f));
    }
    ["mpm_prefork", "mpm_event", "mpm_worker"]
        .iter()
        .map(|m| PathBuf::from(format!("/etc/apache2/mods-enabled/{m}.conf")))
        .find(|p| Path::new(p).exists())
}

fn flag_value(cmdline: &[String], flags: &[&str]) -> Option<PathBuf> {
    let mut it = cmdline.iter();
    while let Some(a) = it.next() {
        for f in flags {
            if a == f {
                return it.next().map(PathBuf::from);
            }
            if let Some(v) = a.strip_prefix(&format!("{f}=")) {
                return Some(PathBuf::from(v));
            }
        }
    }
    None
}

/// The value of `name` in a php-fpm (`name = 5`) or Apache (`Name 5`)
/// config: the last uncommented line that sets it to a number, when the
/// file sets it once (several pools or virtual hosts: ambiguous, none).
fn setting(text: &str, name: &str) -> Option<f64> {
    let values: Vec<f64> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with(';') && !l.starts_with('#'))
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?;
            let rest = rest.trim_start();
            let rest = rest.strip_prefix('=').unwrap_or(rest).trim();
            // A word boundary: `ServerLimit` must not match `ServerLimitX`.
            if l.len() > name.len() && !l[name.len()..].starts_with([' ', '\t', '=']) {
                return None;
            }
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
        .collect();
    match values.as_slice() {
        [v] => Some(*v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_from_either_syntax_once() {
        let fpm = "[www]\n; pm.max_children = 99\npm.max_children = 2\npm.max_children_x = 7\n";
        assert_eq!(setting(fpm, "pm.max_children"), Some(2.0));
        let apache = "# MaxRequestWorkers 400\nServerLimit 5\nMaxRequestWorkers\t5\n";
        assert_eq!(setting(apache, "MaxRequestWorkers"), Some(5.0));
        assert_eq!(setting(apache, "ServerLimit"), Some(5.0));
        // Two pools, two values: which one was meant is not known.
        assert_eq!(
            setting(
                "pm.max_children = 2\npm.max_children = 8\n",
                "pm.max_children"
            ),
            None
        );
        assert_eq!(
            setting("MaxRequestWorkers {{N}}\n", "MaxRequestWorkers"),
            None
        );
    }

    #[test]
    fn config_files_are_found_on_the_command_line() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            fpm_config(&v("php-fpm: master process (/tmp/a b/php-fpm.conf)")),
            Some(PathBuf::from("/tmp/a b/php-fpm.conf"))
        );
        assert_eq!(
            fpm_config(&v("php-fpm8.2 -F -y /tmp/x.conf")),
            Some(PathBuf::from("/tmp/x.conf"))
        );
        assert_eq!(
            apache_config(&v("apache2 -f /tmp/s/apache.conf -DFOREGROUND")),
            Some(PathBuf::from("/tmp/s/apache.conf"))
        );
        assert_eq!(
            apache_config(&v("apache2 -d /srv -f conf/httpd.conf")),
            Some(PathBuf::from("/srv/conf/httpd.conf"))
        );
    }
}
