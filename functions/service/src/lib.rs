//! The whole service: every routed crate's routes in one table, and the functions that
//! serve more than one group. Adding a group is one line in [`all_routes`] (and its
//! function in [`FUNCTIONS`]).

use shared::batches::Batch;
use shared::{Function, Routes};

/// Every route of every group and of the operator API. A name registered twice fails
/// `Routes::checked`, so no function starts with it.
pub fn all_routes() -> Routes {
    Routes::of(&[
        investors::routes,
        offerings::routes,
        trades::routes,
        payments::routes,
        custody::routes,
        escrow::routes,
        ats::routes,
        operator::routes,
    ])
}

/// The OpenAPI document of `routes` (the local API serves it): each method-style operation
/// with the parameters its handler reads, as `parameters.json` holds them (a test of the API
/// suite finds them from the handlers, and fails when the file differs).
pub fn openapi(routes: &Routes, version: &str) -> serde_json::Value {
    let parameters = serde_json::from_str(include_str!("../parameters.json")).expect("parameters.json is JSON");
    shared::http::openapi::document(routes, version, &parameters)
}

/// The incumbent's path prefix, `/tapiv3/index.php/v3/<operation>`, for every group: API
/// Gateway cannot route on a path parameter's value, and a prefixed route per operation
/// would double the API's routes, so one function links every group's routes for it (its
/// operator routes stay unreachable: it does not serve the operator API).
pub const LEGACY: Function = Function {
    name: "legacy",
    routes: all_routes,
    documents: shared::function::S3_DOCUMENTS,
    operator: false,
};

/// The operator API, behind API Gateway's IAM authorization. It links every group, since
/// its reviews and e-signature actions commit the effects the groups register.
pub const OPERATOR: Function = Function {
    name: "operator",
    routes: all_routes,
    documents: shared::function::S3_DOCUMENTS,
    operator: true,
};

/// Every batch, as the batches function and the local API's schedules run them (the
/// operator's run-now endpoints are registered by the groups that own them).
pub const BATCHES: [Batch; 5] = [
    payments::ACH_BATCH,
    payments::CARD_BATCH,
    custody::CUSTODY_BATCH,
    escrow::ESCROW_BATCH,
    ats::EXPIRY_BATCH,
];

/// Applies a message to its security's order book (the book worker's, and the local
/// sequencer's, work).
pub const BOOK_WORK: shared::queue::sequencer::BookWork<shared::Ports> = ats::BOOK_WORK;

pub use ats::open_books;

/// Every function of the client and operator APIs, as deployed (the webhook consumer,
/// which serves no route, aside).
pub const FUNCTIONS: [Function; 9] = [
    investors::FUNCTION,
    offerings::FUNCTION,
    trades::FUNCTION,
    payments::FUNCTION,
    custody::FUNCTION,
    escrow::FUNCTION,
    ats::FUNCTION,
    OPERATOR,
    LEGACY,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_openapi_document_names_every_route_and_no_other() {
        let routes = all_routes();
        let doc = openapi(&routes, "test");
        let paths = doc["paths"].as_object().expect("paths");
        let ops = routes.op_names();
        let resources = routes.resource_routes();
        for op in &ops {
            let p = &paths[&format!("/v3/{op}")];
            assert!(p["post"].is_object() && p["put"].is_object(), "{op}");
        }
        for (verb, pattern) in &resources {
            let verb = verb.as_str().to_ascii_lowercase();
            assert!(paths[pattern][verb.as_str()].is_object(), "{verb} {pattern}");
        }
        let distinct: std::collections::BTreeSet<&String> = resources.iter().map(|(_, p)| p).collect();
        let health = shared::http::openapi::HEALTH.map(|name| format!("/v3/{name}"));
        for path in &health {
            assert!(paths[path]["get"].is_object(), "{path}");
        }
        assert_eq!(paths.len(), ops.len() + distinct.len() + health.len(), "no other path");
        // Every other path the document names resolves in the table.
        for (path, item) in paths.iter().filter(|(path, _)| !health.contains(path)) {
            let concrete = path.replace(['{', '}'], "");
            for verb in item.as_object().unwrap().keys() {
                let method = http::Method::from_bytes(verb.to_ascii_uppercase().as_bytes()).unwrap();
                assert!(routes.find(&method, &concrete).is_some(), "{verb} {path}");
            }
        }
        let ids: Vec<&str> = paths
            .values()
            .flat_map(|p| p.as_object().unwrap().values())
            .map(|op| op["operationId"].as_str().unwrap())
            .collect();
        let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "operationIds are unique");
        // Each operation's body names the parameters its handler reads.
        let body = &paths["/v3/createParty"]["put"]["requestBody"]["content"];
        assert!(
            body.get("application/x-www-form-urlencoded").is_none(),
            "JSON only, for the generated clients"
        );
        let json = &body["application/json"]["schema"];
        assert_eq!(json["required"][0], "firstName");
        assert_eq!(json["properties"]["socialSecurityNumber"]["type"], "string");
        let offering = &paths["/v3/getOffering"]["post"]["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(
            offering["properties"]["offeringId"]["type"],
            serde_json::json!(["integer", "string"]),
            "an ID may be a number"
        );
        // Writes take the opt-in Idempotency-Key header; resource reads do not.
        let header = |op: &serde_json::Value| {
            op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"))
        };
        assert!(header(&paths["/v3/createParty"]["post"]) && header(&paths["/v3/createParty"]["put"]));
        assert!(header(&paths["/v3/accounts/{accountId}"]["patch"]));
        assert!(!header(&paths["/v3/accounts/{accountId}"]["get"]));
        let upload = &paths["/v3/uploadPartyDocument"]["post"]["requestBody"]["content"];
        let multipart = &upload["multipart/form-data"]["schema"];
        assert_eq!(multipart["properties"]["userfile0"]["format"], "binary");
        assert!(upload.get("application/json").is_none(), "an upload is multipart");
    }

    #[test]
    fn every_function_registers_each_route_once() {
        for f in FUNCTIONS {
            if let Err(conflict) = (f.routes)().checked() {
                panic!("{}: {conflict}", f.name);
            }
        }
    }

    #[test]
    fn only_operations_that_take_files_get_the_upload_limit() {
        let routes = all_routes();
        for upload in [
            "uploadAccountDocument",
            "uploadPartyDocument",
            "uploadEntityDocument",
            "requestUploadPartyDocument",
            "uploadVerificationDocument",
            "addDocumentsforOffering",
            "uploadTradeDocument",
        ] {
            assert!(routes.takes_files(&format!("/v3/{upload}")), "{upload}");
        }
        assert!(!routes.takes_files("/v3/createParty"));
        assert!(!routes.takes_files("/v3/getPartyDocument"));
    }

    #[test]
    fn a_group_registered_twice_fails_the_service() {
        let twice = all_routes().merge(trades::routes()).checked();
        let conflict = twice.err().expect("a conflict");
        assert!(conflict.0.contains(&"operation createTrade".to_owned()), "{conflict}");
        assert!(
            conflict.0.contains(&"e-signature effect subscription".to_owned()),
            "{conflict}"
        );
    }
}
