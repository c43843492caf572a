//! The blob-store port: document bytes live outside the record store (S3 in AWS, a directory
//! locally) and are handed to clients as signed URLs that expire.
//!
//! Keys are built by the service (`{client}/{kind}/{owner}/{documentId}/{file}`), never taken
//! from a request as they are, so one client can never address another's objects.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

/// How long a document URL stays valid.
pub const URL_TTL: Duration = Duration::from_secs(15 * 60);

/// The path prefix under which the local API serves signed blob URLs.
pub const LOCAL_PREFIX: &str = "/blobs/";

#[derive(Debug, thiserror::Error)]
#[error("blob store: {0}")]
pub struct BlobError(pub String);

/// Where document bytes are kept.
#[async_trait]
pub trait Blobs: Send + Sync {
    async fn put(&self, key: &str, bytes: Bytes, content_type: &str) -> Result<(), BlobError>;
    /// Removes an object; a missing one is not an error.
    async fn delete(&self, key: &str) -> Result<(), BlobError>;
    /// A URL that reads the object until `ttl` has passed.
    async fn url(&self, key: &str, ttl: Duration) -> Result<String, BlobError>;
    /// Answers a request for a URL this store signed itself (the local directory store); a
    /// store whose URLs point elsewhere (S3) serves nothing.
    async fn serve(&self, _path: &str, _query: Option<&str>) -> Option<Served> {
        None
    }
}

/// The answer to a signed-URL request.
#[derive(Debug)]
pub enum Served {
    /// The object, opened for the server to stream (never read whole into memory).
    Found {
        file: tokio::fs::File,
        len: u64,
        content_type: &'static str,
    },
    /// Bad or expired signature: 403, as S3 answers.
    Forbidden,
    NotFound,
}

impl Served {
    /// The status and text of a refusal; `None` for a found object.
    pub fn refusal(&self) -> Option<(u16, &'static str)> {
        match self {
            Served::Found { .. } => None,
            Served::Forbidden => Some((403, "Request has expired or its signature is invalid")),
            Served::NotFound => Some((404, "Not found")),
        }
    }
}

/// The content type of a document by its file name's extension.
pub fn content_type(file_name: &str) -> &'static str {
    let ext = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("pdf") => "application/pdf",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("png") => "image/png",
        Some("txt") => "text/plain",
        Some("xls") => "application/vnd.ms-excel",
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        _ => "application/octet-stream",
    }
}

/// A file name made safe for a key: ASCII letters, digits, `.`, `-` and `_` kept, the rest `_`.
pub fn safe_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if cleaned.is_empty() {
        "file".into()
    } else {
        cleaned.chars().take(120).collect()
    }
}

/// Documents in a local directory, served by the local API under [`LOCAL_PREFIX`] with an
/// expiry and a keyed BLAKE3 signature in the query.
pub struct DirBlobs {
    dir: PathBuf,
    base_url: String,
    secret: [u8; 32],
}

impl DirBlobs {
    /// `base_url` is how clients reach the local API (`http://127.0.0.1:8080`); the signing
    /// secret lives in `dir` so that URLs survive a restart.
    pub fn open(dir: PathBuf, base_url: &str) -> Result<DirBlobs, BlobError> {
        std::fs::create_dir_all(&dir).map_err(|e| BlobError(format!("{}: {e}", dir.display())))?;
        let secret_file = dir.join(".url-secret");
        let secret = match std::fs::read(&secret_file) {
            Ok(b) if b.len() == 32 => b.try_into().unwrap_or([0; 32]),
            _ => {
                let mut s = [0u8; 32];
                getrandom::fill(&mut s).map_err(|e| BlobError(e.to_string()))?;
                std::fs::write(&secret_file, s).map_err(|e| BlobError(e.to_string()))?;
                s
            }
        };
        Ok(DirBlobs {
            dir,
            base_url: base_url.trim_end_matches('/').to_owned(),
            secret,
        })
    }

    fn path(&self, key: &str) -> Result<PathBuf, BlobError> {
        if key.split('/').any(|s| s.is_empty() || s == "." || s == "..") || key.contains('\\') {
            return Err(BlobError(format!("bad key {key:?}")));
        }
        Ok(self.dir.join("objects").join(key))
    }

