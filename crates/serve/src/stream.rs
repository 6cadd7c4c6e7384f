//! A connection's byte stream: plain TCP, or TLS over it (`yace serve --tls`);
//! and [`Rewind`], which puts back the bytes read to tell the protocol.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
    /// `yace serve --unix`: a unix-domain connection (plain HTTP).
    Unix(UnixStream),
}

impl Stream {
    /// Closes with RST instead of FIN when dropped. A unix socket has no
    /// reset: it just closes.
    pub(crate) fn set_zero_linger(&self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.set_zero_linger(),
            Stream::Tls(t) => t.get_ref().0.set_zero_linger(),
            Stream::Unix(_) => Ok(()),
        }
    }

    /// Peeks at the socket (ciphertext under TLS: enough to see data or EOF).
    pub(crate) async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.peek(buf).await,
            Stream::Tls(t) => t.get_ref().0.peek(buf).await,
            // Tokio's UnixStream has no peek: wait until readable, then
            // peek without blocking (a false readiness is cleared by
            // try_io's WouldBlock and waited on again).
            Stream::Unix(s) => loop {
                s.readable().await?;
                let fd = std::os::fd::AsRawFd::as_raw_fd(s);
                match s.try_io(tokio::io::Interest::READABLE, || {
                    // SAFETY: fd is the stream's open socket; buf is valid for its length.
                    let n = unsafe {
                        libc::recv(
                            fd,
                            buf.as_mut_ptr() as *mut libc::c_void,
                            buf.len(),
                            libc::MSG_PEEK | libc::MSG_DONTWAIT,
                        )
                    };
                    if n < 0 {
                        Err(io::Error::last_os_error())
                    } else {
                        Ok(n as usize)
                    }
                }) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    r => return r,
                }
            },
        }
    }

    /// Whether TLS agreed on HTTP/2 by ALPN.
    pub(crate) fn alpn_h2(&self) -> bool {
        match self {
            Stream::Plain(_) | Stream::Unix(_) => false,
            Stream::Tls(t) => t.get_ref().1.alpn_protocol() == Some(b"h2"),
        }
    }

    /// Whether TLS agreed on any protocol by ALPN.
    pub(crate) fn alpn_agreed(&self) -> bool {
        match self {
            Stream::Plain(_) | Stream::Unix(_) => false,
            Stream::Tls(t) => t.get_ref().1.alpn_protocol().is_some(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(t) => Pin::new(t.as_mut()).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(t) => Pin::new(t.as_mut()).poll_write(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(t) => Pin::new(t.as_mut()).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(t) => Pin::new(t.as_mut()).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// A [`Stream`] with the bytes already read from it in front: what was read
/// of a plain connection to recognise HTTP/2's preface is read again by h2.
pub(crate) struct Rewind {
    stream: Stream,
    /// `pos..` is still to be read.
    prefix: Vec<u8>,
    pos: usize,
}

impl Rewind {
    pub(crate) fn new(stream: Stream, prefix: Vec<u8>) -> Rewind {
        Rewind {
            stream,
            prefix,
            pos: 0,
        }
    }
}

impl AsyncRead for Rewind {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pos < this.prefix.len() {
            let n = buf.remaining().min(this.prefix.len() - this.pos);
            buf.put_slice(&this.prefix[this.pos..this.pos + n]);
            this.pos += n;
            if this.pos == this.prefix.len() {
                // The read buffer it was is not needed for the connection's life.
                this.prefix = Vec::new();
                this.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn rewind_reads_the_prefix_then_the_socket() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        client.write_all(b" world").await.unwrap();
        drop(client);
        let mut r = Rewind::new(Stream::Plain(server), b"hello".to_vec());
        let mut small = [0u8; 3];
        r.read_exact(&mut small).await.unwrap();
        assert_eq!(&small, b"hel");
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"lo world");
    }
}
