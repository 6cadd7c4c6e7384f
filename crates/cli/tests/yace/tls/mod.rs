//! HTTPS and HTTP/2 against real nginx (Debian's, with `ssl` and `http2`):
//! verification failures with the default options, success with --cacert
//! and --insecure, counts exact at the server, session resumption, mutual
//! TLS, the TLS outcome classes, and HTTP/2 multiplexing, stream limits and
//! GOAWAY (in `h2.rs`). Certificates are generated here with rcgen.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{self, yace};

mod h2;

/// `yace run ARGS` with a JSON result; each call gets its own file.
fn run(args: &[&str]) -> (std::process::Output, Value) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    support::run_json(&format!("tls-{n}"), args)
}

/// A private CA, and certificates it signed, written as PEM files.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn make_pki(dir: &Path) -> Pki {
    std::fs::create_dir_all(dir).unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name
        .push(DnType::CommonName, "yace test CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    write(dir, "ca.pem", &ca_cert.pem());
    let issuer = Issuer::new(ca, ca_key);
    let leaf = |name: &str, expired: bool, client: bool| {
        let mut p = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        p.subject_alt_names = vec![SanType::DnsName("localhost".try_into().unwrap())];
        p.distinguished_name.push(
            DnType::CommonName,
            if client { "yace client" } else { "localhost" },
        );
        if expired {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2020, 2, 1);
        }
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &issuer).unwrap();
        write(dir, &format!("{name}.pem"), &cert.pem());
        write(dir, &format!("{name}.key"), &key.serialize_pem());
    };
    leaf("server", false, false);
    leaf("expired", true, false);
    leaf("client", false, true);
    Pki {
        dir: dir.to_owned(),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Our own nginx: one TLS server, one with an expired certificate, one
/// plain-HTTP, one requiring client certificates, HTTP/2 over TLS and as
/// h2c, and HTTP/2 with few streams and GOAWAY after 50 requests per
/// connection; stub_status counts requests.
struct Nginx {
    child: Child,
    tls: u16,
    expired: u16,
    plain: u16,
    mtls: u16,
    h2: u16,
    h2c: u16,
    h2_strict: u16,
    status: u16,
    pki: Pki,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.pki.dir);
    }
}

impl Nginx {
    fn start() -> Nginx {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists());
        let nginx = nginx.expect("nginx is not installed: run scripts/test.sh, which installs it");
        static STARTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = STARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("yace-tls-{}-{k}", std::process::id()));
        let pki = make_pki(&dir);
        let (tls, expired, plain, mtls, status) = (
            free_port(),
            free_port(),
            free_port(),
            free_port(),
            free_port(),
        );
        let (h2, h2c, h2_strict) = (free_port(), free_port(), free_port());
        std::fs::create_dir_all(dir.join("www")).unwrap();
        // 300 KB: many DATA frames, past the default 64 KiB window.
        let big: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(dir.join("www/big.txt"), big).unwrap();
        let d = dir.to_string_lossy();
        let conf = format!(
            r#"
daemon off;
master_process off;
worker_processes 1;
user root;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  keepalive_requests 1000000;
  ssl_session_cache shared:S:1m;
  server {{ listen 127.0.0.1:{tls} ssl; server_name localhost;
    ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;
    location / {{ return 200 "hello tls\n"; }} }}
  server {{ listen 127.0.0.1:{expired} ssl; ssl_certificate {d}/expired.pem; ssl_certificate_key {d}/expired.key;
    location / {{ return 200 "old\n"; }} }}
  server {{ listen 127.0.0.1:{plain}; location / {{ return 200 "plain\n"; }} }}
  server {{ listen 127.0.0.1:{mtls} ssl; ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;
    ssl_client_certificate {d}/ca.pem; ssl_verify_client on;
    location / {{ return 200 "hello client\n"; }} }}
  server {{ listen 127.0.0.1:{status}; location / {{ stub_status; }} }}
  server {{ listen 127.0.0.1:{h2} ssl http2; server_name localhost;
    ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;
    location / {{ return 200 "hello h2\n"; }}
    location /big.txt {{ root {d}/www; }} }}
  server {{ listen 127.0.0.1:{h2c} http2; location / {{ return 200 "hello h2c\n"; }} }}
  server {{ listen 127.0.0.1:{h2_strict} ssl http2; server_name localhost;
    ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;
    keepalive_requests 50; http2_max_concurrent_streams 8;
    location / {{ return 200 "few streams\n"; }} }}
}}
"#
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = Command::new(nginx)
            .args([
                "-p",
                &d,
                "-c",
                &format!("{d}/nginx.conf"),
                "-e",
                &format!("{d}/error.log"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let n = Nginx {
            child,
            tls,
            expired,
            plain,
            mtls,
            h2,
            h2c,
            h2_strict,
            status,
            pki,
        };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", status)).is_ok() {
                return n;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!(
            "nginx did not start: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
    }
}

/// One nginx for the cases, stopped (by Drop) when they end, pass or fail.
fn with_nginx<T>(f: impl FnOnce(&Nginx) -> T) -> T {
    let nginx = Nginx::start();
    f(&nginx)
}

/// Requests nginx has handled so far (stub_status), this read included.
fn served(ng: &Nginx) -> u64 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", ng.status)).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut t = String::new();
    s.read_to_string(&mut t).unwrap();
    let line = t
        .lines()
        .find(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .unwrap();
    line.split_whitespace()
        .nth(2)
        .unwrap()
        .parse::<u64>()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `yace run ARGS` that the pre-flight stops before any load: exit 1, one
/// `error:` line naming `class`, no result written.
fn refused(args: &[&str], class: &str) -> std::process::Output {
    let path = support::temp_path("tls-refused.json");
    let _ = std::fs::remove_file(&path);
    let out = yace()
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&path)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no load sent") && err.contains(class),
        "{class}: {err}"
    );
    assert!(!path.exists(), "no result: no run was made");
    out
}

fn n(v: &Value, path: &str) -> u64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_u64()
        .unwrap_or_else(|| panic!("{path}: {v}"))
}

