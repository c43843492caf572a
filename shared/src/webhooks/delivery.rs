//! Delivery: one POST per registered URL, form-encoded, 2 s to connect and 5 s in all, one
//! attempt, any 2xx accepted and the body not read.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::store::{Store, Val};

use super::{registration_key, tokens_key, Envelope, USER_AGENT};

/// Which webhook targets are allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlPolicy {
    /// Sandbox: `http` or `https`, loopback and private addresses included, so a developer
    /// can receive webhooks on their own machine.
    Sandbox,
    /// Production: `https` only, public addresses only (no SSRF into private networks).
    Production,
}

impl UrlPolicy {
    /// Checks the URL's shape, then (production) every address its host resolves to; the
    /// request is pinned to the checked addresses so a second lookup cannot differ.
    async fn resolve(self, url: &reqwest::Url) -> Result<Vec<std::net::SocketAddr>, String> {
        let scheme_ok = match self {
            UrlPolicy::Sandbox => matches!(url.scheme(), "http" | "https"),
            UrlPolicy::Production => url.scheme() == "https",
        };
        if !scheme_ok {
            return Err(format!("scheme {} not allowed", url.scheme()));
        }
        if self == UrlPolicy::Sandbox {
            return Ok(Vec::new());
        }
        let host = url.host_str().ok_or("no host")?;
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs: Vec<_> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| e.to_string())?
            .collect();
        if addrs.is_empty() || addrs.iter().any(|a| !is_public(a.ip())) {
            return Err(format!("{host} resolves to a non-public address"));
        }
        Ok(addrs)
    }
}

/// Whether an address is routable on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
                || v4.octets()[0] == 0
                || (v4.octets()[0] == 100 && (64..128).contains(&v4.octets()[1])))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let seg = v6.segments()[0];
            !(v6.is_loopback() || v6.is_unspecified() || (seg & 0xfe00) == 0xfc00 || (seg & 0xffc0) == 0xfe80)
        }
    }
}

/// Sends webhooks. Registrations and tokens are read when a webhook is sent.
#[derive(Clone)]
pub struct Deliverer {
    store: Arc<dyn Store>,
    policy: UrlPolicy,
    client: reqwest::Client,
}

impl Deliverer {
    pub fn new(store: Arc<dyn Store>, policy: UrlPolicy) -> Self {
        Deliverer {
            store,
            policy,
            client: build_client(&[]).unwrap_or_default(),
        }
    }

    /// Delivers one event to every URL registered for its method. Failures are logged:
    /// one attempt only, as part 1 says.
    pub async fn deliver(&self, env: &Envelope) -> Result<(), crate::store::StoreError> {
        let Some(reg) = self
            .store
            .get(&registration_key(&env.client_id, &env.event.method))
            .await?
        else {
            return Ok(());
        };
        let urls: Vec<String> = json_list(reg.get("d"));
        if urls.is_empty() {
            return Ok(());
        }
        let owner = match crate::auth::load_client(self.store.as_ref(), &env.client_id).await {
            Ok(Some(c)) => c.token_owner().to_owned(),
            _ => env.client_id.clone(),
        };
        let tokens: Vec<String> = json_list(
            self.store
                .get(&tokens_key(&owner))
                .await?
                .as_ref()
                .and_then(|i| i.get("d")),
        );
        let body = env.form_body();
        let sends = urls.iter().map(|url| self.post(url, &tokens, body.clone()));
        for (url, result) in urls.iter().zip(futures_util::future::join_all(sends).await) {
            match result {
                Ok(status) => {
                    tracing::info!(method = %env.event.method, %url, status, "webhook delivered")
                }
                Err(e) => {
                    tracing::warn!(method = %env.event.method, %url, error = %e, "webhook not delivered")
                }
            }
        }
        Ok(())
    }

    async fn post(&self, url: &str, tokens: &[String], body: String) -> Result<u16, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        let pinned = self.policy.resolve(&parsed).await?;
        let client = if pinned.is_empty() {
            self.client.clone()
        } else {
            let host = parsed.host_str().unwrap_or_default().to_owned();
            build_client(&[(host, pinned)]).map_err(|e| e.to_string())?
        };
        let mut req = client
            .post(parsed)
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if !tokens.is_empty() {
            req = req.header("X-Webhook-Token", tokens.join(","));
        }
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        if status.is_success() {
            Ok(status.as_u16())
        } else {
            Err(format!("HTTP {status}"))
        }
    }
}

fn build_client(pins: &[(String, Vec<std::net::SocketAddr>)]) -> reqwest::Result<reqwest::Client> {
    let mut b = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none());
    for (host, addrs) in pins {
        b = b.resolve_to_addrs(host, addrs);
    }
    b.build()
}

fn json_list(v: Option<&Val>) -> Vec<String> {
    v.and_then(Val::as_str)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn production_takes_https_to_public_hosts_only() {
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert!(UrlPolicy::Production
            .resolve(&url("http://example.com/h"))
            .await
            .is_err());
        assert!(UrlPolicy::Production
            .resolve(&url("https://127.0.0.1/h"))
            .await
            .is_err());
        assert!(UrlPolicy::Production
            .resolve(&url("https://localhost/h"))
            .await
            .is_err());
        assert!(UrlPolicy::Production
            .resolve(&url("https://[::1]:8443/h"))
            .await
            .is_err());
        assert!(UrlPolicy::Sandbox.resolve(&url("http://127.0.0.1:9/h")).await.is_ok());
        assert!(UrlPolicy::Sandbox.resolve(&url("ftp://127.0.0.1/h")).await.is_err());
    }
}
