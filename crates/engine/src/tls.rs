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
use std::sync::Arc;

/// The shared client configuration and the name to verify and send as SNI.
#[derive(Debug, Clone)]
pub struct TlsSetup {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the client configuration from the plan. Errors name the option
/// and the file.
pub fn setup(opts: &plan::TlsOptions, host: &str) -> Result<TlsSetup, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = if opts.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match &opts.cacert {
            Some(path) => {
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                    .map_err(|e| format!("--cacert {}: {e}", path.display()))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| {
                        format!("--cacert {}: not PEM certificates: {e}", path.display())
                    })?;
                if certs.is_empty() {
                    return Err(format!(
                        "--cacert {}: no certificate in the file",
                        path.display()
                    ));
                }
                for c in certs {
                    roots.add(c).map_err(|e| {
                        format!("--cacert {}: unusable certificate: {e}", path.display())
                    })?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                for c in found.certs {
                    let _ = roots.add(c);
                }
                if roots.is_empty() {
                    return Err(
                        "no system CA certificates found (install Debian's ca-certificates, \
                                or pass --cacert FILE, or --insecure)"
                            .into(),
                    );
                }
            }
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match (&opts.cert, &opts.key) {
        (Some(cert), Some(key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                .map_err(|e| format!("--cert {}: {e}", cert.display()))?
                .collect::<Result<_, _>>()
                .map_err(|e| format!("--cert {}: not PEM certificates: {e}", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("--key {}: no private key: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("--cert/--key: {e}"))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("--cert and --key go together".into()),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    if !opts.resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    let server_name = ServerName::try_from(host.to_owned())
        .map_err(|e| format!("'{host}' is not a valid TLS server name: {e}"))?;
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
