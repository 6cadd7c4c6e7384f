//! How each command names the plan's fields in its messages.

use plan::{Field, Spelling};

/// `yace run`'s names for the plan's fields.
#[derive(Debug, Clone, Copy)]
pub struct RunFlags;

impl Spelling for RunFlags {
    fn name(&self, f: Field) -> &'static str {
        match f {
            Field::Url => "URL",
            Field::Connections => "-c/--connections",
            Field::Requests => "-n/--requests",
            Field::Duration => "-d/--duration",
            Field::Threads => "-t/--threads",
            Field::Rate => "--rate",
            Field::RateStages => "--stages",
            Field::MaxInflight => "--max-inflight",
            Field::Late => "--late",
            Field::LateAfter => "--late-after",
            Field::Users => "-u/--users",
            Field::RampUp => "--ramp-up",
            Field::RampDown => "--ramp-down",
            Field::UserStages => "--user-stages",
            Field::Pacing => "--pacing",
            Field::Think => "--think",
            Field::Method => "-m/--method",
            Field::Header => "-H/--header",
            Field::BodyFile => "--body-file",
            Field::Keepalive => "--no-keepalive",
            Field::Http2 => "--http2",
            Field::Streams => "--streams",
            Field::Timeout => "--timeout",
            Field::ConnectTimeout => "--connect-timeout",
            // `yace run` has no proxy flag; only a plan file could set one.
            Field::Proxy => "proxy",
            Field::Insecure => "--insecure",
            Field::CaCert => "--cacert",
            Field::ClientCert => "--cert",
            Field::ClientKey => "--key",
            Field::MaxHead => "--max-head",
            Field::MaxFields => "--max-fields",
        }
    }

    fn usage(&self, f: Field) -> &'static str {
        match f {
            Field::Connections => "-c",
            Field::Requests => "-n",
            Field::Duration => "-d",
            Field::Threads => "-t",
            Field::Users => "-u",
            Field::Method => "-m",
            Field::Header => "-H",
            other => self.name(other),
        }
    }
}

/// `yace ab`'s names for the plan's fields: ab's own flags.
#[derive(Debug, Clone, Copy)]
pub struct AbFlags;

impl Spelling for AbFlags {
    fn name(&self, f: Field) -> &'static str {
        match f {
            Field::Connections => "-c",
            Field::Requests => "-n",
            Field::Duration => "-t",
            Field::Threads => "--threads",
            Field::Method => "-m",
            Field::Header => "-H",
            Field::BodyFile => "-p/-u",
            Field::Keepalive => "-k",
            Field::Timeout | Field::ConnectTimeout => "-s",
            Field::Proxy => "-X",
            // Fields ab has no flag for cannot be at fault in ab's plans.
            other => RunFlags.name(other),
        }
    }
}