#[test]
fn tls() {
    // One test function: the cases share one nginx and run in order.
    with_nginx(|ng| {
        let url = format!("https://localhost:{}/", ng.tls);
        let ca = ng.pki.path("ca.pem");

        // 1. Default: the system roots do not know our CA. The pre-flight
        // handshake says so before any load, with the fix.
        let before = served(ng);
        let out = refused(&[&url, "-c", "2", "-n", "10", "-t", "1"], "tls_unknown_ca");
        assert!(stderr(&out).contains("--cacert FILE"), "explained");
        assert_eq!(served(ng) - before - 1, 0, "no request reached nginx");

        // 2. --cacert: verified, counts exact at the server.
        let before = served(ng);
        let (out, r) = run(&[&url, "-c", "4", "-n", "400", "-t", "2", "--cacert", &ca]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(n(&r, "summary.responses"), 400, "{}", r["outcomes"]);
        // The later read counts the earlier one too.
        assert_eq!(served(ng) - before - 1, 400);
        assert_eq!(r["tls"]["verified"], true);
        assert!(
            r["tls"]["version"].as_str().unwrap().contains("TLS"),
            "{}",
            r["tls"]
        );
        assert!(r["summary"]["tls"].is_object(), "the tls phase is reported");
        let o = String::from_utf8_lossy(&out.stdout);
        assert!(
            o.contains("certificate verified") && o.contains("tls "),
            "{o}"
        );

        // 3. --insecure: works, and says so loudly.
        let (out, r) = run(&[&url, "-c", "2", "-n", "20", "--insecure"]);
        assert!(out.status.success());
        assert_eq!(n(&r, "summary.responses"), 20);
        assert_eq!(r["tls"]["verified"], false);
        assert!(r["warnings"].to_string().contains("verification was OFF"));
        assert!(String::from_utf8_lossy(&out.stdout).contains("NOT VERIFIED"));

        // 4. Host name mismatch: the certificate is for localhost, not 127.0.0.1.
        let ip_url = format!("https://127.0.0.1:{}/", ng.tls);
        refused(
            &[&ip_url, "-c", "1", "-n", "3", "--cacert", &ca],
            "tls_hostname_mismatch",
        );

        // 5. Expired certificate.
        let old = format!("https://localhost:{}/", ng.expired);
        refused(
            &[&old, "-c", "1", "-n", "3", "--cacert", &ca],
            "tls_expired",
        );

        // 6. Plain HTTP on an https:// URL.
        let plain = format!("https://localhost:{}/", ng.plain);
        let out = refused(
            &[&plain, "-c", "1", "-n", "3", "--cacert", &ca],
            "tls_not_tls",
        );
        assert!(
            stderr(&out).contains("use http://localhost:"),
            "{}",
            stderr(&out)
        );

        // 7. Session resumption makes reconnects cheaper; --no-tls-resume turns it off.
        let (_, resumed) = run(&[
            &url,
            "-c",
            "2",
            "-n",
            "300",
            "-t",
            "1",
            "--no-keepalive",
            "--cacert",
            &ca,
        ]);
        let (_, full) = run(&[
            &url,
            "-c",
            "2",
            "-n",
            "300",
            "-t",
            "1",
            "--no-keepalive",
            "--cacert",
            &ca,
            "--no-tls-resume",
        ]);
        assert_eq!(n(&resumed, "summary.responses"), 300);
        assert!(
            n(&resumed, "tls.resumed_handshakes") >= 290,
            "{}",
            resumed["tls"]
        );
        assert_eq!(n(&full, "tls.resumed_handshakes"), 0);
        assert_eq!(n(&full, "tls.full_handshakes"), 300);
        let mean = |r: &Value| r["summary"]["tls"]["mean_us"].as_f64().unwrap();
        assert!(
            mean(&resumed) < mean(&full),
            "resumed {} µs vs full {} µs",
            mean(&resumed),
            mean(&full)
        );

        // 8. Mutual TLS: refused without a client certificate, served with one.
        let m = format!("https://localhost:{}/", ng.mtls);
        let (_, r) = run(&[&m, "-c", "1", "-n", "3", "--cacert", &ca]);
        assert_eq!(
            n(&r, "summary.responses"),
            3,
            "nginx answers 400 without a certificate"
        );
        assert_eq!(r["statuses"]["400"], 3);
        let (_, r) = run(&[
            &m,
            "-c",
            "1",
            "-n",
            "3",
            "--cacert",
            &ca,
            "--cert",
            &ng.pki.path("client.pem"),
            "--key",
            &ng.pki.path("client.key"),
        ]);
        assert_eq!(r["statuses"]["200"], 3, "{}", r["outcomes"]);

        // 9. yace ab prints ab's SSL/TLS Protocol line.
        let out = yace()
            .args(["ab", "-n", "20", "-c", "2", "--cacert", &ca, &url])
            .output()
            .unwrap();
        let o = String::from_utf8_lossy(&out.stdout);
        assert!(o.contains("SSL/TLS Protocol:       TLS"), "{o}");
        assert!(o.contains("TLS Server Name:        localhost"), "{o}");

        // 10. A bad --cacert file is a usage error naming the file.
        let out = yace()
            .args(["run", &url, "-n", "1", "--cacert", "/no/such/ca.pem"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--cacert /no/such/ca.pem"));
    });
}

#[test]
fn embedded_target_serves_https_with_its_own_certificate() {
    let (s, ca, url) = embedded_https("ca");
    assert!(s.url().starts_with("https://"));
    let (out, r) = run(&[&url, "-c", "4", "-n", "300", "--cacert", &ca]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(n(&r, "summary.responses"), 300, "{}", r["outcomes"]);
    assert_eq!(support::settled(&s).requests, 300);
    assert_eq!(r["tls"]["verified"], true);
    // Without --cacert the self-signed certificate is not trusted: the
    // pre-flight stops the run before any request.
    let before = support::settled(&s).requests;
    refused(&[&url, "-c", "1", "-n", "2"], "tls_unknown_ca");
    assert_eq!(support::settled(&s).requests, before);
    s.shutdown();
}

/// The embedded target over HTTPS with a fresh self-signed certificate;
/// returns it, the certificate's PEM file (for --cacert) and its URL.
fn embedded_https(name: &str) -> (serve::Server, String, String) {
    let id = serve::TlsIdentity::self_signed().unwrap();
    assert_eq!(
        id.fingerprint().unwrap().len(),
        32 * 3 - 1,
        "SHA-256 as AA:BB:…"
    );
    let s = serve::Server::start(serve::Config {
        tls: Some(id.clone()),
        ..Default::default()
    })
    .unwrap();
    let ca = support::temp_path(&format!("{name}.pem"));
    std::fs::write(&ca, &id.cert_pem).unwrap();
    let url = format!("https://localhost:{}/", s.local_addr().port());
    (s, ca.to_string_lossy().into_owned(), url)
}
