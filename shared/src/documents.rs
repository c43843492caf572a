//! Uploaded documents of every group: the indexed multipart convention (`userfile0`,
//! `documentTitle0=<title>&documentTitle1=...`, `filename0=<name>&...`), the type and size
//! rules, the bytes in the blob store and one record per document, kept in its owner's
//! partition so an owner's documents are one query.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::blobs::{content_type, safe_name, Fetched, URL_TTL};
use crate::ctx::Ctx;
use crate::error::ApiError;
use crate::http::params::{Params, Upload};
use crate::ids::{sortable, IdKind};
use crate::store::{Cond, Index, Key, Query, Val, Write};

pub const DOCUMENT: IdKind = IdKind::numeric("document", 100_000);

/// The smallest document accepted (part 1, Limits): 1 kB, which is 1,000 bytes (CONTRACT,
/// "What clients written for the incumbent rely on").
pub const MIN_BYTES: usize = 1_000;

/// Which files an upload accepts.
#[derive(Clone, Copy, Debug)]
pub struct FileRules {
    /// Lower-case extensions without the dot.
    pub extensions: &'static [&'static str],
    pub min_bytes: usize,
    /// The largest file accepted (`usize::MAX`: only the request body limit applies).
    pub max_bytes: usize,
}

/// Account, party and verification documents (and trade documents, CONTRACT.md).
pub const INVESTOR_FILES: FileRules = FileRules {
    extensions: &["pdf", "jpg", "jpeg", "png", "txt"],
    min_bytes: MIN_BYTES,
    max_bytes: usize::MAX,
};

/// Entity documents: no TXT (part 1, Limits).
pub const ENTITY_FILES: FileRules = FileRules {
    extensions: &["pdf", "jpg", "jpeg", "png"],
    min_bytes: MIN_BYTES,
    max_bytes: usize::MAX,
};

/// The largest offering document: 50 MB (part 1, Limits), decimal megabytes, so the rule
/// answers `106` before the 50 MiB body limit answers 413.
pub const OFFERING_MAX_BYTES: usize = 50_000_000;

/// Offering documents: `.pdf`, `.xls`, `.docx` only, 50 MB at most, no minimum beyond one
/// byte (part 1, Limits).
pub const OFFERING_FILES: FileRules = FileRules {
    extensions: &["pdf", "xls", "docx"],
    min_bytes: 1,
    max_bytes: OFFERING_MAX_BYTES,
};

/// One file of an upload request, checked.
#[derive(Clone, Debug)]
pub struct NewFile {
    pub title: String,
    pub file_name: String,
    pub upload: Upload,
}

/// The most files one upload request takes: their records and the webhook are one
/// transaction (at most 100 writes), and a request stays well inside the time limit.
pub const MAX_FILES: usize = 20;

/// What the incumbent answers, word for word, for a file under 1 kB (OBSERVED-MORE).
pub const SIZE_MESSAGE: &str = "Document File Size Must Be Greater Than 1 kb";

/// One `<prefix><n>=<value>` segment of an indexed value.
fn indexed_part<'a>(part: &'a str, prefix: &str) -> Option<(usize, &'a str)> {
    let (name, v) = part.split_once('=')?;
    Some((index_of(name, prefix)?, v))
}

/// `documentTitle0=a&documentTitle1=b` (or `filename0=...`) by index. A value without any
/// indexed prefix is the title of file 0 (one file, prefix optional). A segment that is
/// not `<prefix><n>=` belongs to the value before it (a title may contain `&`). A value
/// wrapped in double quotes (`filename0="deck.pdf"`) is taken without them (CONTRACT,
/// "What clients written for the incumbent rely on").
fn indexed(value: Option<&str>, prefix: &str) -> Vec<(usize, String)> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Vec::new();
    };
    let mut parts: Vec<(usize, String)> = Vec::new();
    for segment in value.split('&') {
        match (indexed_part(segment, prefix), parts.last_mut()) {
            (Some((n, v)), _) => parts.push((n, v.to_owned())),
            (None, Some((_, last))) => {
                last.push('&');
                last.push_str(segment);
            }
            // Text before the first indexed segment: not an indexed value at all.
            (None, None) => {
                parts = vec![(0, value.to_owned())];
                break;
            }
        }
    }
    parts.into_iter().map(|(n, v)| (n, unquoted(v))).collect()
}

/// `v` without the double quotes that wrap it, if they do.
fn unquoted(v: String) -> String {
    match v.strip_prefix('"').and_then(|inner| inner.strip_suffix('"')) {
        Some(inner) => inner.to_owned(),
        None => v,
    }
}

