//! Account notes (addAccountNote, getAccountNotes): `authorname`, `note`, `createdDate`.

use serde::{Deserialize, Serialize};

use crate::ids::sortable;

/// A note on an account. Stored under `<accountId>#<note ID>` in the client's note
/// partition, so that one query reads an account's notes in the order they were added.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AccountNote {
    /// The storage key: `<accountId>#<sortable note ID>`.
    pub key: String,
    /// The note's numeric ID.
    #[serde(rename = "id")]
    pub note_id: String,
    #[serde(rename = "accountId")]
    pub account_id: String,
    pub authorname: String,
    pub note: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
}

crate::records::record!(AccountNote, "NOTE", key);

impl AccountNote {
    pub fn new(account_id: &str, id: String, authorname: String, note: String, created: String) -> Self {
        AccountNote {
            key: format!("{account_id}#{}", sortable(&id)),
            note_id: id,
            account_id: account_id.to_owned(),
            authorname,
            note,
            deleted: false,
            created,
        }
    }

    /// The note record of part 2 (also addAccountNote's webhook).
    pub fn view(&self) -> NoteView<'_> {
        NoteView {
            authorname: &self.authorname,
            note: &self.note,
            created: &self.created,
        }
    }
}

/// The note record of part 2: `authorname`, `note`, `createdDate`.
#[derive(Serialize)]
pub struct NoteView<'a> {
    authorname: &'a str,
    note: &'a str,
    #[serde(rename = "createdDate")]
    created: &'a str,
}

/// The getAccountNotes webhook: the account and how many notes it has.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotesCount<'a> {
    pub account_id: &'a str,
    pub notes_count: usize,
}
