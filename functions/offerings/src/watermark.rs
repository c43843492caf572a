//! Watermarks of offering documents: the `stampingText` of an upload stamped on every page
//! of a PDF as an incremental update (ISO 32000-1, 7.5.6).
//!
//! The original file is kept byte for byte; after it come the changed objects, a new
//! cross-reference section (a table or a stream, as the file uses) and a trailer whose
//! `/Prev` points at the original one. For each page:
//!
//! - the page object is rewritten with `/Contents` = `[open, <its contents>, stamp]`, where
//!   `open` is a shared stream holding `q` (so the page's own drawing cannot move the stamp)
//!   and `stamp` draws the text;
//! - its resources gain the font `/IPSStampF1` (Helvetica, WinAnsiEncoding) and the graphics
//!   state `/IPSStampGS1` (30 % opacity); resources the page inherits are copied onto it.
//!
//! The stamp is the text in grey, across the page's diagonal (its `MediaBox`, inherited or
//! letter size), sized to the page. The same file and text always give the same bytes.
//! Characters outside Latin-1 are written as `?`. Encrypted PDFs, files that are not PDFs
//! and PDFs without pages are refused.

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Dictionary, Document, IncrementalDocument, Object, ObjectId, Stream, StringFormat};

/// The font resource name of the stamp.
pub const FONT: &str = "IPSStampF1";
/// The graphics-state resource name of the stamp.
pub const GSTATE: &str = "IPSStampGS1";
/// The longest `stampingText`, in characters.
pub const MAX_TEXT: usize = 200;

/// Why a file could not be stamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StampError {
    /// Not a PDF that can be read.
    Unreadable(String),
    Encrypted,
    NoPages,
}

impl StampError {
    pub fn message(&self) -> String {
        match self {
            StampError::Unreadable(why) => format!("not a readable PDF ({why})"),
            StampError::Encrypted => "an encrypted PDF cannot be watermarked".into(),
            StampError::NoPages => "a PDF without pages cannot be watermarked".into(),
        }
    }
}

fn unreadable(e: impl std::fmt::Display) -> StampError {
    StampError::Unreadable(e.to_string())
}

/// The text as WinAnsi bytes: Latin-1 characters as they are, other whitespace as a space,
/// anything else `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c as u32 {
            0x20..=0x7E | 0xA0..=0xFF => c as u32 as u8,
            _ if c.is_whitespace() => b' ',
            _ => b'?',
        })
        .collect()
}

/// The page's `MediaBox` (its own or inherited, references followed), normalized to
/// `[llx, lly, urx, ury]`; US letter when none can be read.
fn media_box(doc: &Document, page: ObjectId) -> [f32; 4] {
    let number = |o: &Object| doc.dereference(o).ok().and_then(|(_, o)| o.as_float().ok());
    let mut node = doc.get_dictionary(page).ok();
    for _ in 0..32 {
        let Some(d) = node else { break };
        if let Ok(obj) = d.get(b"MediaBox") {
            let values: Vec<f32> = doc
                .dereference(obj)
                .ok()
                .and_then(|(_, o)| o.as_array().ok())
                .map(|a| a.iter().filter_map(number).collect())
                .unwrap_or_default();
            if let [a, b, c, e] = values[..] {
                if (c - a).abs() > 1.0 && (e - b).abs() > 1.0 {
                    return [a.min(c), b.min(e), a.max(c), b.max(e)];
                }
            }
        }
        node = d
            .get(b"Parent")
            .and_then(Object::as_reference)
            .and_then(|id| doc.get_dictionary(id))
            .ok();
    }
    [0.0, 0.0, 612.0, 792.0]
}

fn round(x: f32) -> Object {
    Object::Real((x * 100.0).round() / 100.0)
}

