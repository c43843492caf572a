//! Delivery: one POST per registered URL, form-encoded, 2 s to connect and 5 s in all, one
//! attempt, any 2xx accepted and the body not read.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::store::{Store, Val, Write};

use super::{registration_key, Envelope, USER_AGENT};

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
    /// Whether `url` may receive webhooks under this policy (an operator registering it is
    /// told why not).
    pub async fn check(self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        if parsed.host().is_none() {
            return Err("no host".into());
        }
        self.resolve(&parsed).await.map(|_| ())
    }

    /// Fetches `url` once with GET under this policy (the addresses checked are the ones
    /// connected to), following no redirect, within the delivery timeouts: its HTTP status.
    /// The body is not read. Used where the platform must see a document answer 200
    /// directly (a custody agreement's `documentUrl`).
    pub async fn get_status(self, url: &str) -> Result<u16, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        if parsed.host().is_none() {
            return Err("no host".into());
        }
        let pinned = self.resolve(&parsed).await?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let pins = if pinned.is_empty() {
            Vec::new()
        } else {
            vec![(host, pinned)]
        };
        let client = build_client(&pins).map_err(|e| e.to_string())?;
        let resp = client.get(parsed).send().await.map_err(|e| e.to_string())?;
        Ok(resp.status().as_u16())
    }

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
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs: Vec<std::net::SocketAddr> = match url.host() {
            // Literal addresses need no lookup (and `host_str` keeps an IPv6 literal's brackets).
            Some(url::Host::Ipv4(ip)) => vec![(IpAddr::V4(ip), port).into()],
            Some(url::Host::Ipv6(ip)) => vec![(IpAddr::V6(ip), port).into()],
            Some(url::Host::Domain(host)) => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| e.to_string())?
                .collect(),
            None => return Err("no host".into()),
        };
        let host = url.host_str().unwrap_or_default();
        if addrs.is_empty() || addrs.iter().any(|a| !is_public(a.ip())) {
            return Err(format!("{host} resolves to a non-public address"));
        }
        Ok(addrs)
    }
}

/// Whether an IPv4 address is routable on the public internet.
fn is_public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    !(v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_broadcast()
        || v4.is_documentation()
        || v4.is_unspecified()
        || v4.is_multicast()
        || a == 0
        // Carrier-grade NAT, 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24; the 6to4 relay anycast, 192.88.99.0/24.
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 88 && c == 99)
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b & 0xfe) == 18)
        // Reserved, 240.0.0.0/4.
        || a >= 240)
}

/// Whether an address is routable on the public internet. IPv6 forms that carry an IPv4
/// address (mapped, compatible, NAT64, 6to4) are judged by that address.
pub fn is_public(ip: IpAddr) -> bool {
    let v6 = match ip {
        IpAddr::V4(v4) => return is_public_v4(v4),
        IpAddr::V6(v6) => v6,
    };
    let seg = v6.segments();
    let o = v6.octets();
    let embedded = |at: usize| Ipv4Addr::new(o[at], o[at + 1], o[at + 2], o[at + 3]);
    if let Some(v4) = v6.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    // IPv4-compatible (::a.b.c.d, deprecated) and the loopback and unspecified addresses.
    if seg[..6].iter().all(|s| *s == 0) {
        return !(v6.is_loopback() || v6.is_unspecified()) && is_public_v4(embedded(12));
    }
    // NAT64, 64:ff9b::/96 and the local-use 64:ff9b:1::/48.
    if seg[0] == 0x64 && seg[1] == 0xff9b {
        return seg[2] == 0 && is_public_v4(embedded(12));
    }
    // 6to4, 2002::/16: the IPv4 address is bits 16-47.
    if seg[0] == 0x2002 {
        return is_public_v4(embedded(2));
    }
    // Only global unicast, 2000::/3, reaches the internet: what lies outside it (unique and
    // site local, link-local, multicast, discard-only, reserved) is never public. Within it:
    // the IETF protocol assignments 2001::/23 (Teredo, benchmarking, ORCHID and the rest; a
    // webhook has no business with their few anycast services), and the documentation
    // prefixes 2001:db8::/32 and 3fff::/20.
    (seg[0] & 0xe000) == 0x2000
        && !(seg[0] == 0x2001 && (seg[1] < 0x0200 || seg[1] == 0x0db8))
        && !(seg[0] == 0x3fff && seg[1] < 0x1000)
}

