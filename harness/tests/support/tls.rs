//! A TLS target for tests: the reference server behind a TLS-terminating proxy on
//! `127.0.0.1:0`, with a CA and a server certificate generated at test time.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

/// A running TLS target: `https://127.0.0.1:PORT` in front of a spawned reference.
pub(crate) struct TlsReference {
    /// `https://127.0.0.1:PORT`.
    pub base_url: String,
    /// PEM of the CA that signed the server certificate (what `--ca-cert` names).
    pub ca_pem: PathBuf,
    /// Holds the CA file.
    pub dir: tempfile::TempDir,
    _server: reference_impl::RunningServer,
    proxy: tokio::task::JoinHandle<()>,
}

impl Drop for TlsReference {
    fn drop(&mut self) {
        self.proxy.abort();
    }
}

/// A CA (its PEM) and a server certificate it signed for `127.0.0.1` and `localhost`
/// (the certificate chain and the server's key).
fn certificates() -> (String, Vec<Vec<u8>>, Vec<u8>) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "conform test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &*ca)
        .unwrap();
    (
        ca.pem(),
        vec![leaf.der().to_vec(), ca.der().to_vec()],
        leaf_key.serialize_der(),
    )
}

/// Spawns the reference (demo configuration) and a TLS proxy in front of it; the reference
/// writes `https://` URLs into its SSP documents.
pub(crate) async fn spawn() -> TlsReference {
    let (ca_pem, chain, key) = certificates();
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca_pem).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("https://{}", listener.local_addr().unwrap());
    let mut config = reference_impl::Config::demo_in_memory();
    config.base_url = Some(base_url.clone());
    let server = reference_impl::spawn(config, SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let upstream = server.addr;
    // The provider named: `builder()` would panic if another crate enabled a second one.
    let provider = Arc::new(tokio_rustls::rustls::crypto::aws_lc_rs::default_provider());
    let tls = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            chain.into_iter().map(Into::into).collect(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key)),
        )
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    let proxy = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to relay.
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    TlsReference {
        base_url,
        ca_pem: ca_path,
        dir,
        _server: server,
        proxy,
    }
}