/// `106` for a file under the minimum size: `statusDesc` and `Error(s)` carry the
/// incumbent's message (clients match on it); the desc names the file.
fn size_error(field: &str) -> ApiError {
    let mut body = Map::new();
    body.insert("Error(s)".into(), Value::from(SIZE_MESSAGE));
    ApiError::CodedBody {
        code: "106",
        desc: format!("{SIZE_MESSAGE} ({field})"),
        http: None,
        body,
    }
}

/// Checks one file against the rules: its name's extension and its size.
pub fn check_file(field: &str, file_name: &str, upload: &Upload, rules: &FileRules) -> Result<(), ApiError> {
    let ext = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if !ext.as_deref().is_some_and(|e| rules.extensions.contains(&e)) {
        return Err(ApiError::Invalid {
            name: field.to_owned(),
            why: format!(
                "file type not allowed ({file_name}); allowed: {}",
                rules.extensions.join(", ")
            ),
        });
    }
    if upload.bytes.len() < rules.min_bytes {
        if rules.min_bytes == MIN_BYTES {
            return Err(size_error(field));
        }
        return Err(ApiError::invalid(
            field,
            format!("the file is smaller than {} bytes ({file_name})", rules.min_bytes),
        ));
    }
    if upload.bytes.len() > rules.max_bytes {
        return Err(too_large(field, file_name, rules.max_bytes));
    }
    Ok(())
}

/// Where one file of a request comes from: the request itself, or an upload made before it.
enum Source<'a> {
    Sent(&'a Upload),
    Uploaded(String),
}

impl Source<'_> {
    /// The file's bytes and name (an upload's is the `fileName` it was made with).
    async fn resolve(self, ctx: &Ctx, field: &str, rules: &FileRules) -> Result<Upload, ApiError> {
        match self {
            Source::Sent(upload) => Ok(upload.clone()),
            Source::Uploaded(id) => uploaded(ctx, field, &id, rules).await,
        }
    }
}

/// `<prefix><n>` with `n` decimal digits: `n`.
fn index_of(field: &str, prefix: &str) -> Option<usize> {
    let digits = field.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The files of an indexed upload (`userfile0`, `userfile1`, ..., or in their place
/// `uploadId0`, ... naming uploads made with `POST /v3/documents/uploads`), each with its
/// title and file name, checked against `rules`. `documentTitle` is required; `file_name`
/// defaults to the name the file was sent (or its upload made) with. Nothing is stored here.
pub async fn indexed_files(ctx: &Ctx, params: &Params, rules: &FileRules) -> Result<Vec<NewFile>, ApiError> {
    let titles = indexed(params.opt(&["documentTitle"])?.as_deref(), "documentTitle");
    let names = indexed(params.opt(&["file_name"])?.as_deref(), "filename");
    let mut files: Vec<(usize, String, Source<'_>)> = params
        .uploads()
        .iter()
        .filter_map(|u| Some((index_of(&u.field, "userfile")?, u.field.clone(), Source::Sent(u))))
        .collect();
    for name in params.map().keys() {
        if let Some(n) = index_of(name, UPLOAD_ID) {
            if let Some(id) = params.opt(&[name])?.filter(|id| !id.is_empty()) {
                files.push((n, name.clone(), Source::Uploaded(id)));
            }
        }
    }
    files.sort_by_key(|(n, ..)| *n);
    if files.is_empty() {
        return Err(ApiError::missing("userfile0"));
    }
    if files.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(ApiError::invalid(
            "userfile",
            "each file index may be sent once, as userfile<n> or uploadId<n>",
        ));
    }
    if files.len() > MAX_FILES {
        return Err(ApiError::invalid(
            "userfile",
            format!("at most {MAX_FILES} files per request"),
        ));
    }
    if titles.is_empty() {
        return Err(ApiError::missing("documentTitle"));
    }
    let mut checked = Vec::with_capacity(files.len());
    for (n, field, source) in files {
        let title = titles
            .iter()
            .find(|(i, _)| *i == n)
            .map(|(_, t)| t.clone())
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| ApiError::missing(&format!("documentTitle{n}")))?;
        let upload = source.resolve(ctx, &field, rules).await?;
        let file_name = names
            .iter()
            .find(|(i, _)| *i == n)
            .map(|(_, f)| f.clone())
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| upload.file_name.clone());
        check_file(&field, &file_name, &upload, rules)?;
        checked.push(NewFile {
            title,
            file_name,
            upload,
        });
    }
    Ok(checked)
}

