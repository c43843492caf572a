//! The OpenAPI 3.1 document of a route table (issue 16; the local API serves it at
//! `/openapi.json`): every method-style operation as `/v3/{name}` (POST and PUT, with a JSON
//! body, multipart for uploads; a form body is accepted too but not described, since a second
//! content type breaks the clients generators make) and the parameters its handler reads,
//! every resource route with its path parameters (and part 1's list parameters), ping and
//! status, the envelope and its HTTP statuses. Generated from the table itself, so it can neither miss a route nor name one
//! that does not exist; the parameters come from a table a test finds from the handlers
//! (`functions/service/parameters.json`). Their rules live in the spec and in `docs/`.

use serde_json::{json, Map, Value};

use crate::http::router::Routes;

fn envelope_ref() -> Value {
    json!({"$ref": "#/components/schemas/Envelope"})
}

fn answer(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": envelope_ref()}}})
}

/// The schema of parameter `name` read as `ty` (`string`, `integer` or `any`, as the
/// parameters table gives it): an integer may come as its digits too, and an ID read as text
/// may come as a JSON number (CONTRACT, "Identifiers").
fn parameter_schema(name: &str, ty: &str) -> Value {
    match ty {
        "integer" => json!({"type": ["integer", "string"]}),
        "string" if crate::http::params::INTEGER_PARAMS.contains(&name) => json!({"type": ["integer", "string"]}),
        "string" => json!({"type": "string"}),
        _ => json!({}),
    }
}

/// The body of a method-style operation: the parameters its entry in the parameters table
/// names (others are ignored, CONTRACT "Unknown parameters"), as JSON or, for an operation
/// that takes files, multipart.
fn body(entry: &Value, takes_files: bool) -> Value {
    let mut properties = Map::new();
    if let Some(read) = entry["parameters"].as_object() {
        for (name, ty) in read {
            properties.insert(name.clone(), parameter_schema(name, ty.as_str().unwrap_or("")));
        }
    }
    for file in entry["files"].as_array().into_iter().flatten() {
        if let Some(name) = file.as_str() {
            properties.insert(name.to_owned(), json!({"type": "string", "format": "binary"}));
        }
    }
    let required = entry["required"].as_array().cloned().unwrap_or_default();
    let has_required = !required.is_empty();
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": true,
    });
    let content = if takes_files {
        json!({"multipart/form-data": {"schema": schema}})
    } else {
        json!({"application/json": {"schema": schema}})
    };
    json!({"required": has_required, "content": content})
}

