//! Account notes: addAccountNote and getAccountNotes (deprecated).

use shared::model::note::{AccountNote, NotesCount};
use shared::records;
use shared::records::note::account_notes;
use shared::store::{Cond, Write};
use shared::webhooks::view_event;
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};
use shared::{op, Routes};

use shared::model::ids::no_account;

use crate::accounts::{existing_account, live_account};

/// `POST /v3/addAccountNote`: `accountId`, `authorName` and `notes`, all required; answers the
/// insert-array `notesDetails` = `[true, [{authorname, note, createdDate}]]`. The webhook
/// `addAccountNote` carries that record's fields.
pub async fn add(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["authorName", "notes"])?;
    let account = p.req(&["accountId"])?;
    let author = p.req(&["authorName"])?;
    let text = p.req(&["notes"])?;
    let stored = live_account(&ctx, &account).await?;
    let note = AccountNote::new(
        &stored.rec.id,
        ctx.next_id(shared::ids::NOTE).await?,
        author,
        text,
        ctx.now(),
    );
    let event = view_event("addAccountNote", &note.view());
    let writes = records::insert(ctx.client_id(), &note)?;
    // The account must still be live when the note is written (gsi1pk marks a live record).
    let live = Write::Check {
        key: records::key::<shared::model::Account>(ctx.client_id(), &stored.rec.id),
        cond: Cond::AttrExists("gsi1pk".into()),
    };
    ctx.transact(async move |_, _| {
        Ok(Plan::new(writes.clone(), ())
            .check(live.clone(), no_account())
            .event(event.clone()))
    })
    .await?;
    Ok(Reply::ok().with_value("notesDetails", insert_array(note.view())))
}

/// `POST /v3/getAccountNotes` (deprecated): `accountId` required; `notesDetails`, an array of
/// the account's note records, oldest first (empty when it has none). The webhook
/// `getAccountNotes` carries `accountId` and `notesCount`.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let a = existing_account(&ctx, &account).await?.rec;
    let notes = account_notes(ctx.store(), ctx.client_id(), &a.id).await?;
    let event = view_event(
        "getAccountNotes",
        &NotesCount {
            account_id: &a.id,
            notes_count: notes.len(),
        },
    );
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    let records: Vec<_> = notes.iter().map(AccountNote::view).collect();
    Ok(Reply::ok().with("notesDetails", records))
}

/// The notes routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("addAccountNote", op!(add))
        .op("getAccountNotes", op!(get))
}