/// The single file of a plain upload: `userfile` (the spec's name), `userfile0` (the indexed
/// form), or an upload's `uploadId` / `uploadId0`; `documentTitle` stored verbatim.
pub async fn single_file(ctx: &Ctx, params: &Params, rules: &FileRules) -> Result<NewFile, ApiError> {
    let sent = ["userfile", "userfile0"]
        .iter()
        .find_map(|f| params.uploads().iter().find(|u| u.field == *f));
    let (field, source) = match sent {
        Some(u) => (u.field.clone(), Source::Sent(u)),
        None => match params.opt(&[UPLOAD_ID, "uploadId0"])?.filter(|id| !id.is_empty()) {
            Some(id) => (UPLOAD_ID.to_owned(), Source::Uploaded(id)),
            None => return Err(ApiError::missing("userfile")),
        },
    };
    let title = params.req(&["documentTitle"])?;
    let upload = source.resolve(ctx, &field, rules).await?;
    check_file(&field, &upload.file_name, &upload, rules)?;
    Ok(NewFile {
        title,
        file_name: upload.file_name.clone(),
        upload,
    })
}

/// The parameter naming an upload in place of a file (`uploadId0`, ... when indexed).
const UPLOAD_ID: &str = "uploadId";

/// How long an upload stays usable once made; its `PUT` URL lasts [`URL_TTL`]. An upload
/// may be used by several requests until then (the same file for two owners, say).
pub const UPLOAD_TTL: chrono::Duration = chrono::Duration::hours(24);

/// The largest uploaded file any operation takes (the offering documents' 50 MB); a rule
/// with a lower maximum applies its own.
pub const UPLOAD_MAX_BYTES: usize = OFFERING_MAX_BYTES;

/// What `POST /v3/documents/uploads` answers: where to `PUT` the file, and the ID that
/// stands for it in an upload operation.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UploadSlot {
    pub upload_id: String,
    pub upload_url: String,
    pub method: &'static str,
    pub file_name: String,
    /// Until when the URL takes the `PUT`.
    pub url_expires_date: String,
    /// Until when the upload can be used.
    pub expires_date: String,
    pub max_bytes: usize,
}

/// The record of an upload, read when it is used.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UploadRecord {
    file_name: String,
    created_date: String,
    /// Unix seconds; also the item's `ttl`, so DynamoDB removes it in time.
    expires: i64,
}

fn upload_record_key(client: &str, id: &str) -> Key {
    Key::new(format!("{client}#UPLOAD#{id}"), "UPLOAD")
}

/// The object of an upload, under a prefix the bucket's lifecycle rule expires.
fn upload_object(client: &str, id: &str) -> String {
    format!("uploads/{client}/{id}")
}

