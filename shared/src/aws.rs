//! The one place where the AWS SDK configuration is built.
//!
//! The SDK crates are compiled without their default HTTPS client (it would bring a second
//! HTTP stack and double the build time), so a config built anywhere else, without
//! [`sdk_config`]'s `.http_client(..)`, would panic on its first request.

use std::sync::OnceLock;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region, SharedCredentialsProvider};
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode, TlsContext, TrustStore};
use aws_smithy_http_client::Builder;
use aws_types::SdkConfig;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// Builds the AWS SDK configuration for the whole program: call it once at start-up and
/// derive every service client (`aws_sdk_dynamodb::Client::new(&config)`, ...) from the
/// result, which is cheap to clone.
///
/// It reads the environment alone, as Lambda gives a function its role's credentials
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) and its `AWS_REGION`
/// (or `AWS_DEFAULT_REGION`), and `AWS_ENDPOINT_URL` (moto, LocalStack): no profile files
/// and no credential provider chain. `aws-config`'s chain, and the STS client it builds,
/// took about 0.6 ms of every cold start and 5 % of each function's size; with a profile,
/// `eval "$(aws configure export-credentials --format env)"` gives the same variables.
/// Retries, timeouts and the sleep and time sources are the SDK clients' defaults for the
/// latest behavior version.
///
/// HTTPS goes through `aws-smithy-http-client` on rustls with the `ring` provider. Its trust
/// store holds the roots AWS endpoints chain to, picked from the Mozilla roots bundled in the
/// binary (`webpki-root-certs`, see [`aws_roots`]), and never the system's native store:
/// loading the native store costs about 5 ms of cold start.
///
/// The result is deliberately not memoized in a global: its HTTP client owns a connection
/// pool whose connections belong to the Tokio runtime that opened them, so a config shared
/// across runtimes (as between `#[tokio::test]` functions) would hand out dead connections.
pub fn sdk_config() -> Result<SdkConfig, String> {
    config_from(|name| std::env::var(name).ok())
}

/// [`sdk_config`] from the variables `var` answers.
fn config_from(var: impl Fn(&str) -> Option<String>) -> Result<SdkConfig, String> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty());
    let region = var("AWS_REGION")
        .or_else(|| var("AWS_DEFAULT_REGION"))
        .ok_or("AWS_REGION is not set")?;
    let (Some(key), Some(secret)) = (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) else {
        return Err("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set".into());
    };
    let credentials = Credentials::new(key, secret, var("AWS_SESSION_TOKEN"), None, "environment");
    let mut builder = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region))
        .credentials_provider(SharedCredentialsProvider::new(credentials))
        .http_client(https_client());
    if let Some(url) = var("AWS_ENDPOINT_URL") {
        builder = builder.endpoint_url(url);
    }
    Ok(builder.build())
}

/// An SDK client built on its first use. Building one parses its service's endpoint rules
/// (0.1-0.2 ms): a cold start pays only for the services its first invocation calls (a
/// read sends no SQS message, and most operations touch no S3 object). DynamoDB's client
/// is built at start-up, since nearly every request reads the store.
pub struct LazyClient<C> {
    client: OnceLock<C>,
    build: Box<dyn Fn() -> C + Send + Sync>,
}

impl<C: Clone + Send + Sync + 'static> LazyClient<C> {
    /// A client `build` makes from `sdk` when first used.
    pub fn new(sdk: &SdkConfig, build: fn(&SdkConfig) -> C) -> Self {
        let sdk = sdk.clone();
        LazyClient {
            client: OnceLock::new(),
            build: Box::new(move || build(&sdk)),
        }
    }

    pub fn get(&self) -> &C {
        self.client.get_or_init(&self.build)
    }
}

/// A client already built (a queue created at start-up, say).
impl<C: Clone + Send + Sync + 'static> From<C> for LazyClient<C> {
    fn from(client: C) -> Self {
        let copy = client.clone();
        LazyClient {
            client: OnceLock::from(client),
            build: Box::new(move || copy.clone()),
        }
    }
}

/// The SDK's HTTPS client, with a trust store of bundled roots only.
///
/// `TrustStore` accepts extra roots as PEM text only (no DER, no `webpki-roots` trust
/// anchors), so the bundled DER certificates are PEM-encoded here; the certificates are
/// parsed when the SDK first creates a connector from this client.
fn https_client() -> aws_sdk_dynamodb::config::SharedHttpClient {
    let mut store = TrustStore::empty().with_native_roots(false);
    store.add_pem_certificate(bundled_roots_pem());
    let context = TlsContext::builder().with_trust_store(store).build();
    let builder = Builder::new().tls_provider(tls::Provider::Rustls(CryptoMode::Ring));
    match context {
        Ok(context) => builder.tls_context(context).build_https(),
        // Building a TLS context cannot fail in this version of the crate (its builder only
        // moves fields); should a later one refuse ours, keep working with its default
        // context (native roots) rather than refusing to start.
        Err(e) => {
            tracing::warn!(error = %e, "bundled trust store rejected; using the default TLS context");
            builder.build_https()
        }
    }
}

