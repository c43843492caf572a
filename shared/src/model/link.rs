//! Links: a party or account tied to an account with a role.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
#[serde(rename_all = "camelCase", default)]
pub struct Link {
    pub id: String,
    pub first_entry_type: String,
    pub first_entry: String,
    pub related_entry_type: String,
    pub related_entry: String,
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

crate::records::record!(Link, "LINK", id);

impl Link {
    /// The link record of `getLink` and `GET /v3/links`.
    pub fn view(&self) -> Map<String, Value> {
        super::fields_without(self, &["deleted"])
    }
}

/// The statusCode `135` answer: the account has no active primary party.
pub fn no_primary_party() -> crate::ApiError {
    crate::ApiError::coded("135", "Account has no active primary party")
}

/// The createLink and deleteLink webhooks: the link's fields in part 1's order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkEvent<'a> {
    id: &'a str,
    first_entry_type: &'a str,
    first_entry: &'a str,
    related_entry: &'a str,
    related_entry_type: &'a str,
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
#[serde(rename_all = "camelCase")]
pub struct AccountLinks<'a> {
    pub account_id: &'a str,
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
