//! Credentials, API keys, method permissions, scopes and IP allow-lists.
//!
//! Keys are 256-bit random values shown once; only a BLAKE3 derived hash is stored and
//! compared in constant time (a password hash would cost milliseconds per request and buys
//! nothing for random keys). Client records are cached per instance for a short time.

use std::borrow::Cow;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use http::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::store::{CmpOp, Cond, Key, Store, Val, Write};

const KEY_CONTEXT: &str = "investment-platform-service 2026 api key";

/// One API key of a client: only its hash is kept. A deactivated key stays listed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub key_id: String,
    /// Hex BLAKE3 hash (see [`hash_key`]).
    pub hash: String,
    pub created_date: String,
    pub active: bool,
}

impl ApiKey {
    /// A new active key created at `created_date`, and its secret (shown once).
    pub fn generate(created_date: String) -> (ApiKey, String) {
        let secret = random_secret();
        let key = ApiKey::of(&secret, created_date);
        (key, secret)
    }

    /// The active key record of a known secret.
    pub fn of(secret: &str, created_date: String) -> ApiKey {
        ApiKey {
            key_id: format!("k{}", &random_secret()[..12]),
            hash: hash_key(secret).to_hex().to_string(),
            created_date,
            active: true,
        }
    }
}

/// The ID of the sandbox client's key (keys the operator adds are `k…`).
pub const SANDBOX_KEY_ID: &str = "dev";

/// A client platform: its keys (hashed), permissions and allow-list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    #[serde(rename = "clientId")]
    pub id: String,
    #[serde(rename = "parentClientId")]
    pub parent: Option<String>,
    /// Every key the client was given, active or not.
    pub keys: Vec<ApiKey>,
    /// Method-style operations the keys may call; `*` for all.
    pub methods: Vec<String>,
    /// Resource-style scopes; `*` for all.
    pub scopes: Vec<String>,
    /// Addresses or CIDR blocks; empty allows every address.
    #[serde(rename = "ipAllowlist")]
    pub ip_allowlist: Vec<String>,
    /// Fields the keys may set; `None` for all (`110` otherwise).
    #[serde(rename = "fieldPermissions", default)]
    pub field_permissions: Option<Vec<String>>,
    /// Base64 of the 32-byte AES-256-GCM key webhooks are encrypted with, when set.
    #[serde(rename = "webhookKey", default, skip_serializing_if = "Option::is_none")]
    pub webhook_key: Option<String>,
    /// The active keys' hashes, parsed once when the record is read, so that authentication
    /// parses nothing per request.
    #[serde(skip)]
    pub(crate) hashes: Vec<blake3::Hash>,
    /// The stored record's version (0: not stored yet): a save is conditioned on it, so
    /// concurrent changes never overwrite each other.
    #[serde(skip)]
    pub version: u64,
}

impl ClientRecord {
    /// A new client `id` with one key, calling `methods` with `scopes` from
    /// `ip_allowlist`, allowed to set every field.
    pub fn new(
        id: String,
        parent: Option<String>,
        key: ApiKey,
        methods: Vec<String>,
        scopes: Vec<String>,
        ip_allowlist: Vec<String>,
    ) -> Self {
        ClientRecord {
            id,
            parent,
            keys: vec![key],
            methods,
            scopes,
            ip_allowlist,
            ..ClientRecord::default()
        }
    }

    /// The store key of a client record.
    pub fn key(id: &str) -> Key {
        Key::new("CLIENT", id)
    }

    /// The local API's sandbox client (the one given the `dev` key): CONTRACT gives it every
    /// method and scope, every field, no allow-list and no parent, so nothing narrows it.
    pub fn is_sandbox(&self) -> bool {
        self.keys.iter().any(|k| k.key_id == SANDBOX_KEY_ID)
    }

    /// Whether it holds CONTRACT's rights of the sandbox client.
    pub fn has_every_right(&self) -> bool {
        self.methods == ["*"]
            && self.scopes == ["*"]
            && self.ip_allowlist.is_empty()
            && self.field_permissions.is_none()
            && self.parent.is_none()
    }

