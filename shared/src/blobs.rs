//! The blob-store port: document bytes live outside the record store (S3 in AWS, a directory
//! locally) and are handed to clients as signed URLs that expire. Large documents come in the
//! same way: a signed URL that takes one `PUT` (S3 presigned, or the local API's own).
//!
//! Keys are built by the service (`{client}/{kind}/{owner}/{documentId}/{file}`), never taken
//! from a request as they are, so one client can never address another's objects.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;

use crate::aws::LazyClient;

/// How long a document URL stays valid.
pub const URL_TTL: Duration = Duration::from_secs(15 * 60);

/// The path prefix under which the local API serves signed blob URLs.
pub const LOCAL_PREFIX: &str = "/blobs/";

#[derive(Debug, thiserror::Error)]
#[error("blob store: {0}")]
pub struct BlobError(pub String);

/// The largest object the local store takes through an upload URL (S3 takes up to 5 GB in
/// one `PUT`); what an operation accepts is checked when the object is used.
pub const LOCAL_PUT_MAX_BYTES: u64 = 100 << 20;

/// A request body arriving in chunks.
pub type Chunks = BoxStream<'static, Result<Bytes, BlobError>>;

/// What a bounded read found.
#[derive(Debug, PartialEq)]
pub enum Fetched {
    Found(Bytes),
    Missing,
    /// Larger than the limit: nothing was read beyond the object's size.
    TooLarge,
}

/// Where document bytes are kept.
#[async_trait]
pub trait Blobs: Send + Sync {
    async fn put(&self, key: &str, bytes: Bytes, content_type: &str) -> Result<(), BlobError>;
    /// The object's bytes, unless it is larger than `limit`.
    async fn get(&self, key: &str, limit: u64) -> Result<Fetched, BlobError>;
    /// Removes an object; a missing one is not an error.
    async fn delete(&self, key: &str) -> Result<(), BlobError>;
    /// A URL that reads the object until `ttl` has passed.
    async fn url(&self, key: &str, ttl: Duration) -> Result<String, BlobError>;
    /// A URL that stores the object with one HTTP `PUT` until `ttl` has passed.
    async fn upload_url(&self, key: &str, ttl: Duration) -> Result<String, BlobError>;
    /// Answers a request for a URL this store signed itself (the local directory store); a
    /// store whose URLs point elsewhere (S3) serves nothing.
    async fn serve(&self, _path: &str, _query: Option<&str>) -> Option<Served> {
        None
    }
    /// Takes a `PUT` to an upload URL this store signed itself; `None` as for [`Blobs::serve`].
    async fn receive(&self, _path: &str, _query: Option<&str>, _body: Chunks) -> Option<Received> {
        None
    }
}

/// The answer to a `PUT` on an upload URL.
#[derive(Debug, PartialEq)]
pub enum Received {
    Stored,
    /// Bad or expired signature (or a read URL used to write): 403, as S3 answers.
    Forbidden,
    /// Over [`LOCAL_PUT_MAX_BYTES`]; nothing is kept.
    TooLarge,
    /// The body broke off or the disk failed; nothing is kept.
    Failed,
}

impl Received {
    /// The HTTP status and text of the answer.
    pub fn status(&self) -> (u16, &'static str) {
        match self {
            Received::Stored => (200, ""),
            Received::Forbidden => (403, "Request has expired or its signature is invalid"),
            Received::TooLarge => (413, "Your proposed upload exceeds the maximum allowed size"),
            Received::Failed => (400, "The upload did not complete"),
        }
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

    fn signed_url(&self, verb: Verb, key: &str, expires: i64) -> Result<String, BlobError> {
        self.path(key)?;
        let encoded: String = key
            .split('/')
            .map(|s| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string())
            .collect::<Vec<_>>()
            .join("/");
        Ok(format!(
            "{}{LOCAL_PREFIX}{encoded}?expires={expires}&signature={}",
            self.base_url,
            self.signature(verb, key, expires)
        ))
    }

    /// A URL's signature covers its method, so a read URL never writes and the reverse.
    fn signature(&self, verb: Verb, key: &str, expires: i64) -> String {
        let mut h = blake3::Hasher::new_keyed(&self.secret);
        h.update(verb.as_bytes());
        h.update(b"\n");
        h.update(key.as_bytes());
        h.update(b"\n");
        h.update(expires.to_string().as_bytes());
        h.finalize().to_hex().to_string()
    }
}

/// The method a local URL is signed for.
#[derive(Clone, Copy)]
enum Verb {
    Get,
    Put,
}

impl Verb {
    fn as_bytes(self) -> &'static [u8] {
        match self {
            Verb::Get => b"GET",
            Verb::Put => b"PUT",
        }
    }
}

