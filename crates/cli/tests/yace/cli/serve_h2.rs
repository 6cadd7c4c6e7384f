//! `yace serve --h2-max-streams / --h2-max-requests`: bad values are usage
//! errors, good ones reach the wire. The HTTP/2 is spoken by hand, frame by
//! frame: just enough to read SETTINGS and meet a GOAWAY.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::cli::{stderr, yace};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;

#[test]
fn bad_h2_limits_are_usage_errors() {
    for (flag, value, says) in [
        ("--h2-max-streams", "0", "'0' is out of range"),
        ("--h2-max-streams", "4294967296", "is out of range"),
        ("--h2-max-streams", "many", "'many' is not a whole number"),
        ("--h2-max-requests", "0", "'0' is out of range"),
        ("--h2-max-requests", "1.5", "'1.5' is not a whole number"),
    ] {
        let out = yace()
            .args(["serve", "--port", "0", flag, value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let e = stderr(&out);
        assert!(e.contains(&format!("error: {flag}: ")), "{e}");
        assert!(e.contains(says), "{e}");
    }
}

/// `yace serve` on a free port, killed when dropped.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(args: &[&str]) -> (Serve, String) {
    let mut child = yace()
        .args(["serve", "--port", "0", "-t", "1"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let child = Serve(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("yace serve: listening on http://")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (child, addr)
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = len.to_be_bytes()[1..].to_vec();
    f.extend_from_slice(&[kind, flags]);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Reads one frame: its type, flags and payload.
fn read_frame(tcp: &mut TcpStream) -> (u8, u8, Vec<u8>) {
    let mut head = [0u8; 9];
    tcp.read_exact(&mut head).expect("a frame");
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0; len];
    tcp.read_exact(&mut payload).unwrap();
    (head[3], head[4], payload)
}

#[test]
fn serve_offers_its_h2_limits_on_the_wire() {
    let (_serve, addr) = serve(&["--h2-max-streams", "7", "--h2-max-requests", "2"]);
    let mut tcp = TcpStream::connect(&addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut hello = PREFACE.to_vec();
    hello.extend(frame(SETTINGS, 0, 0, &[]));
    // GET / twice: :method GET, :scheme http, :path / from HPACK's static
    // table, then :authority localhost as a literal.
    let mut get = vec![0x82, 0x86, 0x84, 0x41, 9];
    get.extend_from_slice(b"localhost");
    for stream in [1, 3] {
        hello.extend(frame(0x1, 0x5, stream, &get)); // END_STREAM | END_HEADERS
    }
    tcp.write_all(&hello).unwrap();

    let (kind, flags, payload) = read_frame(&mut tcp);
    assert_eq!((kind, flags), (SETTINGS, 0), "the server's SETTINGS first");
    let offered = payload.chunks(6).find_map(|s| {
        (u16::from_be_bytes([s[0], s[1]]) == MAX_CONCURRENT_STREAMS)
            .then(|| u32::from_be_bytes([s[2], s[3], s[4], s[5]]))
    });
    assert_eq!(offered, Some(7));
    // After the second request, a graceful GOAWAY (NO_ERROR); a bounded
    // number of frames (SETTINGS ack, heads, bodies, PING) come first.
    for _ in 0..32 {
        let (kind, _, payload) = read_frame(&mut tcp);
        if kind == GOAWAY {
            assert_eq!(&payload[4..8], &[0, 0, 0, 0], "NO_ERROR");
            return;
        }
    }
    panic!("no GOAWAY after --h2-max-requests 2");
}