/// A new upload of a file named `file_name` (its extension is its type, checked when the
/// upload is used): its record, and a URL that takes the file with one `PUT`.
pub async fn new_upload(ctx: &Ctx, file_name: &str) -> Result<UploadSlot, ApiError> {
    let file_name = unquoted(file_name.trim().to_owned());
    let ext = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let known = [INVESTOR_FILES, OFFERING_FILES]
        .iter()
        .any(|rules| ext.as_deref().is_some_and(|e| rules.extensions.contains(&e)));
    if !known || file_name.chars().count() > 255 {
        return Err(ApiError::invalid(
            "fileName",
            "a file name of at most 255 characters ending in .pdf, .jpg, .jpeg, .png, .txt, .xls or .docx",
        ));
    }
    let now = ctx.app.clock.now();
    let expires = now + UPLOAD_TTL;
    let id = crate::auth::random_secret()[..32].to_owned();
    let record = UploadRecord {
        file_name: file_name.clone(),
        created_date: ctx.now(),
        expires: expires.timestamp(),
    };
    let mut item = upload_record_key(ctx.client_id(), &id).item();
    let json = serde_json::to_string(&record).map_err(|e| ApiError::internal_from("upload does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    item.insert("ttl".into(), Val::N(expires.timestamp().into()));
    ctx.store()
        .write(vec![Write::Put {
            item,
            cond: Some(Cond::NotExists),
        }])
        .await?;
    let upload_url = ctx
        .blobs()?
        .upload_url(&upload_object(ctx.client_id(), &id), URL_TTL)
        .await
        .map_err(|e| ApiError::internal_from("upload URL not signed", e))?;
    let url_expires = now + chrono::Duration::from_std(URL_TTL).unwrap_or_default();
    Ok(UploadSlot {
        upload_id: id,
        upload_url,
        method: "PUT",
        file_name,
        url_expires_date: crate::clock::timestamp(url_expires),
        expires_date: crate::clock::timestamp(expires),
        max_bytes: UPLOAD_MAX_BYTES,
    })
}

/// The file of upload `id`, sent as `field`: `106` when no upload of this client by that ID
/// has its file (unknown, another client's, expired, or not `PUT` yet), or when the file is
/// larger than `rules` (or [`UPLOAD_MAX_BYTES`]) allow.
async fn uploaded(ctx: &Ctx, field: &str, id: &str, rules: &FileRules) -> Result<Upload, ApiError> {
    let unknown = || {
        ApiError::invalid(
            field,
            "no file was received for this upload (unknown, expired or not sent)",
        )
    };
    if id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(unknown());
    }
    let Some(item) = ctx.store().get(&upload_record_key(ctx.client_id(), id)).await? else {
        return Err(unknown());
    };
    let d = item.get("d").and_then(Val::as_str).unwrap_or("");
    let record: UploadRecord =
        serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt upload record", e))?;
    if record.expires < ctx.app.clock.now().timestamp() {
        return Err(unknown());
    }
    let limit = rules.max_bytes.min(UPLOAD_MAX_BYTES);
    let fetched = ctx
        .blobs()?
        .get(&upload_object(ctx.client_id(), id), limit as u64)
        .await
        .map_err(|e| ApiError::internal_from("upload not read", e))?;
    match fetched {
        Fetched::Found(bytes) => Ok(Upload {
            field: field.to_owned(),
            content_type: content_type(&record.file_name).to_owned(),
            file_name: record.file_name,
            bytes,
        }),
        Fetched::Missing => Err(unknown()),
        Fetched::TooLarge => Err(too_large(field, &record.file_name, limit)),
    }
}

fn too_large(field: &str, file_name: &str, max: usize) -> ApiError {
    ApiError::invalid(field, format!("the file is larger than {max} bytes ({file_name})"))
}

/// Whose document it is: a kind (`ACCOUNT`, `PARTY`, `ENTITY`, `AI`, `TRADE`, ...) and an ID.
#[derive(Clone, Copy, Debug)]
pub struct Owner<'a> {
    pub kind: &'static str,
    pub id: &'a str,
}

/// A stored document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// Numeric, from 100000.
    pub id: String,
    /// The short code clients also know a document by (the ID in base 36).
    pub documentid: String,
    pub owner: String,
    pub document_title: String,
    pub document_file_name: String,
    /// A 12-digit tracking number, or the client's own where the operation takes one.
    pub document_file_reference_code: String,
    pub blob_key: String,
    pub created_date: String,
    /// Operation-specific values (archive status, template name, ...).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// The partition holding an owner's documents (one query lists them).
