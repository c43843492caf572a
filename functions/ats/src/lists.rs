//! The ATS order and trade lists (part 1, "List resources"; OBSERVED: `GET /v3/ppex/orders`
//! → `ppex_orders`; the trade list designed beside it, `docs/ats.md`): scope `ats.read`,
//! newest first by `executionTime`, and part 1's keyset paging on it read from the index.

use http::Method;
use shared::auth::PiiLevel;
use shared::http::router::{Handler, ScopeReq};
use shared::list::ListSpec;
use shared::model::ats::{AtsOrder, MatchedTrade};
use shared::{list_op, Routes};

const ORDERS: ListSpec = ListSpec::newest_first("orderId")
    .indexed_by("executionTime")
    .ids(&["id", "securityId", "issuerId", "memberId", "accountId"])
    .numbers(&["shares", "remainingShares", "sharePrice", "amount", "minimumQuantity"])
    .dates(&["executionTime", "createdDate", "updatedDate", "cancelDate"])
    .texts(&[
        "securityName",
        "action",
        "type",
        "contingencies",
        "expirationType",
        "expirationDate",
        "solicited",
        "status",
        "orderStatus",
        "token",
        "priceNotDisplayed",
        "allOrNone",
        "deleted",
    ]);

const TRADES: ListSpec = ListSpec::newest_first("matchId")
    .indexed_by("executionTime")
    .ids(&[
        "securityId",
        "issuerId",
        "askOrderId",
        "bidOrderId",
        "buyerMemberId",
        "sellerMemberId",
    ])
    .numbers(&["numberOfShares", "sharePrice", "amount"])
    .dates(&["executionTime", "createdDate"])
    .texts(&["securityName", "deleted"]);

/// `GET /v3/ppex/orders`: `ppex_orders` and `pagination`.
const ORDERS_OP: Handler = list_op!(AtsOrder, ORDERS, "ppex_orders", |o, _ctx| o.view());

/// `GET /v3/ppex/trades`: `ppex_trades` and `pagination`.
const TRADES_OP: Handler = list_op!(MatchedTrade, TRADES, "ppex_trades", |m, _ctx| m.view());

pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("ats.read", PiiLevel::Low, "ats.read");
    Routes::new()
        .resource(Method::GET, "/v3/ppex/orders", READ, ORDERS_OP)
        .resource(Method::GET, "/v3/ppex/trades", READ, TRADES_OP)
}
