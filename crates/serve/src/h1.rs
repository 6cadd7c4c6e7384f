//! HTTP/1.1 connections: the loop that reads each request, hands it to
//! `routes` (or the whole connection to `http2` when it opens with HTTP/2's
//! preface) and keeps the connection or ends it as the answer says. The
//! connection's state and its writing are `conn`'s.

use std::io;
use std::sync::Arc;

use crate::conn::{After, BodyError, Conn, INITIAL_READ_BUF, WRITE_BATCH};
use crate::http::{self, HeadError};
use crate::http2;
use crate::route::Route;
use crate::routes;
use crate::stats::Tally;
use crate::stream::{Rewind, Stream};
use crate::Shared;
use tokio::io::AsyncWriteExt;

pub(crate) async fn serve(stream: Stream, shared: Arc<Shared>) {
    let sniff = !stream.alpn_agreed();
    let mut conn = Conn {
        stream,
        rbuf: vec![0; INITIAL_READ_BUF],
        pos: 0,
        end: 0,
        wbuf: Vec::with_capacity(INITIAL_READ_BUF),
        tally: Tally::default(),
        shared,
        split: None,
        stale_after: None,
        close_every: 0,
        sniff,
    };
    // I/O errors only mean the client is gone; there is nobody to tell.
    match conn.run().await {
        Ok(After::Close) => conn.linger().await,
        Ok(After::Reset) => {
            if conn.flush().await.is_ok() {
                // Dropping the socket now sends RST instead of FIN.
                let _ = conn.stream.set_zero_linger();
            }
        }
        Ok(After::Abandon) => {
            let _ = conn.stream.shutdown().await;
        }
        Ok(After::Http2) => {
            let Conn {
                stream,
                mut rbuf,
                pos,
                end,
                shared,
                ..
            } = conn;
            rbuf.truncate(end);
            rbuf.drain(..pos);
            // Boxed: HTTP/2's state is large, and every HTTP/1.1
            // connection's future would otherwise make room for it.
            return Box::pin(http2::serve(Rewind::new(stream, rbuf), shared)).await;
        }
        Ok(After::KeepAlive | After::Gone) | Err(_) => {}
    }
    conn.tally.flush(&conn.shared.counters);
}

impl Conn {
    /// Serves requests until the connection should close; says how (never
    /// `KeepAlive`). `Gone` means the client closed first.
    pub(crate) async fn run(&mut self) -> io::Result<After> {
        loop {
            if self.pos == self.end {
                if let Some(end) = self.await_request().await? {
                    return Ok(end);
                }
            }
            if self.sniff {
                match http2::sniff(&self.rbuf[self.pos..self.end]) {
                    Some(true) => return Ok(After::Http2),
                    Some(false) => self.sniff = false,
                    None => {
                        if !self.fill().await? {
                            return Ok(After::Gone);
                        }
                        continue;
                    }
                }
            }
            let head = match http::parse_head(&self.rbuf[self.pos..self.end]) {
                Ok(Some((head, len))) => {
                    self.pos += len;
                    head
                }
                Ok(None) if self.end - self.pos >= http::MAX_HEAD => {
                    self.error(Route::Other, 431, "request head too large\n");
                    return Ok(After::Close);
                }
                Ok(None) => {
                    if !self.fill().await? {
                        return Ok(After::Gone);
                    }
                    continue;
                }
                Err(e) => {
                    match e {
                        HeadError::Bad => self.error(Route::Other, 400, "malformed request\n"),
                        HeadError::TooLarge => {
                            self.error(Route::Other, 431, "too many header fields\n")
                        }
                    }
                    return Ok(After::Close);
                }
            };
            let body = match self.read_body_unless_early(&head).await {
                Ok(body) => body,
                Err(BodyError::Bad) => {
                    self.error(head.target.route(), 400, "malformed chunked body\n");
                    return Ok(After::Close);
                }
                Err(BodyError::TooLarge) => {
                    self.error(Route::Echo, 413, "body too large for /echo\n");
                    return Ok(After::Close);
                }
                Err(BodyError::Io) => return Ok(After::Gone),
            };
            match routes::respond(self, &head, body).await? {
                After::KeepAlive => {}
                end => return Ok(end),
            }
            if self.wbuf.len() >= WRITE_BATCH {
                self.flush().await?;
            }
        }
    }
}
