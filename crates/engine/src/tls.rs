//! HTTPS on the same worker loop: rustls driven by hand over the
//! non-blocking socket (read_tls / process_new_packets / write_tls), so TLS
//! connections share the one epoll loop, statistics and outcome classes.

use crate::Outcome;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, Error, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::Arc;

/// The shared client configuration and the name to verify and send as SNI.
#[derive(Debug, Clone)]
pub struct TlsSetup {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
}

/// A blocking TLS client stream, for one-off probes (`yace doctor`), not
/// for load: the handshake is complete when [`TlsSetup::handshake`] returns.
pub type BlockingTls = rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>;

impl TlsSetup {
    /// Shakes hands over a connected, blocking socket (its timeouts apply).
    /// A failure comes back as its outcome class and the reason.
    pub fn handshake(
        &self,
        mut tcp: std::net::TcpStream,
    ) -> Result<BlockingTls, (Outcome, String)> {
        let mut conn = self
            .connection()
            .map_err(|o| (o, "TLS set-up".to_owned()))?;
        while conn.is_handshaking() {
            if let Err(e) = conn.complete_io(&mut tcp) {
                let outcome = match e.get_ref().and_then(|i| i.downcast_ref::<Error>()) {
                    Some(tls) => classify(tls),
                    None => match e.kind() {
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Outcome::Timeout,
                        io::ErrorKind::UnexpectedEof => Outcome::TlsNotTls,
                        _ => Outcome::TlsHandshake,
                    },
                };
                return Err((outcome, e.to_string()));
            }
        }
        Ok(rustls::StreamOwned::new(*conn, tcp))
    }

