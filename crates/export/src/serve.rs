//! The scrape endpoint: `GET /metrics` on a thread of its own.
//!
//! One connection at a time, each with a 1 s read and write timeout: a
//! stuck scraper costs at most that, and never the run. The observer only
//! swaps the text in under a lock held for a copy.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug)]
pub struct Endpoint {
    addr: SocketAddr,
    text: Arc<Mutex<String>>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Listens on `addr` (port 0: any free one).
    pub fn start(addr: SocketAddr) -> io::Result<Endpoint> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let text = Arc::new(Mutex::new(String::from("# EOF\n")));
        let done = Arc::new(AtomicBool::new(false));
        let (t, d) = (text.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("yace-metrics".into())
            .spawn(move || {
                while !d.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((s, _)) => {
                            let _ = answer(s, &t);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
            })?;
        Ok(Endpoint {
            addr,
            text,
            done,
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// CPU seconds its thread has used so far.
    pub fn cpu_s(&self) -> f64 {
        self.thread
            .as_ref()
            .and_then(host::thread_cpu_s_of)
            .unwrap_or(0.0)
    }

    /// What a scrape gets from now on.
    pub fn publish(&self, text: String) {
        *self.text.lock().unwrap_or_else(|e| e.into_inner()) = text;
    }

    /// Stops listening.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.halt();
    }
}

fn answer(s: TcpStream, text: &Mutex<String>) -> io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(Duration::from_secs(1)))?;
    s.set_write_timeout(Some(Duration::from_secs(1)))?;
    let mut r = BufReader::new(s.try_clone()?);
    let mut first = String::new();
    r.read_line(&mut first)?;
    // The rest of the head, bounded.
    let mut line = String::new();
    for _ in 0..100 {
        line.clear();
        if r.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = first.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut w = s;
    if method != "GET" || path.split('?').next() != Some("/metrics") {
        let body = "not found: the metrics are at /metrics\n";
        return write!(
            w,
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }
    let body = text.lock().unwrap_or_else(|e| e.into_inner()).clone();
    write!(
        w,
        "HTTP/1.1 200 OK\r\nContent-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    w.write_all(body.as_bytes())
}