/// Most webhook POSTs in flight at once: in all, of one client, and of one client to one
/// host. Slow receivers hold connections for up to 5 s each, and must not exhaust file
/// descriptors or starve others: a client's slow endpoint holds up only that client's
/// webhooks (another client's to the same host, a shared integration platform say, go on).
const MAX_IN_FLIGHT: usize = 64;
const MAX_PER_CLIENT: usize = 16;
const MAX_PER_HOST: usize = 8;

/// A client's lane of POSTs (to every host, or to one), and its size.
type Lanes = HashMap<(String, Option<String>), (Arc<Semaphore>, usize)>;

/// The bounds of concurrent deliveries, shared by a deliverer's clones.
struct Limits {
    all: Semaphore,
    lanes: Mutex<Lanes>,
}

impl Limits {
    /// The lane of `client`'s POSTs to `host`, or to every host.
    fn lane(&self, client: &str, host: Option<&str>) -> Arc<Semaphore> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        if lanes.len() >= 4 * MAX_IN_FLIGHT {
            // Forget the lanes nobody is sending through.
            lanes.retain(|_, (s, size)| s.available_permits() < *size);
        }
        let size = if host.is_some() { MAX_PER_HOST } else { MAX_PER_CLIENT };
        lanes
            .entry((client.to_owned(), host.map(str::to_owned)))
            .or_insert_with(|| (Arc::new(Semaphore::new(size)), size))
            .0
            .clone()
    }
}

/// Sends webhooks. Registrations and tokens are read when a webhook is sent.
#[derive(Clone)]
pub struct Deliverer {
    store: Arc<dyn Store>,
    policy: UrlPolicy,
    client: reqwest::Client,
    limits: Arc<Limits>,
}

impl Deliverer {
    pub fn new(store: Arc<dyn Store>, policy: UrlPolicy) -> Self {
        Deliverer {
            store,
            policy,
            client: build_client(&[]).unwrap_or_default(),
            limits: Arc::new(Limits {
                all: Semaphore::new(MAX_IN_FLIGHT),
                lanes: Mutex::default(),
            }),
        }
    }

    /// Whether the envelope's outbox entry is still there: with an in-memory queue, `false`
    /// means a copy of it (the sweep re-sends entries still waiting in the queue) was
    /// attempted already.
    pub async fn outbox_holds(&self, env: &Envelope) -> Result<bool, crate::store::StoreError> {
        Ok(self.store.get(&env.outbox_key()).await?.is_some())
    }

