//! `--source-addrs`: connections leave from several local addresses, dealt
//! round-robin, as the server sees them; bad lists are refused before any
//! load; `yace doctor` checks ports per source address.

use crate::cli::{server, settled, stderr, stdout, temp_path, u, yace};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// The peers of established IPv4 connections whose local port is `port`,
/// as the kernel holds them (/proc/net/tcp): the server's side of each.
fn peers_of(port: u16) -> Vec<Ipv4Addr> {
    let text = std::fs::read_to_string("/proc/net/tcp").expect("read /proc/net/tcp");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (local, remote, state) = (f.get(1)?, f.get(2)?, f.get(3)?);
            let local_port = u16::from_str_radix(local.split(':').nth(1)?, 16).ok()?;
            // 01: ESTABLISHED. The address is in network order, printed as a host-order u32.
            (local_port == port && *state == "01").then_some(())?;
            let ip = u32::from_str_radix(remote.split(':').next()?, 16).ok()?;
            // 127.0.0.1: yace's readiness probe, not the load.
            Some(Ipv4Addr::from(u32::from_be(ip))).filter(|ip| *ip != Ipv4Addr::LOCALHOST)
        })
        .collect()
}

#[test]
fn six_connections_over_three_addresses_are_two_each() {
    let s = server();
    let port: u16 = s
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let json = temp_path("sources-spread.json");
    // Four workers with 2, 2, 1 and 1 slots (dealt w + k·4): only a deal
    // by the global slot index gives each address exactly two; one by each
    // worker's own slot index would give 127.0.0.2 four and .4 none.
    let child = yace()
        .args(["run", &s.url(), "-c", "6", "-t", "4", "-d", "2s", "-q"])
        .args(["--source-addrs", "127.0.0.2-127.0.0.4", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // What the server side holds once all six are up (bounded wait).
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut peers = peers_of(port);
    while peers.len() < 6 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        peers = peers_of(port);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut per: BTreeMap<Ipv4Addr, usize> = BTreeMap::new();
    for p in &peers {
        *per.entry(*p).or_default() += 1;
    }
    let want: BTreeMap<Ipv4Addr, usize> = [
        (Ipv4Addr::new(127, 0, 0, 2), 2),
        (Ipv4Addr::new(127, 0, 0, 3), 2),
        (Ipv4Addr::new(127, 0, 0, 4), 2),
    ]
    .into();
    assert_eq!(per, want, "server-side peers: {peers:?}");
    // Keep-alive held them: six load connections (plus the readiness probe).
    let seen = settled(&s);
    assert_eq!(seen.connections, 7, "{seen:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(u(&v, "summary.connections_opened"), 6);
    assert_eq!(u(&v, "summary.errors"), 0);
    assert!(u(&v, "summary.responses") > 0);
    // The result records where connections came from.
    assert_eq!(
        v["plan"]["socket"]["sources"],
        serde_json::json!(["127.0.0.2", "127.0.0.3", "127.0.0.4"])
    );
}

#[test]
fn bad_lists_are_refused_before_any_load() {
    let s = server();
    let cases: [(&str, &[&str]); 3] = [
        (
            "127.0.0.9-127.0.0.2",
            &[
                "--source-addrs: '127.0.0.9-127.0.0.2' runs backwards",
                "lower address first",
            ],
        ),
        (
            "127.0.0.2,203.0.113.9",
            &[
                "--source-addrs: cannot connect from 203.0.113.9",
                "1 of the 2 addresses is not this machine's",
                "ip addr add",
            ],
        ),
        (
            "::1",
            &["--source-addrs: the source addresses are IPv6 but the target is IPv4"],
        ),
    ];
    for (list, wants) in cases {
        let out = yace()
            .args([
                "run",
                &s.url(),
                "-c",
                "2",
                "-d",
                "1s",
                "-q",
                "--source-addrs",
                list,
            ])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{list}: {err}");
        for w in wants {
            assert!(err.contains(w), "{list}: no '{w}' in: {err}");
        }
    }
    // Refused before the probe connection, let alone the load.
    assert_eq!(settled(&s).connections, 0);
}

#[test]
fn doctor_checks_ports_per_source_address() {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let mut it = range.split_whitespace().map(|p| p.parse::<u64>().unwrap());
    let ports = it.next().map(|lo| it.next().unwrap() - lo + 1).unwrap();
    let out = yace()
        .args([
            "doctor",
            "-c",
            "100k",
            "--source-addrs",
            "127.0.0.2-127.0.0.9",
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    let line = |name: &str| -> String {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no '{name}' line in:\n{text}"))
            .to_owned()
    };
    assert!(
        text.starts_with("yace doctor: 100,000 connections, ")
            && text
                .lines()
                .next()
                .unwrap()
                .ends_with(", from 8 source addresses"),
        "{text}"
    );
    let p = line("ports");
    assert!(p.contains("8 source addresses × "), "{text}");
    assert!(
        p.contains("100,000 connections, dealt round-robin: 12,500 per address"),
        "{text}"
    );
    if ports / 4 * 3 >= 12_500 {
        assert!(p.starts_with("ok    ports"), "{text}");
    }
    assert!(
        line("sources").starts_with(
            "ok    sources     8 source addresses (127.0.0.2 … 127.0.0.9) can be bound"
        ),
        "{text}"
    );
    // Too few addresses for the connections, and one that is not local.
    let out = yace()
        .args([
            "doctor",
            "-c",
            "100k",
            "--source-addrs",
            "127.0.0.2,203.0.113.9",
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let p = text.lines().find(|l| l.contains(" ports ")).unwrap();
    if ports < 50_000 {
        assert!(
            p.starts_with(
                "fail  ports       100,000 connections, dealt round-robin: 50,000 per address"
            ),
            "{text}"
        );
        assert!(text.contains("fix: give at least "), "{text}");
    }
    assert!(
        text.contains("fail  sources     1 of 2 source addresses cannot be bound: 203.0.113.9"),
        "{text}"
    );
    assert!(
        text.contains("fix: ip addr add 203.0.113.9/32 dev IFACE"),
        "{text}"
    );
    // The JSON document names them too.
    let out = yace()
        .args(["doctor", "--json", "--source-addrs", "127.0.0.2-127.0.0.3"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["plan"]["source_addrs"],
        serde_json::json!(["127.0.0.2", "127.0.0.3"])
    );
    let sources = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sources")
        .unwrap();
    assert_eq!(sources["level"], "ok", "{v}");
    // A bad list is bad input.
    let out = yace()
        .args(["doctor", "--source-addrs", "127.0.0.9-127.0.0.2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("runs backwards"), "{}", stderr(&out));
}
