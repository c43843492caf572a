//! The investors group: accounts, parties, entities and links.

mod accounts;
mod entities;
mod links;
mod parties;

use http::Method;
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::{op, Routes};

const ACCOUNT_READ: ScopeReq = ScopeReq {
    family: "account.read",
    min: PiiLevel::Low,
    name: "account.read",
};
const ACCOUNT_WRITE: ScopeReq = ScopeReq {
    family: "account.write",
    min: PiiLevel::High,
    name: "account.write",
};
const PARTY_READ: ScopeReq = ScopeReq {
    family: "party.read",
    min: PiiLevel::Low,
    name: "party.read",
};
const ENTITY_READ: ScopeReq = ScopeReq {
    family: "party.read",
    min: PiiLevel::High,
    name: "party.read.pii_high",
};
const LINK_READ: ScopeReq = ScopeReq {
    family: "link.read",
    min: PiiLevel::High,
    name: "link.read",
};

/// Every route of the investors group.
pub fn routes() -> Routes {
    Routes::new()
        .op("createAccount", op!(accounts::create))
        .op("createParty", op!(parties::create))
        .op("deleteParty", op!(parties::delete))
        .op("createEntity", op!(entities::create))
        .op("createLink", op!(links::create))
        .op("getLink", op!(links::get))
        .op("deleteLink", op!(links::delete))
        .resource(Method::GET, "/v3/accounts", ACCOUNT_READ, op!(accounts::list))
        .resource(
            Method::GET,
            "/v3/accounts/{accountId}",
            ACCOUNT_READ,
            op!(accounts::read),
        )
        .resource(
            Method::PATCH,
            "/v3/accounts/{accountId}",
            ACCOUNT_WRITE,
            op!(accounts::patch),
        )
        .resource(Method::GET, "/v3/parties", PARTY_READ, op!(parties::list))
        .resource(Method::GET, "/v3/parties/{partyId}", PARTY_READ, op!(parties::read))
        .resource(Method::GET, "/v3/entities", ENTITY_READ, op!(entities::list))
        .resource(Method::GET, "/v3/links", LINK_READ, op!(links::list))
}