    /// Removes the envelope's outbox entry once its delivery attempt is made. Left behind
    /// (the store refused), it is delivered again by a sweep: at least once, never lost.
    pub async fn clear_outbox(&self, env: &Envelope) {
        let delete = Write::Delete {
            key: env.outbox_key(),
            cond: None,
        };
        if let Err(e) = self.store.write(vec![delete]).await {
            tracing::warn!(error = %e, "outbox entry not cleared; a sweep will send it again");
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
        let (owner, key) = match crate::auth::load_client(self.store.as_ref(), &env.client_id).await {
            Ok(Some(c)) => (c.token_owner().to_owned(), c.webhook_key),
            _ => (env.client_id.clone(), None),
        };
        let tokens = if env.event.tokenless {
            Vec::new()
        } else {
            super::load_tokens(self.store.as_ref(), &owner).await?
        };
        let body = match key {
            None => env.form_body(),
            // Never sent in clear once the client asked for encryption.
            Some(key) => {
                match super::crypto::parse_key(&key).and_then(|k| super::crypto::encrypt(&k, &env.form_body())) {
                    Ok(body) => body,
                    Err(e) => {
                        tracing::error!(method = %env.event.method, error = %e, "webhook not encrypted; not sent");
                        return Ok(());
                    }
                }
            }
        };
        let sends = urls
            .iter()
            .map(|url| self.post(&env.client_id, url, &tokens, body.clone()));
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

    async fn post(&self, client: &str, url: &str, tokens: &[String], body: String) -> Result<u16, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        // Always in this order (host lane, client lane, all): no two POSTs wait on each other.
        let host = self.limits.lane(client, Some(parsed.host_str().unwrap_or_default()));
        let _host = host.acquire().await.map_err(|e| e.to_string())?;
        let own = self.limits.lane(client, None);
        let _own = own.acquire().await.map_err(|e| e.to_string())?;
        let _all = self.limits.all.acquire().await.map_err(|e| e.to_string())?;
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

    #[tokio::test]
    async fn deliveries_are_bounded_by_client_and_host() {
        let d = Deliverer::new(
            Arc::new(crate::store::embedded::EmbeddedStore::in_memory()),
            UrlPolicy::Sandbox,
        );
        let host = d.limits.lane("a", Some("slow.example"));
        let held: Vec<_> = (0..MAX_PER_HOST)
            .map(|_| host.try_acquire().expect("a permit"))
            .collect();
        assert!(
            host.try_acquire().is_err(),
            "a ninth POST of one client to one host waits"
        );
        assert!(
            d.limits.lane("a", Some("other.example")).try_acquire().is_ok(),
            "other hosts do not"
        );
        assert!(
            d.limits.lane("b", Some("slow.example")).try_acquire().is_ok(),
            "nor does another client's POST to the same host"
        );
        drop(held);
        assert_eq!(
            d.limits.lane("a", Some("slow.example")).available_permits(),
            MAX_PER_HOST
        );
        let own = d.limits.lane("a", None);
        let held: Vec<_> = (0..MAX_PER_CLIENT)
            .map(|_| own.try_acquire().expect("a permit"))
            .collect();
        assert!(
            own.try_acquire().is_err(),
            "a client's POSTs to many hosts are bounded too"
        );
        assert!(d.limits.lane("b", None).try_acquire().is_ok());
        drop(held);
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "198.18.0.1",
            "198.19.255.255",
            "224.0.0.1",
            "239.1.2.3",
            "240.0.0.1",
            "255.255.255.255",
            "192.0.0.8",
            "192.88.99.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b:1::1",
            "2002:0a00:0001::1",
            "2002:7f00:0001::1",
            "::10.0.0.1",
            "::127.0.0.1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "100::1",
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
            "fec0::1",
            "4000::1",
            "2001:2::1",
            "2001:20::1",
            "2001:100::1",
            "2001:1ff:ffff::1",
            "3fff::1",
            "3fff:fff::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "2a00:1450:4001:80b::200e",
            "64:ff9b::8.8.8.8",
            "2002:0808:0808::1",
            "198.20.0.1",
            "2001:200::1",
            "2001:db9::1",
            "3fff:1000::1",
            "3ffe::1",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn production_takes_https_to_public_hosts_only() {
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        for refused in [
            "http://example.com/h",
            "https://127.0.0.1/h",
            "https://localhost/h",
            "https://[::1]:8443/h",
            "https://[fd00::1]/h",
        ] {
            assert!(UrlPolicy::Production.resolve(&url(refused)).await.is_err(), "{refused}");
        }
        // An IPv6 literal is judged by its address, not looked up with its brackets.
        let pinned = UrlPolicy::Production
            .resolve(&url("https://[2606:4700::1111]:8443/h"))
            .await
            .expect("a public IPv6 literal");
        assert_eq!(pinned, vec!["[2606:4700::1111]:8443".parse().unwrap()]);
        assert!(UrlPolicy::Production.check("http://8.8.8.8/h").await.is_err());
        assert!(UrlPolicy::Sandbox.resolve(&url("http://127.0.0.1:9/h")).await.is_ok());
        assert!(UrlPolicy::Sandbox.resolve(&url("ftp://127.0.0.1/h")).await.is_err());
    }
}
