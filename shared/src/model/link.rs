//! Links: a party or account tied to an account with a role.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::records::Record;

/// The roles part 2 allows; anything else is rejected.
pub const LINK_TYPES: &[&str] = &[
    "owner",
    "secondary",
    "manager",
    "member",
    "officer",
    "director",
    "spouse",
    "beneficiary",
    "trustee",
    "custodian",
    "parentco",
    "subsidiary",
    "other",
    "acgroup",
    "advisor",
    "attorney",
    "proxy",
];

/// What a link's related entry may be.
pub const RELATED_TYPES: &[&str] = &["Account", "IndivACParty", "EntityACParty"];

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Link {
    pub id: String,
    #[serde(rename = "firstEntryType")]
    pub first_entry_type: String,
    #[serde(rename = "firstEntry")]
    pub first_entry: String,
    #[serde(rename = "relatedEntryType")]
    pub related_entry_type: String,
    #[serde(rename = "relatedEntry")]
    pub related_entry: String,
    #[serde(rename = "linkType")]
    pub link_type: String,
    pub notes: String,
    #[serde(rename = "primary_value")]
    pub primary: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

impl Record for Link {
    const KIND: &'static str = "LINK";
    fn id(&self) -> &str {
        &self.id
    }
    fn created(&self) -> &str {
        &self.created
    }
    fn deleted(&self) -> bool {
        self.deleted
    }
}

impl Link {
    /// The link record of `getLink` and `GET /v3/links`.
    pub fn view(&self) -> Map<String, Value> {
        let mut m = match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        m.shift_remove("deleted");
        m
    }
}

/// The marker of a link between an account and a related entry (one live link per pair).
pub fn pair_key(client: &str, account: &str, related: &str) -> crate::store::Key {
    crate::store::Key::new(format!("{client}#LINKPAIR"), format!("{account}#{related}"))
}

/// The marker of an account's primary party (at most one).
pub fn primary_key(client: &str, account: &str) -> crate::store::Key {
    crate::store::Key::new(format!("{client}#PRIMARY"), account)
}

/// The statusCode `135` answer: the account has no active primary party.
pub fn no_primary_party() -> crate::ApiError {
    crate::ApiError::coded("135", "Account has no active primary party")
}

/// The account's primary party, when it has one that is live (not deleted, not archived):
/// read from the primary marker createLink writes (`primary_key`), the link it names and the
/// party. `None` means `135` to operations that need one ([`no_primary_party`]).
pub async fn primary_party(
    store: &dyn crate::store::Store,
    client: &str,
    account: &str,
) -> Result<Option<String>, crate::ApiError> {
    use crate::records::load;
    use crate::store::Val;
    let Some(marker) = store.get(&primary_key(client, account)).await? else {
        return Ok(None);
    };
    let party = match marker.get("relatedEntry").and_then(Val::as_str) {
        Some(p) => p.to_owned(),
        None => {
            let link_id = marker.get("linkId").and_then(Val::as_str).unwrap_or("");
            match load::<Link>(store, client, link_id).await? {
                Some(l) if !l.rec.deleted && l.rec.primary == "1" && l.rec.first_entry == account => {
                    l.rec.related_entry
                }
                _ => return Ok(None),
            }
        }
    };
    match load::<super::Party>(store, client, &party).await? {
        Some(p) if !p.rec.deleted && !p.rec.archived => Ok(Some(party)),
        _ => Ok(None),
    }
}

/// The IDs of an account's live links (where it is the `firstEntry`), in numeric order: read
/// from the pair markers, one query.
pub async fn account_link_ids(
    store: &dyn crate::store::Store,
    client: &str,
    account: &str,
) -> Result<Vec<String>, crate::ApiError> {
    use crate::store::{Index, Query, SkRange, Val};
    let mut q = Query::new(Index::Table, pair_key(client, account, "").pk);
    q.sk = SkRange::BeginsWith(format!("{account}#"));
    let mut ids = Vec::new();
    loop {
        let page = store.query(&q).await?;
        ids.extend(
            page.items
                .iter()
                .filter_map(|i| i.get("linkId").and_then(Val::as_str).map(str::to_owned)),
        );
        match page.next {
            Some(next) => q.start = Some(next),
            None => break,
        }
    }
    ids.sort_by_key(|id| (id.len(), id.clone()));
    Ok(ids)
}

/// The createLink and deleteLink webhooks: the link's fields in part 1's order.
#[derive(Serialize)]
pub struct LinkEvent<'a> {
    id: &'a str,
    #[serde(rename = "firstEntryType")]
    first_entry_type: &'a str,
    #[serde(rename = "firstEntry")]
    first_entry: &'a str,
    #[serde(rename = "relatedEntry")]
    related_entry: &'a str,
    #[serde(rename = "relatedEntryType")]
    related_entry_type: &'a str,
    #[serde(rename = "linkType")]
    link_type: &'a str,
    notes: &'a str,
}

/// A link named by its ID alone (createLink's record).
#[derive(Serialize)]
pub struct LinkRef<'a> {
    pub id: &'a str,
}

/// The getAllLinks and getAccountLinkId webhook fields: the account's link IDs, comma separated.
#[derive(Serialize)]
pub struct AccountLinks<'a> {
    #[serde(rename = "accountId")]
    pub account_id: &'a str,
    #[serde(rename = "linkIds")]
    pub link_ids: &'a str,
}

impl Link {
    pub fn event_view(&self) -> LinkEvent<'_> {
        LinkEvent {
            id: &self.id,
            first_entry_type: &self.first_entry_type,
            first_entry: &self.first_entry,
            related_entry: &self.related_entry,
            related_entry_type: &self.related_entry_type,
            link_type: &self.link_type,
            notes: &self.notes,
        }
    }
}