/// The stamp's content stream: closes the page's `q`, then draws the text along the
/// diagonal of `b`, centred.
fn stamp_content(text: &[u8], b: [f32; 4]) -> Result<Vec<u8>, StampError> {
    let (w, h) = (b[2] - b[0], b[3] - b[1]);
    let diag = (w * w + h * h).sqrt();
    let (cos, sin) = (w / diag, h / diag);
    let n = text.len().max(1) as f32;
    // Helvetica's capitals advance about 0.65 of the font size: the text spans about 70 %
    // of the diagonal.
    let size = (0.7 * diag / (0.65 * n)).clamp(8.0, 96.0);
    let width = 0.65 * size * n;
    let (cx, cy) = (b[0] + w / 2.0, b[1] + h / 2.0);
    let x = cx - width / 2.0 * cos + 0.35 * size * sin;
    let y = cy - width / 2.0 * sin - 0.35 * size * cos;
    let content = Content {
        operations: vec![
            Operation::new("Q", vec![]),
            Operation::new("q", vec![]),
            Operation::new("gs", vec![Object::Name(GSTATE.into())]),
            Operation::new("g", vec![Object::Real(0.5)]),
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec![Object::Name(FONT.into()), round(size)]),
            Operation::new(
                "Tm",
                vec![round(cos), round(sin), round(-sin), round(cos), round(x), round(y)],
            ),
            Operation::new("Tj", vec![Object::String(text.to_vec(), StringFormat::Literal)]),
            Operation::new("ET", vec![]),
            Operation::new("Q", vec![]),
        ],
    };
    content.encode().map_err(unreadable)
}

/// Adds `name` → `id` to the page's resource category (`Font`, ...), the page's resources
/// and the category's dictionary copied into the update first when they live elsewhere.
fn add_resource(
    doc: &mut IncrementalDocument,
    page: ObjectId,
    category: &str,
    name: &str,
    id: ObjectId,
) -> lopdf::Result<()> {
    let resources = doc.get_or_create_resources(page)?.as_dict_mut()?;
    if !resources.has(category.as_bytes()) {
        resources.set(category, Dictionary::new());
    }
    let shared = match resources.get(category.as_bytes())? {
        Object::Reference(r) => Some(*r),
        _ => None,
    };
    let entries = match shared {
        Some(r) => {
            doc.opt_clone_object_to_new_document(r)?;
            doc.new_document.get_object_mut(r)?
        }
        None => doc
            .get_or_create_resources(page)?
            .as_dict_mut()?
            .get_mut(category.as_bytes())?,
    };
    entries.as_dict_mut()?.set(name, Object::Reference(id));
    Ok(())
}

/// The page's content streams as `/Contents` lists them (a stream, an array, or a reference
/// to an array).
fn contents_of(doc: &Document, page: ObjectId) -> Result<Vec<Object>, StampError> {
    let dict = doc.get_dictionary(page).map_err(unreadable)?;
    Ok(match dict.get(b"Contents") {
        Ok(Object::Reference(id)) => match doc.get_object(*id) {
            Ok(Object::Array(a)) => a.clone(),
            _ => vec![Object::Reference(*id)],
        },
        Ok(Object::Array(a)) => a.clone(),
        _ => Vec::new(),
    })
}