pub fn partition(client: &str, owner: Owner<'_>) -> String {
    format!("{client}#DOCS#{}#{}", owner.kind, owner.id)
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The short code of a document ID (its number in base 36, four or five characters).
pub fn short_code(id: &str) -> String {
    base36(id.parse().unwrap_or_default())
}

/// Where a document's bytes live: `{client}/{kind}/{owner}/{documentId}/{file}`, built by
/// the service (owner and file name made safe), never taken from a request as it is.
pub fn blob_key(client: &str, owner: Owner<'_>, id: &str, file_name: &str) -> String {
    format!(
        "{client}/{}/{}/{id}/{}",
        owner.kind,
        safe_name(owner.id),
        safe_name(file_name)
    )
}

/// Twelve random digits.
pub fn reference_code() -> String {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("the operating system's random source is available");
    format!("{:012}", u64::from_le_bytes(b) % 1_000_000_000_000)
}

impl Document {
    pub fn key(&self, client: &str, owner: Owner<'_>) -> Key {
        Key::new(partition(client, owner), sortable(&self.id))
    }

    /// The record's write; `Cond::NotExists` for a new one.
    pub fn write(&self, client: &str, owner: Owner<'_>, cond: Option<Cond>) -> Result<Write, ApiError> {
        let mut item = self.key(client, owner).item();
        let json =
            serde_json::to_string(self).map_err(|e| ApiError::internal_from("document does not serialize", e))?;
        item.insert("d".into(), Val::S(json));
        Ok(Write::Put { item, cond })
    }

    pub fn delete(&self, client: &str, owner: Owner<'_>) -> Write {
        Write::Delete {
            key: self.key(client, owner),
            cond: Some(Cond::Exists),
        }
    }

    /// The common fields of a document view: `id`, `documentid`, the owner under
    /// `owner_field`, `documentTitle`, `documentFileName`, `documentFileReferenceCode`,
    /// `documentUrl` (signed, expiring) and `createdDate`.
    pub async fn view(&self, ctx: &Ctx, owner_field: &str) -> Result<Map<String, Value>, ApiError> {
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone().into());
        m.insert("documentid".into(), self.documentid.clone().into());
        m.insert(owner_field.into(), self.owner.clone().into());
        m.insert("documentTitle".into(), self.document_title.clone().into());
        m.insert("documentFileName".into(), self.document_file_name.clone().into());
        m.insert(
            "documentFileReferenceCode".into(),
            self.document_file_reference_code.clone().into(),
        );
        m.insert("documentUrl".into(), self.url(ctx).await?.into());
        m.insert("createdDate".into(), self.created_date.clone().into());
        Ok(m)
    }

    /// A signed URL reading the document for [`URL_TTL`].
    pub async fn url(&self, ctx: &Ctx) -> Result<String, ApiError> {
        ctx.blobs()?
            .url(&self.blob_key, URL_TTL)
            .await
            .map_err(|e| ApiError::internal_from("document URL not signed", e))
    }

    /// Whether `id` names this document (its numeric ID or its short code).
    pub fn is(&self, id: &str) -> bool {
        self.id == id || self.documentid.eq_ignore_ascii_case(id)
    }
}

/// Stores the files' bytes and answers their records and writes; the caller commits the
/// writes with its other changes and events. Should that commit fail, call [`discard`].
pub async fn store(ctx: &Ctx, owner: Owner<'_>, files: Vec<NewFile>) -> Result<(Vec<Document>, Vec<Write>), ApiError> {
    store_with(ctx, owner, files, &Map::new()).await
}

/// [`store`], every record carrying `extra` (operation-specific values).
pub async fn store_with(
    ctx: &Ctx,
    owner: Owner<'_>,
    files: Vec<NewFile>,
    extra: &Map<String, Value>,
) -> Result<(Vec<Document>, Vec<Write>), ApiError> {
    let blobs = ctx.blobs()?;
    let mut docs = Vec::with_capacity(files.len());
    let mut writes = Vec::with_capacity(files.len());
    for f in files {
        let id = ctx.next_id(DOCUMENT).await?;
        let blob_key = blob_key(ctx.client_id(), owner, &id, &f.file_name);
        if let Err(e) = blobs.put(&blob_key, f.upload.bytes, content_type(&f.file_name)).await {
            discard(ctx, &docs).await;
            return Err(ApiError::internal_from("document not stored", e));
        }
        let doc = Document {
            documentid: short_code(&id),
            id,
            owner: owner.id.to_owned(),
            document_title: f.title,
            document_file_name: f.file_name,
            document_file_reference_code: reference_code(),
            blob_key,
            created_date: ctx.now(),
            extra: extra.clone(),
        };
        writes.push(doc.write(ctx.client_id(), owner, Some(Cond::NotExists))?);
        docs.push(doc);
    }
    Ok((docs, writes))
}

/// Removes the bytes of documents whose records were not written (best effort: an orphan
/// object is only storage, never visible).
pub async fn discard(ctx: &Ctx, docs: &[Document]) {
    if let Ok(blobs) = ctx.blobs() {
        for d in docs {
            if let Err(e) = blobs.delete(&d.blob_key).await {
                tracing::warn!(error = %e, "orphan document bytes left behind");
            }
        }
    }
}