    /// The client whose webhook tokens this one shares (its parent, or itself).
    pub fn token_owner(&self) -> &str {
        self.parent.as_deref().unwrap_or(&self.id)
    }

    /// Exactly the names the list gives: aliases that differ only in case are different
    /// operations (`updateAccountArchivestatus`, `updateAccountArchiveStatus`).
    pub fn may_call(&self, method: &str) -> bool {
        self.methods.iter().any(|m| m == "*" || m == method)
    }

    pub fn ip_allowed(&self, ip: IpAddr) -> bool {
        // An IPv4 address written IPv4-mapped (`::ffff:10.0.0.1`), in the list or as the
        // caller's, is that IPv4 address.
        let ip = ip.to_canonical();
        self.ip_allowlist.is_empty()
            || self
                .ip_allowlist
                .iter()
                .any(|entry| match entry.parse::<ipnet::IpNet>() {
                    Ok(net) => canonical_net(net).contains(&ip),
                    Err(_) => entry.parse::<IpAddr>().is_ok_and(|a| a.to_canonical() == ip),
                })
    }

    /// The PII level granted for a scope family (`account.read`, `party.read`), if any.
    pub fn scope_level(&self, family: &str) -> Option<PiiLevel> {
        self.scopes
            .iter()
            .filter_map(|s| {
                if s == "*" || s == family {
                    return Some(PiiLevel::High);
                }
                match s.strip_prefix(family)? {
                    ".pii_high" => Some(PiiLevel::High),
                    ".pii_medium" => Some(PiiLevel::Medium),
                    ".pii_low" => Some(PiiLevel::Low),
                    _ => None,
                }
            })
            .max()
    }

    pub fn may_set(&self, field: &str) -> bool {
        self.field_permissions
            .as_ref()
            .is_none_or(|f| f.iter().any(|x| x == "*" || x == field))
    }

    pub fn matches_key(&self, api_key: &str) -> bool {
        let presented = hash_key(api_key);
        // Every active hash is compared, each in constant time (blake3::Hash's equality).
        self.hashes.iter().fold(false, |found, h| (*h == presented) | found)
    }

    /// Parses the active keys' hashes for [`ClientRecord::matches_key`].
    fn parse_hashes(&mut self) {
        self.hashes = self
            .keys
            .iter()
            .filter(|k| k.active)
            .filter_map(|k| blake3::Hash::from_hex(&k.hash).ok())
            .collect();
    }

    /// The write that stores this record: a new one only where none exists, a changed one
    /// only over the version it was read at.
    pub fn save(&self) -> Write {
        let mut item = ClientRecord::key(&self.id).item();
        item.insert("d".into(), Val::S(serde_json::to_string(self).unwrap_or_default()));
        item.insert("v".into(), Val::from(self.version as i64 + 1));
        let cond = match self.version {
            0 => Cond::NotExists,
            v => Cond::Cmp("v".into(), CmpOp::Eq, Val::from(v as i64)),
        };
        Write::Put { item, cond: Some(cond) }
    }
}

/// PII levels of read scopes; a higher level implies the lower ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PiiLevel {
    Low,
    Medium,
    High,
}

/// The stored form of an API key: BLAKE3 keyed by a key derived once from a fixed context.
pub fn hash_key(api_key: &str) -> blake3::Hash {
    static KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| blake3::derive_key(KEY_CONTEXT, b"api keys"));
    blake3::keyed_hash(key, api_key.as_bytes())
}

/// A new 256-bit random secret, hex-encoded.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Credentials presented with a request: borrowed from its header, owned when they come
/// from a decoded body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials<'a> {
    pub client_id: Cow<'a, str>,
    pub api_key: Cow<'a, str>,
}

/// `Authorization: Bearer <CLIENT_ID>:<API_KEY>`. `Some(None)` when a header is present but
/// unusable (it still wins over body credentials).
pub fn header_credentials(headers: &HeaderMap) -> Option<Option<Credentials<'_>>> {
    let value = headers.get(http::header::AUTHORIZATION)?;
    let parsed = value.to_str().ok().and_then(|v| {
        let (scheme, rest) = v.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let (id, key) = rest.trim().split_once(':')?;
        (!id.is_empty() && !key.is_empty()).then_some(Credentials {
            client_id: Cow::Borrowed(id),
            api_key: Cow::Borrowed(key),
        })
    });
    Some(parsed)
}