impl DirBlobs {
    /// The key of a local URL whose signature is valid for `verb` and unexpired; `None` for a
    /// path outside [`LOCAL_PREFIX`], `Some(Err)` for a refused one.
    fn verified(&self, verb: Verb, path: &str, query: Option<&str>) -> Option<Result<String, ()>> {
        let encoded = path.strip_prefix(LOCAL_PREFIX)?;
        let Ok(key) = percent_encoding::percent_decode_str(encoded).decode_utf8() else {
            return Some(Err(()));
        };
        let pairs = crate::http::params::decode_form(query.unwrap_or("").as_bytes()).unwrap_or_default();
        let find = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let expires = find("expires").and_then(|e| e.parse::<i64>().ok());
        let valid = match (expires, find("signature")) {
            (Some(exp), Some(sig)) => {
                let expected = self.signature(verb, &key, exp);
                exp >= unix_now() && constant_time_eq(expected.as_bytes(), sig.as_bytes())
            }
            _ => false,
        };
        Some(if valid { Ok(key.into_owned()) } else { Err(()) })
    }

    /// Writes `body` to `path` through a file beside it, renamed into place once whole.
    async fn write_streamed(path: PathBuf, mut body: Chunks) -> Received {
        use tokio::io::AsyncWriteExt;
        let tmp = path.with_extension(format!("tmp-{}", crate::ids::unique()));
        let written = async {
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await.map_err(|_| Received::Failed)?;
            }
            let mut file = tokio::fs::File::create(&tmp).await.map_err(|_| Received::Failed)?;
            let mut len = 0u64;
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|_| Received::Failed)?;
                len += chunk.len() as u64;
                if len > LOCAL_PUT_MAX_BYTES {
                    return Err(Received::TooLarge);
                }
                file.write_all(&chunk).await.map_err(|_| Received::Failed)?;
            }
            file.sync_all().await.map_err(|_| Received::Failed)?;
            tokio::fs::rename(&tmp, &path).await.map_err(|_| Received::Failed)
        }
        .await;
        match written {
            Ok(()) => Received::Stored,
            Err(refused) => {
                let _ = tokio::fs::remove_file(&tmp).await;
                refused
            }
        }
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

    async fn get(&self, key: &str, limit: u64) -> Result<Fetched, BlobError> {
        let path = self.path(key)?;
        blocking(move || {
            let mut file = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Fetched::Missing),
                Err(e) => return Err(e),
            };
            let len = file.metadata()?.len();
            if len > limit {
                return Ok(Fetched::TooLarge);
            }
            let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            std::io::Read::read_to_end(&mut file, &mut bytes)?;
            Ok(Fetched::Found(bytes.into()))
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
        self.signed_url(Verb::Get, key, expires_in(ttl))
    }

    async fn upload_url(&self, key: &str, ttl: Duration) -> Result<String, BlobError> {
        self.signed_url(Verb::Put, key, expires_in(ttl))
    }

    async fn serve(&self, path: &str, query: Option<&str>) -> Option<Served> {
        let Ok(key) = self.verified(Verb::Get, path, query)? else {
            return Some(Served::Forbidden);
        };
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

    async fn receive(&self, path: &str, query: Option<&str>, body: Chunks) -> Option<Received> {
        let Ok(key) = self.verified(Verb::Put, path, query)? else {
            return Some(Received::Forbidden);
        };
        let Ok(path) = self.path(&key) else {
            return Some(Received::Forbidden);
        };
        Some(Self::write_streamed(path, body).await)
    }
}