/// The opt-in `Idempotency-Key` header a write takes (README, "Idempotency keys").
fn idempotency_key() -> Value {
    json!({
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Answer once: a retry with the same key and request replays the first \
                        answer for 24 hours; the key with another request is 422 1422",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    })
}

fn method_operation(name: &str, verb: &str, body: &Value) -> Value {
    let id = if verb == "post" {
        name.to_owned()
    } else {
        format!("{name}_{verb}")
    };
    json!({
        "operationId": id,
        "tags": ["method-style"],
        "parameters": [idempotency_key()],
        "requestBody": body,
        "responses": {
            "200": answer("statusCode 101, or a refusal the spec answers with HTTP 200"),
            "400": answer("1400 where the spec says so (a self-link or duplicate link)"),
            "404": answer("a refusal (method-style failures are HTTP 404 unless the spec says otherwise)"),
            "408": answer("1408: the body did not arrive in time; never started"),
            "409": answer("1409: a request with the same Idempotency-Key is still running"),
            "413": answer("the body is over the limit"),
            "422": answer("1422 where the spec says so, or an Idempotency-Key used with another request"),
            "500": answer("1500, with the request ID"),
            "502": answer("1502: a provider is unreachable"),
        },
    })
}

fn resource_operation(verb: &str, pattern: &str) -> Value {
    let mut params: Vec<Value> = pattern
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect();
    let is_list = verb == "get" && !pattern.contains('{');
    if is_list {
        for (name, kind) in [
            ("limit", "integer"),
            ("offset", "integer"),
            ("deleted", "boolean"),
            ("filter", "string"),
            ("sort", "string"),
        ] {
            params.push(json!({"name": name, "in": "query", "required": false, "schema": {"type": kind}}));
        }
    }
    let id = format!(
        "{verb}_{}",
        pattern.trim_matches('/').replace(['{', '}'], "").replace('/', "_")
    );
    let mut op = json!({
        "operationId": id,
        "tags": ["resource-style"],
        "parameters": params,
        "responses": {
            "200": answer("statusCode 101"),
            "400": answer("1400: malformed"),
            "401": answer("103: credentials"),
            "403": answer("1403: scope; 111: the caller's IP is not allowed"),
            "404": answer("1404: not found, or not the caller's"),
            "408": answer("1408: the request did not arrive in time; never started"),
            "422": answer("1422 or 239: invalid"),
            "500": answer("1500, with the request ID"),
            "502": answer("1502: a provider is unreachable"),
        },
    });
    if verb != "get" {
        op["requestBody"] = json!({
            "required": true,
            "content": {"application/json": {"schema": {"type": "object", "additionalProperties": true}}},
        });
        op["responses"]["304"] = json!({"description": "nothing to change"});
        op["responses"]["409"] = answer("1409: a request with the same Idempotency-Key is still running");
        op["responses"]["413"] = answer("1400: the body is over the limit");
        if let Some(params) = op["parameters"].as_array_mut() {
            params.push(idempotency_key());
        }
    }
    op
}

/// The health checks the kernel answers itself, outside the route table.
pub const HEALTH: [&str; 2] = ["ping", "status"];

/// `GET /v3/ping` and `GET /v3/status`: valid credentials and an allowed caller IP only.
fn health_operation(name: &str) -> Value {
    json!({"get": {
        "operationId": name,
        "tags": ["platform"],
        "responses": {
            "200": answer("statusCode 101"),
            "401": answer("103: credentials"),
            "403": answer("111: the caller's IP is not allowed"),
            "500": answer("1500, with the request ID"),
        },
    }})
}

/// The document of `routes` (its operator routes left out: the operator API is not the
/// client API), each method-style operation with the parameters `parameters` gives it (by
/// operation: `parameters` (name to `string`, `integer` or `any`), `required` and `files`).
pub fn document(routes: &Routes, version: &str, parameters: &Value) -> Value {
    let mut paths = Map::new();
    for name in routes.op_names() {
        let path = format!("/v3/{name}");
        let body = body(&parameters[name], routes.takes_files(&path));
        paths.insert(
            path,
            json!({"post": method_operation(name, "post", &body), "put": method_operation(name, "put", &body)}),
        );
    }
    for name in HEALTH {
        paths.insert(format!("/v3/{name}"), health_operation(name));
    }
    for (verb, pattern) in routes.resource_routes() {
        let verb = verb.as_str().to_ascii_lowercase();
        let entry = paths.entry(pattern.clone()).or_insert_with(|| json!({}));
        entry[verb.as_str()] = resource_operation(&verb, &pattern);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Investment Platform Service",
            "version": version,
            "description": "Method-style operations (`/v3/<operation>`) and resource-style routes; \
                every answer is the envelope. Contract: the spec's three parts and CONTRACT.md.",
        },
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "clientId:apiKey"},
            },
            "schemas": {
                "Envelope": {
                    "type": "object",
                    "required": ["statusCode", "statusDesc"],
                    "properties": {
                        "statusCode": {
                            "type": "string",
                            "pattern": "^[0-9]{3,4}$",
                            "description": "101 success; the codes of part 1's error table otherwise",
                        },
                        "statusDesc": {},
                    },
                    "additionalProperties": true,
                },
            },
        },
    })
}