    fn signed_url(&self, key: &str, expires: i64) -> Result<String, BlobError> {
        self.path(key)?;
        let encoded: String = key
            .split('/')
            .map(|s| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string())
            .collect::<Vec<_>>()
            .join("/");
        Ok(format!(
            "{}{LOCAL_PREFIX}{encoded}?expires={expires}&signature={}",
            self.base_url,
            self.signature(key, expires)
        ))
    }

    fn signature(&self, key: &str, expires: i64) -> String {
        let mut h = blake3::Hasher::new_keyed(&self.secret);
        h.update(key.as_bytes());
        h.update(b"\n");
        h.update(expires.to_string().as_bytes());
        h.finalize().to_hex().to_string()
    }
}

fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn blocking<T: Send + 'static>(f: impl FnOnce() -> std::io::Result<T> + Send + 'static) -> BlobFuture<T> {
    Box::pin(async move {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| BlobError(e.to_string()))?
            .map_err(|e| BlobError(e.to_string()))
    })
}

type BlobFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, BlobError>> + Send>>;

#[async_trait]
impl Blobs for DirBlobs {
    async fn put(&self, key: &str, bytes: Bytes, _content_type: &str) -> Result<(), BlobError> {
        let path = self.path(key)?;
        blocking(move || {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Written aside and renamed, so a reader never sees half a file.
            let tmp = path.with_extension(format!("tmp-{}", crate::ids::unique()));
            std::fs::write(&tmp, &bytes)?;
            std::fs::rename(&tmp, &path)
        })
        .await
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        let path = self.path(key)?;
        blocking(move || match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        })
        .await
    }

    async fn url(&self, key: &str, ttl: Duration) -> Result<String, BlobError> {
        let expires = unix_now() + i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2);
        self.signed_url(key, expires)
    }

    async fn serve(&self, path: &str, query: Option<&str>) -> Option<Served> {
        let encoded = path.strip_prefix(LOCAL_PREFIX)?;
        let key = percent_encoding::percent_decode_str(encoded)
            .decode_utf8()
            .ok()?
            .into_owned();
        let pairs = crate::http::params::decode_form(query.unwrap_or("").as_bytes()).unwrap_or_default();
        let find = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let expires = find("expires").and_then(|e| e.parse::<i64>().ok());
        let valid = match (expires, find("signature")) {
            (Some(exp), Some(sig)) => {
                let expected = self.signature(&key, exp);
                exp >= unix_now() && constant_time_eq(expected.as_bytes(), sig.as_bytes())
            }
            _ => false,
        };
        if !valid {
            return Some(Served::Forbidden);
        }
        let Ok(file) = self.path(&key) else {
            return Some(Served::NotFound);
        };
        let Ok(file) = tokio::fs::File::open(file).await else {
            return Some(Served::NotFound);
        };
        Some(match file.metadata().await {
            Ok(meta) if meta.is_file() => Served::Found {
                file,
                len: meta.len(),
                content_type: content_type(&key),
            },
            _ => Served::NotFound,
        })
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Documents in an S3 bucket; URLs are S3 presigned GETs.
pub struct S3Blobs {
    client: aws_sdk_s3::Client,
    bucket: String,
}

fn s3_err(e: impl std::fmt::Display) -> BlobError {
    BlobError(e.to_string())
}

impl S3Blobs {
    /// An endpoint override (moto, LocalStack) needs path-style addressing: the bucket cannot
    /// be a subdomain of an IP address.
    pub fn new(sdk: &aws_config::SdkConfig, bucket: String) -> S3Blobs {
        let path_style = sdk.endpoint_url().is_some() || std::env::var_os("AWS_ENDPOINT_URL_S3").is_some();
        let conf = aws_sdk_s3::config::Builder::from(sdk)
            .force_path_style(path_style)
            .build();
        S3Blobs {
            client: aws_sdk_s3::Client::from_conf(conf),
            bucket,
        }
    }

    /// Creates the bucket when missing (the local API and tests; in AWS the template owns it).
    pub async fn ensure_bucket(&self) -> Result<(), BlobError> {
        if self.client.head_bucket().bucket(&self.bucket).send().await.is_ok() {
            return Ok(());
        }
        match self.client.create_bucket().bucket(&self.bucket).send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_bucket_already_owned_by_you()) => Ok(()),
            Err(e) => Err(s3_err(aws_sdk_s3::error::DisplayErrorContext(e))),
        }
    }
}