fn expires_in(ttl: Duration) -> i64 {
    unix_now() + i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Documents in an S3 bucket; URLs are S3 presigned GETs.
pub struct S3Blobs {
    client: LazyClient<aws_sdk_s3::Client>,
    bucket: String,
}

fn s3_err(e: impl std::fmt::Display) -> BlobError {
    BlobError(e.to_string())
}

impl S3Blobs {
    /// An endpoint override (moto, LocalStack) needs path-style addressing: the bucket cannot
    /// be a subdomain of an IP address.
    pub fn new(sdk: &aws_types::SdkConfig, bucket: String) -> S3Blobs {
        let client = LazyClient::new(sdk, |sdk| {
            let path_style = sdk.endpoint_url().is_some();
            let conf = aws_sdk_s3::config::Builder::from(sdk)
                .force_path_style(path_style)
                .build();
            aws_sdk_s3::Client::from_conf(conf)
        });
        S3Blobs { client, bucket }
    }

    /// Creates the bucket when missing (the local API and tests; in AWS the template owns it).
    pub async fn ensure_bucket(&self) -> Result<(), BlobError> {
        if self
            .client
            .get()
            .head_bucket()
            .bucket(&self.bucket)
            .send()
            .await
            .is_ok()
        {
            return Ok(());
        }
        match self.client.get().create_bucket().bucket(&self.bucket).send().await {
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
            .get()
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

    async fn get(&self, key: &str, limit: u64) -> Result<Fetched, BlobError> {
        let got = self
            .client
            .get()
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await;
        let object = match got {
            Ok(o) => o,
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => return Ok(Fetched::Missing),
            Err(e) => return Err(s3_err(aws_sdk_s3::error::DisplayErrorContext(e))),
        };
        // Dropping the body unread closes the connection: an oversized object is never fetched.
        if object
            .content_length()
            .is_none_or(|len| u64::try_from(len).map_or(true, |l| l > limit))
        {
            return Ok(Fetched::TooLarge);
        }
        let bytes = object.body.collect().await.map_err(s3_err)?.into_bytes();
        Ok(Fetched::Found(bytes))
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        self.client
            .get()
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| s3_err(aws_sdk_s3::error::DisplayErrorContext(e)))
    }

    async fn url(&self, key: &str, ttl: Duration) -> Result<String, BlobError> {
        let get = self.client.get().get_object().bucket(&self.bucket).key(key);
        presigned_uri(get.presigned(presigning(ttl)?).await)
    }

    async fn upload_url(&self, key: &str, ttl: Duration) -> Result<String, BlobError> {
        let put = self.client.get().put_object().bucket(&self.bucket).key(key);
        presigned_uri(put.presigned(presigning(ttl)?).await)
    }
}

fn presigning(ttl: Duration) -> Result<aws_sdk_s3::presigning::PresigningConfig, BlobError> {
    aws_sdk_s3::presigning::PresigningConfig::expires_in(ttl).map_err(s3_err)
}

/// The URL of a presigned request, or why it could not be signed.
fn presigned_uri<E, R>(
    signed: Result<aws_sdk_s3::presigning::PresignedRequest, aws_sdk_s3::error::SdkError<E, R>>,
) -> Result<String, BlobError>
where
    E: std::error::Error + 'static,
    R: std::fmt::Debug,
{
    signed
        .map(|req| req.uri().to_owned())
        .map_err(|e| s3_err(aws_sdk_s3::error::DisplayErrorContext(e)))
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

        let expired = b
            .signed_url(Verb::Get, "c1/DOC/P1/100000/a b.pdf", unix_now() - 5)
            .unwrap();
        let (path, query) = split(&expired);
        assert_eq!(read(&b, path, Some(query)).await, Err(403));

        b.delete("c1/DOC/P1/100000/a b.pdf").await.unwrap();
        b.delete("c1/DOC/P1/100000/a b.pdf").await.unwrap();
        let (path, query) = split(&url);
        assert_eq!(read(&b, path, Some(query)).await, Err(404));
        std::fs::remove_dir_all(dir).ok();
    }

    fn chunks(parts: Vec<Vec<u8>>) -> Chunks {
        futures_util::stream::iter(parts.into_iter().map(|p| Ok(Bytes::from(p)))).boxed()
    }

    #[tokio::test]
    async fn upload_urls_take_one_put_and_only_a_put() {
        let (b, dir) = store();
        let key = "uploads/c1/abc";
        let put = b.upload_url(key, URL_TTL).await.unwrap();
        let (path, query) = split(&put);
        let body = chunks(vec![b"%PDF-".to_vec(), vec![b'x'; 2000]]);
        assert_eq!(b.receive(path, Some(query), body).await, Some(Received::Stored));
        assert_eq!(
            b.get(key, 2005).await.unwrap(),
            Fetched::Found(Bytes::from([b"%PDF-".to_vec(), vec![b'x'; 2000]].concat()))
        );
        assert_eq!(b.get(key, 2004).await.unwrap(), Fetched::TooLarge);
        assert_eq!(b.get("uploads/c1/none", 10).await.unwrap(), Fetched::Missing);
        // The write URL does not read, and a read URL does not write.
        assert_eq!(read(&b, path, Some(query)).await, Err(403));
        let get = b.url(key, URL_TTL).await.unwrap();
        let (path, query) = split(&get);
        let refused = b.receive(path, Some(query), chunks(vec![b"y".to_vec()])).await;
        assert_eq!(refused, Some(Received::Forbidden));
        assert!(matches!(b.get(key, u64::MAX).await.unwrap(), Fetched::Found(bytes) if bytes.len() == 2005));
        let expired = b.signed_url(Verb::Put, key, unix_now() - 5).unwrap();
        let (path, query) = split(&expired);
        assert_eq!(
            b.receive(path, Some(query), chunks(vec![])).await,
            Some(Received::Forbidden)
        );
        std::fs::remove_dir_all(dir).ok();
    }

    #[tokio::test]
    async fn an_oversized_or_broken_put_keeps_nothing() {
        let (b, dir) = store();
        let put = b.upload_url("uploads/c1/big", URL_TTL).await.unwrap();
        let (path, query) = split(&put);
        let mb = vec![0u8; 1 << 20];
        let parts = vec![mb; usize::try_from(LOCAL_PUT_MAX_BYTES >> 20).unwrap() + 1];
        let refused = b.receive(path, Some(query), chunks(parts)).await;
        assert_eq!(refused, Some(Received::TooLarge));
        assert_eq!(refused.unwrap().status().0, 413);
        let broken: Chunks =
            futures_util::stream::iter(vec![Ok(Bytes::from_static(b"abc")), Err(BlobError("reset".into()))]).boxed();
        assert_eq!(b.receive(path, Some(query), broken).await, Some(Received::Failed));
        assert_eq!(b.get("uploads/c1/big", u64::MAX).await.unwrap(), Fetched::Missing);
        let left: Vec<_> = std::fs::read_dir(dir.join("objects/uploads/c1")).unwrap().collect();
        assert!(left.is_empty(), "no partial file is left behind");
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