    /// A client connection for one new socket; a failure as its outcome.
    pub(crate) fn connection(&self) -> Result<Box<rustls::ClientConnection>, Outcome> {
        rustls::ClientConnection::new(self.config.clone(), self.server_name.clone())
            .map(Box::new)
            .map_err(|e| classify(&e))
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Why HTTPS could not be set up: typed, with the plan field at fault (see
/// [`TlsError::field`]), so a front end names its own flag for it.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS: {0}")]
    Provider(rustls::Error),
    #[error("{}: {source}", path.display())]
    ReadPem {
        field: plan::Field,
        path: PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    #[error("{}: not PEM certificates: {source}", path.display())]
    NotPem {
        field: plan::Field,
        path: PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    #[error("{}: no certificate in the file", path.display())]
    NoCertificate { path: PathBuf },
    #[error("{}: unusable certificate: {source}", path.display())]
    Unusable {
        path: PathBuf,
        source: rustls::Error,
    },
    #[error(
        "no system CA certificates found (install Debian's ca-certificates, or pass a CA \
             file, or turn verification off)"
    )]
    NoSystemRoots,
    #[error("{}: no private key: {source}", path.display())]
    NoKey {
        path: PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    #[error("{0}")]
    ClientAuth(rustls::Error),
    #[error("a client certificate and its key go together")]
    CertWithoutKey,
    #[error("'{host}' is not a valid TLS server name: {reason}")]
    ServerName { host: String, reason: String },
}

impl TlsError {
    /// The plan field the problem is about, for the front end's spelling
    /// (`--cacert`, `--cert`, `--key`); `None` for what no flag caused.
    pub fn field(&self) -> Option<plan::Field> {
        use plan::Field;
        match self {
            TlsError::ReadPem { field, .. } | TlsError::NotPem { field, .. } => Some(*field),
            TlsError::NoCertificate { .. } | TlsError::Unusable { .. } => Some(Field::CaCert),
            TlsError::NoKey { .. } => Some(Field::ClientKey),
            TlsError::ClientAuth(_) | TlsError::CertWithoutKey => Some(Field::ClientCert),
            TlsError::Provider(_) | TlsError::NoSystemRoots | TlsError::ServerName { .. } => None,
        }
    }
}

/// Builds the client configuration from the plan. Errors name the field
/// and the file.
/// `http2`: offer only `h2` in ALPN (the server must agree, or the
/// connection is reported as [`crate::Outcome::NoHttp2`]).
pub fn setup(opts: &plan::TlsOptions, host: &str, http2: bool) -> Result<TlsSetup, TlsError> {
    use plan::Field;
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Provider)?;
    let builder = if opts.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match &opts.cacert {
            Some(path) => {
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                    .map_err(|source| TlsError::ReadPem {
                        field: Field::CaCert,
                        path: path.clone(),
                        source,
                    })?
                    .collect::<Result<_, _>>()
                    .map_err(|source| TlsError::NotPem {
                        field: Field::CaCert,
                        path: path.clone(),
                        source,
                    })?;
                if certs.is_empty() {
                    return Err(TlsError::NoCertificate { path: path.clone() });
                }
                for c in certs {
                    roots.add(c).map_err(|source| TlsError::Unusable {
                        path: path.clone(),
                        source,
                    })?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                for c in found.certs {
                    let _ = roots.add(c);
                }
                if roots.is_empty() {
                    return Err(TlsError::NoSystemRoots);
                }
            }
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match (&opts.cert, &opts.key) {
        (Some(cert), Some(key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                .map_err(|source| TlsError::ReadPem {
                    field: Field::ClientCert,
                    path: cert.clone(),
                    source,
                })?
                .collect::<Result<_, _>>()
                .map_err(|source| TlsError::NotPem {
                    field: Field::ClientCert,
                    path: cert.clone(),
                    source,
                })?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsError::NoKey {
                path: key.clone(),
                source,
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(TlsError::ClientAuth)?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err(TlsError::CertWithoutKey),
    };
    config.alpn_protocols = vec![if http2 {
        b"h2".to_vec()
    } else {
        b"http/1.1".to_vec()
    }];
    if !opts.resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    let server_name = ServerName::try_from(host.to_owned()).map_err(|e| TlsError::ServerName {
        host: host.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(TlsSetup {
        config: Arc::new(config),
        server_name,
    })
}

/// `--insecure`: accepts any certificate, still checks handshake signatures'
/// form so the connection is otherwise real TLS.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The outcome class of a TLS failure.
pub fn classify(e: &Error) -> Outcome {
    match e {
        Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                Outcome::TlsUnknownCa
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                Outcome::TlsHostnameMismatch
            }
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => Outcome::TlsExpired,
            _ => Outcome::TlsHandshake,
        },
        Error::InvalidMessage(_) | Error::InappropriateMessage { .. } => Outcome::TlsNotTls,
        // We offered only h2 and the server has no HTTP/2 (nginx without
        // `http2` on the port answers with this alert).
        Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol) => Outcome::NoHttp2,
        _ => Outcome::TlsHandshake,
    }
}

/// Blocking-free I/O on a raw socket for rustls's read_tls/write_tls.
#[derive(Debug)]
pub struct Fd(pub RawFd);

impl io::Read for Fd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        crate::sys::read(self.0, buf).map_err(io::Error::from_raw_os_error)
    }
}

impl io::Write for Fd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        crate::sys::send(self.0, buf).map_err(io::Error::from_raw_os_error)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How far a handshake got on a non-blocking socket.
pub(crate) enum Handshake {
    /// The socket would block; call again on the next event.
    Pending,
    Done,
    Failed(crate::Outcome),
}

/// Drives a TLS handshake as far as the socket allows.
pub(crate) fn drive_handshake(tls: &mut rustls::ClientConnection, fd: RawFd) -> Handshake {
    let mut fd = Fd(fd);
    loop {
        while tls.wants_write() {
            match tls.write_tls(&mut fd) {
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if !tls.is_handshaking() {
            return Handshake::Done;
        }
        match tls.read_tls(&mut fd) {
            // The server hung up mid-handshake: not a TLS server, or it refused us.
            Ok(0) => return Handshake::Failed(crate::Outcome::TlsHandshake),
            Ok(_) => {
                if let Err(e) = tls.process_new_packets() {
                    let _ = tls.write_tls(&mut fd); // The alert, best effort.
                    return Handshake::Failed(classify(&e));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Handshake::Pending,
            Err(_) => return Handshake::Failed(crate::Outcome::Reset),
        }
    }
}

/// Writes rustls's pending records; `Ok(false)` when the socket would block.
pub(crate) fn flush(tls: &mut rustls::ClientConnection, fd: RawFd) -> io::Result<bool> {
    let mut fd = Fd(fd);
    while tls.wants_write() {
        match tls.write_tls(&mut fd) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// The next plaintext from a TLS connection into `buf`, as a plain `read`
/// would return it (EAGAIN once drained); a TLS failure as its outcome.
/// Ciphertext is read into our own `cipher` buffer and handed to rustls, so
/// a short read tells us the socket is drained, as in plain HTTP, and no
/// read is spent only to hear EAGAIN. `drained` carries that between calls.
///
/// rustls holds at most 16 KiB of decrypted data, so a read's ciphertext is
/// fed in turns, moving the plaintext out into `buf` between them; it fits,
/// as plaintext is never longer than its ciphertext and `buf` is as large
/// as `cipher`.
///
/// `stamp`: when given, the socket is read with its kernel receive
/// timestamp ([`crate::sys::read_stamped`]), kept there when there is one.
pub(crate) fn read_plain(
    tls: &mut rustls::ClientConnection,
    fd: RawFd,
    drained: &mut bool,
    buf: &mut [u8],
    cipher: &mut [u8],
    mut stamp: Option<&mut Option<u64>>,
) -> Result<Result<usize, i32>, crate::Outcome> {
    debug_assert!(buf.len() >= cipher.len());
    loop {
        match io::Read::read(&mut tls.reader(), buf) {
            Ok(n) => return Ok(Ok(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // Closed without close_notify: treat as end of file, as browsers do.
            Err(_) => return Ok(Ok(0)),
        }
        if *drained {
            *drained = false;
            return Ok(Err(libc::EAGAIN));
        }
        let n = match crate::sys::read_keeping_stamp(fd, cipher, stamp.as_deref_mut()) {
            Ok(0) => return Ok(Ok(0)),
            Ok(n) => n,
            Err(e) => return Ok(Err(e)),
        };
        *drained = n < cipher.len();
        let mut data = &cipher[..n];
        let mut out = 0;
        loop {
            while !data.is_empty() {
                match tls.read_tls(&mut data) {
                    Ok(0) => break,
                    Ok(_) => {}
                    // Its plaintext buffer is full: move plaintext out first.
                    Err(_) => break,
                }
                if let Err(e) = tls.process_new_packets() {
                    return Err(classify(&e));
                }
            }
            let before = out;
            if out < buf.len() {
                match io::Read::read(&mut tls.reader(), &mut buf[out..]) {
                    Ok(k) => out += k,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => {}
                }
            }
            if data.is_empty() || out == before {
                break;
            }
        }
        if tls.wants_write() {
            let _ = flush(tls, fd);
        }
        if !data.is_empty() {
            // rustls took nothing more and gave nothing back: not TLS we can use.
            return Err(crate::Outcome::TlsHandshake);
        }
        if out > 0 {
            return Ok(Ok(out));
        }
    }
}
