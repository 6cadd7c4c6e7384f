//! `yace serve --tls`: a self-signed certificate made at start (or files
//! given), so HTTPS works with no outside setup. The certificate's SHA-256
//! fingerprint is printed, and it can be written out for `--cacert`.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::sync::Arc;

/// A certificate and its key, PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsIdentity {
    pub cert_pem: String,
    pub key_pem: String,
}

impl TlsIdentity {
    /// A fresh self-signed certificate for `localhost`, 127.0.0.1 and ::1.
    pub fn self_signed() -> io::Result<TlsIdentity> {
        let names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ];
        let key = rcgen::KeyPair::generate().map_err(io::Error::other)?;
        let params = rcgen::CertificateParams::new(names).map_err(io::Error::other)?;
        let cert = params.self_signed(&key).map_err(io::Error::other)?;
        Ok(TlsIdentity {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// SHA-256 of the (first) certificate, as colon-separated hex.
    pub fn fingerprint(&self) -> io::Result<String> {
        let der =
            CertificateDer::from_pem_slice(self.cert_pem.as_bytes()).map_err(io::Error::other)?;
        let d = ring::digest::digest(&ring::digest::SHA256, der.as_ref());
        Ok(d.as_ref()
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(":"))
    }

    pub(crate) fn acceptor(&self) -> io::Result<tokio_rustls::TlsAcceptor> {
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(io::Error::other)?;
        let key =
            PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).map_err(io::Error::other)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(io::Error::other)?;
        // HTTP/2 first: a client offering both gets it.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
    }
}
