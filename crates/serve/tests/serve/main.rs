//! The embedded server's integration tests, one binary with a module per
//! topic (servers are started per test on free ports).

mod common;
mod http2;
mod lifecycle;
mod misbehave;
mod protocol;
mod routes;