#[async_trait]
impl Blobs for S3Blobs {
    async fn put(&self, key: &str, bytes: Bytes, content_type: &str) -> Result<(), BlobError> {
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type(content_type)
            .body(bytes.into())
            .send()
            .await
            .map(|_| ())
            .map_err(|e| s3_err(aws_sdk_s3::error::DisplayErrorContext(e)))
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| s3_err(aws_sdk_s3::error::DisplayErrorContext(e)))
    }

    async fn url(&self, key: &str, ttl: Duration) -> Result<String, BlobError> {
        let presign = aws_sdk_s3::presigning::PresigningConfig::expires_in(ttl).map_err(s3_err)?;
        let req = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .presigned(presign)
            .await
            .map_err(|e| s3_err(aws_sdk_s3::error::DisplayErrorContext(e)))?;
        Ok(req.uri().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (DirBlobs, PathBuf) {
        let dir = std::env::temp_dir().join(format!("ips-blobs-{}", crate::ids::unique()));
        (DirBlobs::open(dir.clone(), "http://local.test").unwrap(), dir)
    }

    fn split(url: &str) -> (&str, &str) {
        let rest = url.strip_prefix("http://local.test").unwrap();
        rest.split_once('?').unwrap()
    }

    /// The bytes and content type served, or the status of the refusal.
    async fn read(b: &DirBlobs, path: &str, query: Option<&str>) -> Result<(Vec<u8>, &'static str), u16> {
        match b.serve(path, query).await.expect("a local URL") {
            Served::Found {
                mut file,
                len,
                content_type,
            } => {
                let mut bytes = Vec::new();
                tokio::io::AsyncReadExt::read_to_end(&mut file, &mut bytes)
                    .await
                    .unwrap();
                assert_eq!(bytes.len() as u64, len);
                Ok((bytes, content_type))
            }
            refused => Err(refused.refusal().unwrap().0),
        }
    }

    #[tokio::test]
    async fn signed_urls_read_until_they_expire_and_not_when_tampered() {
        let (b, dir) = store();
        b.put(
            "c1/DOC/P1/100000/a b.pdf",
            Bytes::from_static(b"%PDF-1"),
            "application/pdf",
        )
        .await
        .unwrap();
        let url = b.url("c1/DOC/P1/100000/a b.pdf", URL_TTL).await.unwrap();
        let (path, query) = split(&url);
        assert_eq!(
            read(&b, path, Some(query)).await,
            Ok((b"%PDF-1".to_vec(), "application/pdf"))
        );
        let other = path.replace("P1", "P2");
        assert_eq!(read(&b, &other, Some(query)).await, Err(403));
        let later = query.replacen("expires=", "expires=9", 1);
        assert_eq!(read(&b, path, Some(&later)).await, Err(403));
        assert_eq!(read(&b, path, None).await, Err(403));

        let expired = b.signed_url("c1/DOC/P1/100000/a b.pdf", unix_now() - 5).unwrap();
        let (path, query) = split(&expired);
        assert_eq!(read(&b, path, Some(query)).await, Err(403));

        b.delete("c1/DOC/P1/100000/a b.pdf").await.unwrap();
        b.delete("c1/DOC/P1/100000/a b.pdf").await.unwrap();
        let (path, query) = split(&url);
        assert_eq!(read(&b, path, Some(query)).await, Err(404));
        std::fs::remove_dir_all(dir).ok();
    }

    #[tokio::test]
    async fn keys_cannot_leave_the_directory() {
        let (b, dir) = store();
        for key in ["../x", "a//b", "a/./b", "/abs", "a\\b"] {
            assert!(b.put(key, Bytes::new(), "text/plain").await.is_err(), "{key}");
            assert!(b.url(key, URL_TTL).await.is_err(), "{key}");
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn names_and_types() {
        assert_eq!(safe_name("../my file (1).PDF"), "_my_file__1_.PDF");
        assert_eq!(safe_name(""), "file");
        assert_eq!(content_type("X.JPEG"), "image/jpeg");
        assert_eq!(content_type("noext"), "application/octet-stream");
    }
}