/// Every document of an owner, oldest first.
pub async fn list(ctx: &Ctx, owner: Owner<'_>) -> Result<Vec<Document>, ApiError> {
    let mut q = Query::new(Index::Table, partition(ctx.client_id(), owner));
    q.limit = 500;
    let decode = |item: &crate::store::Item| {
        let d = item.get("d").and_then(Val::as_str).unwrap_or("");
        serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt document record", e))
    };
    crate::records::query_all(ctx.store(), q)
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// The numeric ID a document is known by: itself (six digits or more, IDs start at 100000),
/// or its short code (four or five characters until 36^5) decoded; `None` when malformed.
pub fn document_number(id: &str) -> Option<u64> {
    numeric_id(id)
}

fn numeric_id(id: &str) -> Option<u64> {
    let id = id.trim();
    if id.is_empty() || id.len() > 12 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    if id.len() >= 6 && id.bytes().all(|b| b.is_ascii_digit()) {
        id.parse().ok()
    } else {
        u64::from_str_radix(id, 36).ok()
    }
}

/// One document of an owner by its ID or short code: one read.
pub async fn find(ctx: &Ctx, owner: Owner<'_>, id: &str) -> Result<Option<Document>, ApiError> {
    let Some(n) = numeric_id(id) else {
        return Ok(None);
    };
    let key = Key::new(partition(ctx.client_id(), owner), sortable(&n.to_string()));
    let Some(item) = ctx.store().get(&key).await? else {
        return Ok(None);
    };
    let d = item.get("d").and_then(Val::as_str).unwrap_or("");
    let doc: Document = serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt document record", e))?;
    Ok(doc.is(id).then_some(doc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn upload(field: &str, name: &str, len: usize) -> Upload {
        Upload {
            field: field.into(),
            file_name: name.into(),
            content_type: String::new(),
            bytes: Bytes::from(vec![b'x'; len]),
        }
    }

    #[test]
    fn indexed_titles_and_names() {
        assert_eq!(
            indexed(
                Some("documentTitle0=W-2&documentTitle1=Bank statement"),
                "documentTitle"
            ),
            vec![(0, "W-2".to_owned()), (1, "Bank statement".to_owned())]
        );
        assert_eq!(
            indexed(Some("Passport"), "documentTitle"),
            vec![(0, "Passport".to_owned())]
        );
        assert!(indexed(Some(""), "documentTitle").is_empty());
        assert_eq!(
            indexed(Some("documentTitle0=Bank & Trust&documentTitle1=W-2"), "documentTitle"),
            vec![(0, "Bank & Trust".to_owned()), (1, "W-2".to_owned())]
        );
        assert_eq!(
            indexed(Some("Tax & income"), "documentTitle"),
            vec![(0, "Tax & income".to_owned())]
        );
        assert_eq!(
            indexed(Some("documentTitle+1=x"), "documentTitle"),
            vec![(0, "documentTitle+1=x".to_owned())]
        );
        assert!(indexed(None, "filename").is_empty());
        assert_eq!(
            indexed(Some(r#"filename0="deck.pdf"&filename1="a & b.pdf""#), "filename"),
            vec![(0, "deck.pdf".to_owned()), (1, "a & b.pdf".to_owned())]
        );
        assert_eq!(
            indexed(Some(r#""Passport""#), "documentTitle"),
            vec![(0, "Passport".to_owned())]
        );
        assert_eq!(
            indexed(Some(r#"filename0=""#), "filename"),
            vec![(0, r#"""#.to_owned())]
        );
    }

    #[test]
    fn file_rules() {
        let ok = upload("userfile0", "a.PDF", 1024);
        assert!(check_file("userfile0", "a.PDF", &ok, &INVESTOR_FILES).is_ok());
        assert!(check_file("userfile0", "a.txt", &ok, &INVESTOR_FILES).is_ok());
        assert!(check_file("userfile0", "a.txt", &ok, &ENTITY_FILES).is_err());
        assert!(check_file("userfile0", "a.exe", &ok, &INVESTOR_FILES).is_err());
        assert!(check_file("userfile0", "pdf", &ok, &INVESTOR_FILES).is_err());
        let one_kb = upload("userfile0", "a.pdf", 1000);
        assert!(check_file("userfile0", "a.pdf", &one_kb, &INVESTOR_FILES).is_ok());
        let small = upload("userfile0", "a.pdf", 999);
        assert_eq!(
            check_file("userfile0", "a.pdf", &small, &INVESTOR_FILES),
            Err(size_error("userfile0"))
        );
        assert!(check_file("userfile0", "a.pdf", &small, &OFFERING_FILES).is_ok());
        assert!(check_file("userfile0", "a.DOCX", &small, &OFFERING_FILES).is_ok());
        assert!(check_file("userfile0", "a.xls", &small, &OFFERING_FILES).is_ok());
        for name in ["a.png", "a.txt", "a.xlsx", "a.doc"] {
            assert_eq!(
                check_file("userfile0", name, &small, &OFFERING_FILES)
                    .unwrap_err()
                    .code(),
                "106"
            );
        }
        let empty = upload("userfile0", "a.pdf", 0);
        assert_eq!(
            check_file("userfile0", "a.pdf", &empty, &OFFERING_FILES)
                .unwrap_err()
                .code(),
            "106"
        );
        let limit = FileRules {
            max_bytes: 1024,
            ..OFFERING_FILES
        };
        let ok = upload("userfile0", "a.pdf", 1024);
        let big = upload("userfile0", "a.pdf", 1025);
        assert!(check_file("userfile0", "a.pdf", &ok, &limit).is_ok());
        assert_eq!(
            check_file("userfile0", "a.pdf", &big, &limit).unwrap_err().code(),
            "106"
        );
    }

    async fn params(fields: &[(&str, &str)], files: &[(&str, &str, usize)]) -> Params {
        const B: &str = "unit-boundary";
        let mut body = Vec::new();
        for (name, value) in fields {
            body.extend_from_slice(
                format!("--{B}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
            );
        }
        for (name, file, len) in files {
            body.extend_from_slice(
                format!("--{B}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\n\r\n")
                    .as_bytes(),
            );
            body.extend(std::iter::repeat_n(b'x', *len));
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{B}--\r\n").as_bytes());
        let mut p = Params::default();
        p.add_body(Some(&format!("multipart/form-data; boundary={B}")), Bytes::from(body))
            .await
            .unwrap();
        p
    }

    #[tokio::test]
    async fn indexed_uploads() {
        let (ctx, dir) = crate::ctx::test_ctx().await;
        let p = params(
            &[
                ("documentTitle", "documentTitle0=ID&documentTitle1=Bank & Trust"),
                ("file_name", "filename1=bank.pdf"),
            ],
            &[("userfile1", "b.png", 2000), ("userfile0", "id.jpg", 1024)],
        )
        .await;
        let files = indexed_files(&ctx, &p, &INVESTOR_FILES).await.unwrap();
        let got: Vec<_> = files
            .iter()
            .map(|f| (f.title.as_str(), f.file_name.as_str(), f.upload.bytes.len()))
            .collect();
        assert_eq!(got, vec![("ID", "id.jpg", 1024), ("Bank & Trust", "bank.pdf", 2000)]);

        let one = params(&[("documentTitle", "Passport")], &[("userfile0", "p.pdf", 1024)]).await;
        assert_eq!(
            indexed_files(&ctx, &one, &INVESTOR_FILES).await.unwrap()[0].title,
            "Passport"
        );

        let untitled = params(
            &[("documentTitle", "Passport")],
            &[("userfile0", "p.pdf", 1024), ("userfile1", "q.pdf", 1024)],
        )
        .await;
        assert_eq!(
            indexed_files(&ctx, &untitled, &INVESTOR_FILES).await.unwrap_err(),
            ApiError::missing("documentTitle1")
        );
        let blank = params(
            &[("documentTitle", "documentTitle0= ")],
            &[("userfile0", "p.pdf", 1024)],
        )
        .await;
        assert_eq!(
            indexed_files(&ctx, &blank, &INVESTOR_FILES).await.unwrap_err(),
            ApiError::missing("documentTitle0")
        );
        let none = params(&[("documentTitle", "x")], &[("userfile", "p.pdf", 1024)]).await;
        assert_eq!(
            indexed_files(&ctx, &none, &INVESTOR_FILES).await.unwrap_err(),
            ApiError::missing("userfile0")
        );
        let twice = params(
            &[("documentTitle", "x")],
            &[("userfile0", "p.pdf", 1024), ("userfile0", "q.pdf", 1024)],
        )
        .await;
        assert_eq!(
            indexed_files(&ctx, &twice, &INVESTOR_FILES).await.unwrap_err().code(),
            "106"
        );
        let small = params(&[("documentTitle", "x")], &[("userfile0", "p.pdf", 999)]).await;
        let err = indexed_files(&ctx, &small, &INVESTOR_FILES).await.unwrap_err();
        assert_eq!((err.code(), err.desc().starts_with(SIZE_MESSAGE)), ("106", true));
        let names: Vec<String> = (0..=MAX_FILES).map(|i| format!("userfile{i}")).collect();
        let many: Vec<(&str, &str, usize)> = names.iter().map(|n| (n.as_str(), "a.pdf", 1024)).collect();
        let too_many = params(&[("documentTitle", "documentTitle0=x")], &many).await;
        assert_eq!(
            indexed_files(&ctx, &too_many, &INVESTOR_FILES)
                .await
                .unwrap_err()
                .code(),
            "106"
        );
        std::fs::remove_dir_all(dir).ok();
    }

    /// Sends `bytes` to an upload URL of the local store, as a client's `PUT` would.
    async fn put(ctx: &Ctx, url: &str, bytes: Vec<u8>) {
        let rest = url.strip_prefix("http://local.test").unwrap();
        let (path, query) = rest.split_once('?').unwrap();
        let body = futures_util::stream::once(async move { Ok(Bytes::from(bytes)) });
        let received = ctx.blobs().unwrap().receive(path, Some(query), Box::pin(body)).await;
        assert_eq!(received, Some(crate::blobs::Received::Stored));
    }

    #[tokio::test]
    async fn uploads_stand_in_for_files() {
        let (ctx, dir) = crate::ctx::test_ctx().await;
        let deck = new_upload(&ctx, "deck.pdf").await.unwrap();
        assert_eq!((deck.method, deck.max_bytes), ("PUT", UPLOAD_MAX_BYTES));
        let form = |fields: &[(&str, &str)]| {
            let mut p = Params::default();
            for (k, v) in fields {
                p.set(k, *v);
            }
            p
        };
        let uses = form(&[("documentTitle", "Deck"), ("uploadId0", &deck.upload_id)]);
        // Not sent yet: the same answer as an unknown ID.
        let err = indexed_files(&ctx, &uses, &OFFERING_FILES).await.unwrap_err();
        assert_eq!((err.code(), err.desc().contains("uploadId0")), ("106", true));
        put(&ctx, &deck.upload_url, vec![b'x'; 2000]).await;
        let files = indexed_files(&ctx, &uses, &OFFERING_FILES).await.unwrap();
        let got: Vec<_> = files
            .iter()
            .map(|f| (f.title.as_str(), f.file_name.as_str(), f.upload.bytes.len()))
            .collect();
        assert_eq!(got, vec![("Deck", "deck.pdf", 2000)]);
        // The upload's name is its type: a PDF is no spreadsheet, and a renamed file is checked by its new name.
        let xls = FileRules {
            extensions: &["xls"],
            ..OFFERING_FILES
        };
        assert_eq!(indexed_files(&ctx, &uses, &xls).await.unwrap_err().code(), "106");
        let renamed = form(&[
            ("documentTitle", "Deck"),
            ("uploadId0", &deck.upload_id),
            ("file_name", "filename0=deck.xls"),
        ]);
        assert_eq!(
            indexed_files(&ctx, &renamed, &xls).await.unwrap()[0].file_name,
            "deck.xls"
        );
        // The rule's maximum applies to the stored object.
        let small = FileRules {
            max_bytes: 1999,
            ..OFFERING_FILES
        };
        let err = indexed_files(&ctx, &uses, &small).await.unwrap_err();
        assert!(err.desc().contains("larger than 1999 bytes"), "{}", err.desc());
        // A file sent and an upload at the same index; a single-file upload by its ID.
        let both = params(
            &[("documentTitle", "x"), ("uploadId0", &deck.upload_id)],
            &[("userfile0", "p.pdf", 1024)],
        )
        .await;
        assert_eq!(
            indexed_files(&ctx, &both, &OFFERING_FILES).await.unwrap_err().code(),
            "106"
        );
        let single = form(&[("documentTitle", "Deck"), ("uploadId", &deck.upload_id)]);
        assert_eq!(
            single_file(&ctx, &single, &INVESTOR_FILES)
                .await
                .unwrap()
                .upload
                .bytes
                .len(),
            2000
        );
        for bad in ["deck.exe", "deck", "", &format!("{}.pdf", "a".repeat(252))] {
            assert_eq!(new_upload(&ctx, bad).await.unwrap_err().code(), "106", "{bad}");
        }
        for bad in ["nope", "../x", &"a".repeat(65)] {
            let p = form(&[("documentTitle", "x"), ("uploadId0", bad)]);
            assert_eq!(
                indexed_files(&ctx, &p, &OFFERING_FILES).await.unwrap_err().code(),
                "106",
                "{bad}"
            );
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn short_codes() {
        assert_eq!(base36(100_000), "255S");
        assert_eq!(base36(0), "0");
        assert_eq!(reference_code().len(), 12);
        assert_eq!(numeric_id("255S"), Some(100_000));
        assert_eq!(numeric_id("255s"), Some(100_000));
        assert_eq!(numeric_id("100000"), Some(100_000));
        assert_eq!(numeric_id("../x"), None);
        assert_eq!(
            numeric_id(&base36(100_008)),
            Some(100_008),
            "a short code of digits only"
        );
    }
}