/// The roots AWS service endpoints chain to: Amazon Trust Services (Amazon Root CA 1-4) and
/// the Starfield Services root that cross-signs them. The SDK talks to AWS endpoints only,
/// and parsing 5 roots instead of ~150 takes about a millisecond off every cold start.
/// (A self-signed root names itself as issuer and subject, so its DER holds the name.)
/// (A byte-by-byte window search over the ~150 certificates took about 7 % of a function's
/// cold start; memchr's SIMD search makes it negligible.)
fn aws_roots() -> impl Iterator<Item = &'static [u8]> {
    let names = [
        memchr::memmem::Finder::new(b"Amazon Root CA"),
        memchr::memmem::Finder::new(b"Starfield Services Root Certificate Authority"),
    ];
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|cert| -> &'static [u8] { cert.as_ref() })
        .filter(move |der| names.iter().any(|name| name.find(der).is_some()))
}

/// The bundled root certificates as one PEM document.
fn bundled_roots_pem() -> Vec<u8> {
    let roots: Vec<_> = aws_roots().collect();
    let size: usize = roots.iter().map(|c| c.len() / 3 * 4 + c.len() / 48 + 72).sum();
    let mut pem = Vec::with_capacity(size);
    for cert in roots {
        pem.extend_from_slice(b"-----BEGIN CERTIFICATE-----\n");
        for line in cert.chunks(48) {
            pem.extend_from_slice(STANDARD.encode(line).as_bytes());
            pem.push(b'\n');
        }
        pem.extend_from_slice(b"-----END CERTIFICATE-----\n");
    }
    pem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_roots_round_trip_through_pem() {
        use rustls_pki_types::pem::PemObject as _;
        use rustls_pki_types::CertificateDer;
        let pem = bundled_roots_pem();
        let decoded: Vec<CertificateDer<'_>> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        let expected: Vec<&[u8]> = aws_roots().collect();
        assert!(
            expected.len() >= 5,
            "Amazon Root CA 1-4 and Starfield Services G2: {}",
            expected.len()
        );
        assert!(expected.len() < 10, "only AWS's roots: {}", expected.len());
        assert_eq!(decoded.iter().map(|c| c.as_ref()).collect::<Vec<&[u8]>>(), expected);
    }

    #[test]
    fn the_config_is_the_environments() {
        fn vars<'a>(set: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |name| set.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        }
        let lambda = [
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ACCESS_KEY_ID", "AKIA"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("AWS_SESSION_TOKEN", "token"),
        ];
        let config = config_from(vars(&lambda)).expect("a config");
        assert_eq!(config.region().map(|r| r.as_ref()), Some("eu-west-1"));
        assert_eq!(config.endpoint_url(), None);
        assert!(config.credentials_provider().is_some() && config.http_client().is_some());
        let moto = [
            ("AWS_DEFAULT_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:5000"),
        ];
        let config = config_from(vars(&moto)).expect("a config");
        assert_eq!(config.region().map(|r| r.as_ref()), Some("us-east-1"));
        assert_eq!(config.endpoint_url(), Some("http://127.0.0.1:5000"));
        let no_region = config_from(vars(&lambda[1..])).err();
        assert_eq!(no_region.as_deref(), Some("AWS_REGION is not set"));
        let blank_key = [
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", ""),
            ("AWS_SECRET_ACCESS_KEY", "s"),
        ];
        assert!(config_from(vars(&blank_key)).is_err());
    }

    /// The SDK parses the trust store when it first builds a connector and panics on a
    /// certificate it cannot parse: a request over HTTPS (to a closed local port, so it
    /// fails to connect) must come back as an error, not a panic.
    #[tokio::test]
    async fn https_requests_build_a_connector_from_the_bundled_roots() {
        let config = SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(SharedCredentialsProvider::new(Credentials::new(
                "k", "s", None, None, "test",
            )))
            .endpoint_url("https://127.0.0.1:1")
            .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
            .http_client(https_client())
            .build();
        let client = aws_sdk_dynamodb::Client::new(&config);
        let result = client.list_tables().send().await;
        let err = result
            .err()
            .map(|e| aws_sdk_dynamodb::error::DisplayErrorContext(e).to_string());
        assert!(
            err.as_deref().is_some_and(|e| e.contains("dispatch failure")),
            "{err:?}"
        );
    }
}