/// `pdf` with `text` stamped on every page, as an incremental update (see the module
/// documentation). Deterministic.
pub fn stamp(pdf: &[u8], text: &str) -> Result<Vec<u8>, StampError> {
    if !pdf.starts_with(b"%PDF-") {
        return Err(StampError::Unreadable("no %PDF- header".into()));
    }
    let mut doc: IncrementalDocument = pdf.try_into().map_err(unreadable)?;
    let prev = doc.get_prev_documents();
    if prev.trailer.get(b"Encrypt").is_ok() || prev.is_encrypted() {
        return Err(StampError::Encrypted);
    }
    let mut pages = Vec::new();
    for id in prev.get_pages().into_values() {
        pages.push((id, media_box(prev, id), contents_of(prev, id)?));
    }
    if pages.is_empty() {
        return Err(StampError::NoPages);
    }
    let new = &mut doc.new_document;
    let font = new.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let state = new.add_object(dictionary! {
        "Type" => "ExtGState",
        "ca" => Object::Real(0.3),
        "CA" => Object::Real(0.3),
    });
    let open = new.add_object(Stream::new(Dictionary::new(), b"q\n".to_vec()));
    let encoded = win_ansi(text);
    for (page, mbox, existing) in pages {
        let stamp = stamp_content(&encoded, mbox)?;
        let stamp_id = doc.new_document.add_object(Stream::new(Dictionary::new(), stamp));
        add_resource(&mut doc, page, "Font", FONT, font).map_err(unreadable)?;
        doc.add_graphics_state(page, GSTATE, state).map_err(unreadable)?;
        let mut contents = Vec::with_capacity(existing.len() + 2);
        contents.push(Object::Reference(open));
        contents.extend(existing);
        contents.push(Object::Reference(stamp_id));
        doc.opt_clone_object_to_new_document(page).map_err(unreadable)?;
        doc.new_document
            .get_object_mut(page)
            .and_then(Object::as_dict_mut)
            .map_err(unreadable)?
            .set("Contents", Object::Array(contents));
    }
    let mut out = Vec::with_capacity(pdf.len() + 2048);
    doc.save_to(&mut out).map_err(unreadable)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::xref::XrefType;
    use lopdf::SaveOptions;

    /// A PDF of `pages` pages saying "Page n", resources inherited from the page tree;
    /// `compressed` writes object streams and a cross-reference stream.
    fn sample(pages: usize, compressed: bool) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier"});
        let resources = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font}});
        let mut kids = Vec::new();
        for n in 1..=pages {
            let content = Content {
                operations: vec![
                    Operation::new("BT", vec![]),
                    Operation::new("Tf", vec!["F1".into(), 24.into()]),
                    Operation::new("Td", vec![72.into(), 700.into()]),
                    Operation::new("Tj", vec![Object::string_literal(format!("Page {n}"))]),
                    Operation::new("ET", vec![]),
                ],
            };
            let c = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
            let page = doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => c});
            kids.push(Object::Reference(page));
        }
        let count = kids.len() as i64;
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        if compressed {
            let opts = SaveOptions::builder()
                .use_object_streams(true)
                .use_xref_streams(true)
                .build();
            doc.save_with_options(&mut out, opts).unwrap();
        } else {
            doc.reference_table.cross_reference_type = XrefType::CrossReferenceTable;
            doc.save_to(&mut out).unwrap();
        }
        out
    }

    fn page_text(pdf: &[u8], page: u32) -> String {
        Document::load_mem(pdf).unwrap().extract_text(&[page]).unwrap()
    }

    #[test]
    fn every_page_is_stamped_and_the_original_kept_byte_for_byte() {
        for compressed in [false, true] {
            let original = sample(3, compressed);
            let stamped = stamp(&original, "CONFIDENTIAL (draft)").unwrap();
            assert!(stamped.starts_with(&original), "an incremental update");
            assert!(stamped.len() > original.len());
            let doc = Document::load_mem(&stamped).unwrap();
            assert_eq!(doc.get_pages().len(), 3);
            for n in 1..=3 {
                let text = page_text(&stamped, n);
                assert!(text.contains(&format!("Page {n}")), "{text:?}");
                assert!(text.contains("CONFIDENTIAL (draft)"), "{text:?}");
            }
            assert!(!page_text(&original, 1).contains("CONFIDENTIAL"));
            assert_eq!(
                stamp(&original, "CONFIDENTIAL (draft)").unwrap(),
                stamped,
                "deterministic"
            );
            // A stamped file can be stamped again.
            let twice = stamp(&stamped, "SECOND").unwrap();
            assert!(twice.starts_with(&stamped));
            assert!(page_text(&twice, 2).contains("SECOND"));
        }
    }

    #[test]
    fn what_cannot_be_stamped() {
        assert!(matches!(stamp(b"hello", "x"), Err(StampError::Unreadable(_))));
        assert!(matches!(
            stamp(b"%PDF-1.4\nnot really", "x"),
            Err(StampError::Unreadable(_))
        ));
        let mut truncated = sample(1, false);
        truncated.truncate(truncated.len() / 3);
        assert!(stamp(&truncated, "x").is_err());
    }

    #[test]
    fn text_outside_latin_1_becomes_question_marks() {
        assert_eq!(win_ansi("Ünïcode ✓\tok"), b"\xDCn\xEFcode ? ok".to_vec());
        let stamped = stamp(&sample(1, false), "a(b)c\\d").unwrap();
        assert!(page_text(&stamped, 1).contains("a(b)c\\d"));
    }
}
