//! The `yace` binary's integration tests, one test binary with a module
//! per topic (STYLE.md §12): `cli` (commands, flags, outputs, signals),
//! `hostile` (misbehaving servers) and `tls` (HTTPS and HTTP/2 over TLS,
//! nginx as a peer). Two topics stay binaries of their own, for a reason:
//! `models` is timing-sensitive (its tests take turns and must not share
//! the CPUs with other tests), and `stacks` drives real Apache, nginx and
//! php-fpm from Debian packages (long, and needs them installed).

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod hostile;
mod tls;