/// When a client record was read, and what it was.
type CacheEntry = (Instant, Arc<ClientRecord>);

/// How many client IDs the cache remembers as unknown; past it, only those are forgotten.
const MAX_UNKNOWN: usize = 10_000;

/// Client records cached per instance for `ttl` (≤ 60 s), so authentication usually costs
/// no store read. Operator changes made in this process invalidate the entry at once.
/// Unknown IDs are remembered apart, in a bounded map, so that a caller sending random IDs
/// can never evict a real client's entry.
pub struct ClientCache {
    ttl: Duration,
    entries: RwLock<HashMap<String, CacheEntry>>,
    unknown: RwLock<HashMap<String, Instant>>,
}

impl ClientCache {
    pub fn new(ttl: Duration) -> Self {
        ClientCache {
            ttl: ttl.min(Duration::from_secs(60)),
            entries: RwLock::default(),
            unknown: RwLock::default(),
        }
    }

    pub fn invalidate(&self, client_id: &str) {
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(client_id);
        self.unknown
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(client_id);
    }

    /// The client record, from the cache or the store.
    pub async fn get(&self, store: &dyn Store, client_id: &str) -> Result<Option<Arc<ClientRecord>>, ApiError> {
        if let Some((at, rec)) = self.entries.read().unwrap_or_else(|e| e.into_inner()).get(client_id) {
            if at.elapsed() < self.ttl {
                return Ok(Some(rec.clone()));
            }
        }
        if let Some(at) = self.unknown.read().unwrap_or_else(|e| e.into_inner()).get(client_id) {
            if at.elapsed() < self.ttl {
                return Ok(None);
            }
        }
        let rec = load_client(store, client_id).await?.map(Arc::new);
        if let Some(rec) = &rec {
            let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
            entries.retain(|_, (at, _)| at.elapsed() < self.ttl);
            entries.insert(client_id.to_owned(), (Instant::now(), rec.clone()));
        } else {
            let mut unknown = self.unknown.write().unwrap_or_else(|e| e.into_inner());
            if unknown.len() >= MAX_UNKNOWN {
                unknown.clear();
            }
            unknown.insert(client_id.to_owned(), Instant::now());
        }
        Ok(rec)
    }

    /// Authenticates credentials: `103` unless the client exists and the key matches. An ID
    /// no client can have (empty, too long, or with control characters such as NUL) is `103`
    /// without a store read.
    pub async fn authenticate(
        &self,
        store: &dyn Store,
        creds: &Credentials<'_>,
    ) -> Result<Arc<ClientRecord>, ApiError> {
        let id = &creds.client_id;
        if id.is_empty() || id.len() > 256 || id.chars().any(char::is_control) {
            return Err(ApiError::InvalidCredentials);
        }
        match self.get(store, id).await? {
            Some(c) if c.matches_key(&creds.api_key) => Ok(c),
            _ => Err(ApiError::InvalidCredentials),
        }
    }
}

/// Reads a client record from the store.
pub async fn load_client(store: &dyn Store, client_id: &str) -> Result<Option<ClientRecord>, ApiError> {
    let Some(item) = store.get(&ClientRecord::key(client_id)).await? else {
        return Ok(None);
    };
    let Some(Val::S(d)) = item.get("d") else {
        return Ok(None);
    };
    let mut rec: ClientRecord =
        serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt client record", e))?;
    rec.parse_hashes();
    rec.version = item
        .get("v")
        .and_then(Val::as_num)
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or(0);
    Ok(Some(rec))
}

/// A network written in IPv4-mapped form (`::ffff:10.0.0.0/104`) as the IPv4 network it is.
fn canonical_net(net: ipnet::IpNet) -> ipnet::IpNet {
    match net {
        ipnet::IpNet::V6(v6) if v6.prefix_len() >= 96 => match v6.addr().to_ipv4_mapped() {
            Some(v4) => ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96).map_or(net, ipnet::IpNet::V4),
            None => net,
        },
        _ => net,
    }
}
