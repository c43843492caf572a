//! End-to-end tests of the list engine through [`parse`].

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use super::*;

/// Like accounts: equality-only filters, unknown sort fields fall back.
const ACCOUNTS: ListSpec = ListSpec {
    equality_only: true,
    sort_fallback: true,
    ..ListSpec::newest_first("accountId")
        .numbers(&["balance"])
        .texts(&["accountName"])
};

/// Like parties: every operator, strict sort.
const PARTIES: ListSpec = ListSpec {
    default_sort: ("partyId", Dir::Asc),
    ..ListSpec::newest_first("partyId")
        .numbers(&["amount"])
        .texts(&["firstName"])
};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn parties(items: &[(&str, &str)]) -> Result<ListQuery, ListError> {
    parse(&pairs(items), &PARTIES)
}

fn accounts(items: &[(&str, &str)]) -> Result<ListQuery, ListError> {
    parse(&pairs(items), &ACCOUNTS)
}

fn filter(json: &str) -> Result<ListQuery, ListError> {
    parties(&[("filter", json)])
}

fn rec(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A record with `field` set to `value`.
fn with(field: &str, value: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert(field.to_owned(), value);
    map
}

/// Whether the query (which must parse) matches a record with `field` = `value`.
fn hits(query: &Result<ListQuery, ListError>, field: &str, value: Value) -> bool {
    query.as_ref().expect("query parses").matches(&with(field, value))
}

fn assert_invalid_filter(result: Result<ListQuery, ListError>) {
    match result {
        Err(err @ ListError::InvalidFilter(_)) => {
            assert_eq!(err.status_code(), "1422");
            assert_eq!(err.http_status(), 422);
            assert!(err.desc().starts_with("invalid filter: "), "{}", err.desc());
        }
        other => panic!("expected an invalid filter, got {other:?}"),
    }
}

fn num(text: &str) -> Operand {
    Operand::Number(Decimal::from_str(text).expect("test decimal"))
}

/// Sorts records with the query and returns the values of `field`.
/// The records' `field` (a string in every record) in the query's order.
fn sorted(query: &ListQuery, records: &[Value], field: &str) -> Vec<String> {
    let mut records: Vec<Map<String, Value>> = records.iter().cloned().map(rec).collect();
    records.sort_by(|a, b| query.cmp(a, b));
    records
        .iter()
        .map(|r| r[field].as_str().unwrap_or_default().to_owned())
        .collect()
}

// ---- limit, offset, deleted ----

#[test]
fn defaults_apply_when_parameters_are_absent() {
    let q = parties(&[]).unwrap();
    assert_eq!((q.limit, q.offset, q.deleted), (10, 0, false));
    assert!(q.filters.is_empty());
    assert!(!q.has_filters());
    assert_eq!(q.sort, ("partyId", Dir::Asc));
    assert!(q.sort_is_default);
    let q = accounts(&[]).unwrap();
    assert_eq!(q.sort, ("createdDate", Dir::Desc));
}

#[test]
fn limit_accepts_1_to_500() {
    assert_eq!(parties(&[("limit", "1")]).unwrap().limit, 1);
    assert_eq!(parties(&[("limit", "500")]).unwrap().limit, 500);
    assert_eq!(parties(&[("limit", " 25 ")]).unwrap().limit, 25);
    assert_eq!(parties(&[("limit", "+7")]).unwrap().limit, 7);
}

#[test]
fn limit_out_of_range_is_239() {
    for bad in ["0", "501", "-1", "99999999999999999999999"] {
        let err = parties(&[("limit", bad)]).unwrap_err();
        assert!(matches!(err, ListError::OutOfRange(_)), "{bad}: {err:?}");
        assert_eq!((err.http_status(), err.status_code()), (422, "239"));
    }
}

#[test]
fn limit_and_offset_must_be_integers() {
    for bad in ["abc", "1.5", "", "1e2", "10abc", "-", "0x10"] {
        let err = parties(&[("limit", bad)]).unwrap_err();
        assert_eq!(err, ListError::NotInteger("limit"), "{bad}");
        assert_eq!((err.http_status(), err.status_code()), (422, "1422"));
        assert_eq!(err.desc(), "limit must be an integer");
        assert_eq!(
            parties(&[("offset", bad)]).unwrap_err(),
            ListError::NotInteger("offset")
        );
    }
}

#[test]
fn offset_must_not_be_negative() {
    assert_eq!(parties(&[("offset", "0")]).unwrap().offset, 0);
    assert_eq!(parties(&[("offset", "30")]).unwrap().offset, 30);
    let err = parties(&[("offset", "-1")]).unwrap_err();
    assert!(matches!(err, ListError::OutOfRange(_)));
    assert_eq!((err.http_status(), err.status_code()), (422, "239"));
}

#[test]
fn offset_must_be_below_the_total() {
    let q = parties(&[("offset", "4")]).unwrap();
    assert_eq!(q.check_offset(5), Ok(()));
    for total in [4, 3, 0] {
        let err = q.check_offset(total).unwrap_err();
        assert_eq!((err.http_status(), err.status_code()), (422, "239"));
    }
    // An empty result set rejects even offset 0.
    let q = parties(&[]).unwrap();
    assert!(q.check_offset(0).is_err());
    assert_eq!(q.check_offset(1), Ok(()));
    // A huge offset parses, then fails the check.
    let q = parties(&[("offset", "99999999999999999999999")]).unwrap();
    assert!(q.check_offset(1_000_000).is_err());
}

#[test]
fn deleted_is_a_boolean() {
    for (text, expected) in [
        ("true", true),
        ("TRUE", true),
        ("1", true),
        ("false", false),
        ("False", false),
        ("0", false),
    ] {
        assert_eq!(parties(&[("deleted", text)]).unwrap().deleted, expected, "{text}");
    }
    for bad in ["yes", "2", "", "t"] {
        let err = parties(&[("deleted", bad)]).unwrap_err();
        assert!(matches!(err, ListError::InvalidParam(_)), "{bad}: {err:?}");
        assert_eq!((err.http_status(), err.status_code()), (422, "1422"));
    }
}

#[test]
fn unknown_parameters_are_ignored_and_the_last_repeat_wins() {
    let q = parties(&[
        ("foo", "bar"),
        ("filterx", "junk"),
        ("Limit", "x"),
        ("limit", "3"),
        ("limit", "4"),
    ])
    .unwrap();
    assert_eq!(q.limit, 4);
    assert!(!q.has_filters());
}

#[test]
fn error_codes_and_descriptions() {
    let cases = [
        (
            ListError::NotInteger("offset"),
            422,
            "1422",
            "offset must be an integer",
        ),
        (ListError::OutOfRange("x".into()), 422, "239", "x"),
        (
            ListError::Undecodable("eof".into()),
            400,
            "1400",
            "filter could not be decoded: eof",
        ),
        (ListError::InvalidFilter("d".into()), 422, "1422", "invalid filter: d"),
        (ListError::InvalidParam("p".into()), 422, "1422", "p"),
    ];
    for (err, http, code, desc) in cases {
        assert_eq!(
            (err.http_status(), err.status_code(), err.desc()),
            (http, code, desc.to_string())
        );
    }
}

// ---- filter forms ----

#[test]
fn bracket_exact_match() {
    let q = parties(&[("filter[firstName]", "Ann")]);
    let parsed = q.as_ref().unwrap();
    assert!(parsed.has_filters());
    assert_eq!(
        parsed.filters,
        vec![Filter {
            field: "firstName",
            kind: FieldKind::Text,
            predicate: Predicate::In(vec![Operand::Text("Ann".into())]),
        }]
    );
    assert!(hits(&q, "firstName", json!("Ann")));
    assert!(!hits(&q, "firstName", json!("ann")), "case-sensitive");
    assert!(!hits(&q, "firstName", json!("Anne")));
}

#[test]
fn json_exact_match() {
    let q = filter(r#"{"firstName":"Ann"}"#);
    assert!(hits(&q, "firstName", json!("Ann")));
    assert!(!hits(&q, "firstName", json!("Bob")));
}

#[test]
fn repeated_bracket_exact_becomes_in() {
    let q = parties(&[
        ("filter[firstName]", "Ann"),
        ("limit", "5"),
        ("filter[firstName]", "Bob"),
    ]);
    assert_eq!(
        q.as_ref().unwrap().filters[0].predicate,
        Predicate::In(vec![Operand::Text("Ann".into()), Operand::Text("Bob".into())])
    );
    assert!(hits(&q, "firstName", json!("Ann")));
    assert!(hits(&q, "firstName", json!("Bob")));
    assert!(!hits(&q, "firstName", json!("Cy")));
}

#[test]
fn bracket_list_form() {
    let q = parties(&[("filter[firstName][]", "Ann"), ("filter[firstName][]", "Bob")]);
    assert_eq!(q.as_ref().unwrap().filters.len(), 1);
    assert!(hits(&q, "firstName", json!("Ann")));
    assert!(hits(&q, "firstName", json!("Bob")));
    assert!(!hits(&q, "firstName", json!("Cy")));
    let single = parties(&[("filter[firstName][]", "Ann")]);
    assert!(hits(&single, "firstName", json!("Ann")));
    assert!(!hits(&single, "firstName", json!("Bob")));
}

#[test]
fn json_array_is_in() {
    let q = filter(r#"{"firstName":["Ann","Bob"]}"#);
    assert!(hits(&q, "firstName", json!("Bob")));
    assert!(!hits(&q, "firstName", json!("Cy")));
}

#[test]
fn bracket_range_is_inclusive_by_default() {
    let q = parties(&[("filter[amount][min]", "10"), ("filter[amount][max]", "20")]);
    for (value, expected) in [
        ("9.99", false),
        ("10", true),
        ("15", true),
        ("20.00", true),
        ("20.01", false),
    ] {
        assert_eq!(hits(&q, "amount", json!(value)), expected, "{value}");
    }
    let only_min = parties(&[("filter[amount][min]", "10")]);
    assert!(hits(&only_min, "amount", json!("1000000")));
    assert!(!hits(&only_min, "amount", json!("9")));
    let only_max = parties(&[("filter[amount][max]", "10")]);
    assert!(hits(&only_max, "amount", json!("-5")));
    assert!(!hits(&only_max, "amount", json!("11")));
}

#[test]
fn bracket_range_exclusive_flags() {
    let q = parties(&[
        ("filter[amount][min]", "10"),
        ("filter[amount][min_inclusive]", "false"),
        ("filter[amount][max]", "20"),
    ]);
    assert!(!hits(&q, "amount", json!("10")));
    assert!(hits(&q, "amount", json!("10.01")));
    assert!(hits(&q, "amount", json!("20")));
    let q = parties(&[
        ("filter[amount][min]", "10"),
        ("filter[amount][max]", "20"),
        ("filter[amount][max_inclusive]", "0"),
        ("filter[amount][min_inclusive]", "true"),
    ]);
    assert!(hits(&q, "amount", json!("10")));
    assert!(!hits(&q, "amount", json!("20")));
    assert!(hits(&q, "amount", json!("19.999")));
}

#[test]
fn json_range_keys() {
    let q = filter(r#"{"amount":{"min":10,"max":"20","min_inclusive":false,"max_inclusive":true}}"#);
    assert!(!hits(&q, "amount", json!("10")));
    assert!(hits(&q, "amount", json!(10.5)));
    assert!(hits(&q, "amount", json!("20")));
    assert!(!hits(&q, "amount", json!("21")));
    let q = filter(r#"{"amount":{"max":20,"max_inclusive":"false"}}"#);
    assert!(!hits(&q, "amount", json!("20")));
    assert!(hits(&q, "amount", json!("-20")));
}

#[test]
fn range_flag_without_bound_is_invalid_and_bad_flag_is_invalid() {
    assert_invalid_filter(parties(&[("filter[amount][min_inclusive]", "false")]));
    assert_invalid_filter(filter(r#"{"amount":{"max_inclusive":true}}"#));
    assert_invalid_filter(parties(&[
        ("filter[amount][min]", "1"),
        ("filter[amount][min_inclusive]", "maybe"),
    ]));
    assert_invalid_filter(filter(r#"{"amount":{"min":1,"min_inclusive":null}}"#));
}

#[test]
fn operator_eq_and_ne() {
    let eq = filter(r#"{"firstName":{"eq":"Ann"}}"#);
    assert!(hits(&eq, "firstName", json!("Ann")));
    assert!(!hits(&eq, "firstName", json!("ANN")));
    let ne = filter(r#"{"firstName":{"ne":"Ann"}}"#);
    assert!(!hits(&ne, "firstName", json!("Ann")));
    assert!(hits(&ne, "firstName", json!("Bob")));
}

#[test]
fn operators_gt_gte_lt_lte() {
    let cases = [
        ("gt", [false, false, true]),
        ("gte", [false, true, true]),
        ("lt", [true, false, false]),
        ("lte", [true, true, false]),
    ];
    for (op, expected) in cases {
        let q = filter(&format!(r#"{{"amount":{{"{op}":"100"}}}}"#));
        let got = ["99.5", "100.000", "100.01"].map(|v| hits(&q, "amount", json!(v)));
        assert_eq!(got, expected, "{op}");
    }
}

#[test]
fn operators_in_and_nin() {
    let q = filter(r#"{"amount":{"in":[1,"2.50"]}}"#);
    assert!(hits(&q, "amount", json!("1.0")));
    assert!(hits(&q, "amount", json!("2.5")));
    assert!(!hits(&q, "amount", json!("3")));
    let q = filter(r#"{"firstName":{"nin":["Ann","Bob"]}}"#);
    assert!(!hits(&q, "firstName", json!("Ann")));
    assert!(hits(&q, "firstName", json!("Cy")));
    // A single value counts as a one-item list.
    let q = filter(r#"{"firstName":{"in":"Ann"}}"#);
    assert!(hits(&q, "firstName", json!("Ann")));
}

#[test]
fn operator_like() {
    let q = filter(r#"{"firstName":{"like":"an%"}}"#);
    assert!(hits(&q, "firstName", json!("Ann")));
    assert!(hits(&q, "firstName", json!("ANDREW")));
    assert!(!hits(&q, "firstName", json!("Joan")));
    let q = filter(r#"{"firstName":{"like":"_o%"}}"#);
    assert!(hits(&q, "firstName", json!("Bob")));
    assert!(!hits(&q, "firstName", json!("Ann")));
    // LIKE reads the raw text, on any kind of field.
    let q = filter(r#"{"partyId":{"like":"100%"}}"#);
    assert!(hits(&q, "partyId", json!("100123")));
    assert!(hits(&q, "partyId", json!(1005)));
    assert!(!hits(&q, "partyId", json!("200100")));
    assert!(!hits(&q, "partyId", Value::Null));
}

#[test]
fn operator_between_is_inclusive() {
    let q = filter(r#"{"amount":{"between":["10",20]}}"#);
    for (value, expected) in [("9", false), ("10", true), ("20", true), ("20.0001", false)] {
        assert_eq!(hits(&q, "amount", json!(value)), expected, "{value}");
    }
    let q = filter(r#"{"createdDate":{"between":["2024-01-01","2024-01-31 23:59:59"]}}"#);
    assert!(hits(&q, "createdDate", json!("2024-01-31 12:00:00")));
    assert!(!hits(&q, "createdDate", json!("2024-02-01 00:00:00")));
}

#[test]
fn several_operators_on_one_field_are_anded() {
    let q = filter(r#"{"amount":{"gt":1,"lt":5,"ne":3}}"#);
    assert_eq!(q.as_ref().unwrap().filters.len(), 3);
    assert!(hits(&q, "amount", json!("2")));
    assert!(!hits(&q, "amount", json!("3")));
    assert!(!hits(&q, "amount", json!("5")));
}

#[test]
fn bracket_operators_are_accepted() {
    let q = parties(&[
        ("filter[amount][gt]", "5"),
        ("filter[firstName][nin][]", "Ann"),
        ("filter[firstName][nin][]", "Bob"),
    ]);
    let q = q.unwrap();
    assert!(q.matches(&rec(json!({"amount": "6", "firstName": "Cy"}))));
    assert!(!q.matches(&rec(json!({"amount": "6", "firstName": "Bob"}))));
    assert!(!q.matches(&rec(json!({"amount": "5", "firstName": "Cy"}))));
    // A repeated scalar operator becomes a list: fine for `in`, malformed for `gt`.
    let q = parties(&[("filter[firstName][in]", "Ann"), ("filter[firstName][in]", "Bob")]);
    assert!(hits(&q, "firstName", json!("Bob")));
    assert_invalid_filter(parties(&[("filter[amount][gt]", "1"), ("filter[amount][gt]", "2")]));
}

#[test]
fn all_filters_are_anded_across_forms() {
    let q = parties(&[
        ("filter", r#"{"firstName":"Ann"}"#),
        ("filter[amount][min]", "10"),
        ("filter", r#"{"partyId":{"ne":"7"}}"#),
    ])
    .unwrap();
    assert_eq!(q.filters.len(), 3);
    assert!(q.matches(&rec(json!({"firstName": "Ann", "amount": "10", "partyId": "8"}))));
    assert!(!q.matches(&rec(json!({"firstName": "Ann", "amount": "9", "partyId": "8"}))));
    assert!(!q.matches(&rec(json!({"firstName": "Bob", "amount": "10", "partyId": "8"}))));
    assert!(!q.matches(&rec(json!({"firstName": "Ann", "amount": "10", "partyId": "7"}))));
    // Exact and range on the same field in bracket form are two conditions.
    let q = parties(&[("filter[amount]", "15"), ("filter[amount][max]", "10")]).unwrap();
    assert_eq!(q.filters.len(), 2);
    assert!(!q.matches(&with("amount", json!("15"))));
}

#[test]
fn missing_or_null_fields_match_only_negations() {
    let comparisons = [
        r#"{"firstName":"Ann"}"#,
        r#"{"firstName":{"in":["Ann"]}}"#,
        r#"{"amount":{"gt":-1000}}"#,
        r#"{"amount":{"lte":1000}}"#,
        r#"{"amount":{"between":[-1,1]}}"#,
        r#"{"firstName":{"like":"%"}}"#,
    ];
    for json in comparisons {
        let q = filter(json).unwrap();
        assert!(!q.matches(&Map::new()), "{json} on missing");
        assert!(
            !q.matches(&rec(json!({"firstName": null, "amount": null}))),
            "{json} on null"
        );
    }
    for json in [r#"{"firstName":{"ne":"Ann"}}"#, r#"{"amount":{"nin":[1,2]}}"#] {
        let q = filter(json).unwrap();
        assert!(q.matches(&Map::new()), "{json} on missing");
        assert!(
            q.matches(&rec(json!({"firstName": null, "amount": null}))),
            "{json} on null"
        );
    }
}

#[test]
fn empty_filter_means_no_filter() {
    assert!(!parties(&[("filter", "")]).unwrap().has_filters());
    assert!(!parties(&[("filter", "  ")]).unwrap().has_filters());
    assert!(!parties(&[("filter", "{}")]).unwrap().has_filters());
}

// ---- typed values ----

#[test]
fn dates_are_converted_before_comparing() {
    let q = parties(&[("filter[createdDate]", "2024-05-01")]);
    assert_eq!(
        q.as_ref().unwrap().filters[0].predicate,
        Predicate::In(vec![Operand::Date("2024-05-01 00:00:00".into())])
    );
    assert!(hits(&q, "createdDate", json!("2024-05-01 00:00:00")));
    assert!(
        !hits(&q, "createdDate", json!("2024-05-01 10:00:00")),
        "date-only is midnight"
    );
    let q = parties(&[("filter[createdDate]", "05-01-2024")]);
    assert!(hits(&q, "createdDate", json!("2024-05-01 00:00:00")));
    let q = parties(&[("filter[createdDate]", "2024-05-01 10:11:12")]);
    assert!(hits(&q, "createdDate", json!("2024-05-01 10:11:12")));
}

#[test]
fn iso_8601_with_offset_converts_to_utc() {
    let q = filter(r#"{"createdDate":{"gte":"2024-05-01T10:00:00+02:00"}}"#);
    assert_eq!(
        q.as_ref().unwrap().filters[0].predicate,
        Predicate::Range {
            min: Some(Bound {
                value: Operand::Date("2024-05-01 08:00:00".into()),
                inclusive: true
            }),
            max: None,
        }
    );
    assert!(hits(&q, "createdDate", json!("2024-05-01 08:00:00")));
    assert!(!hits(&q, "createdDate", json!("2024-05-01 07:59:59")));
    let q = parties(&[("filter[createdDate][max]", "2024-05-01T00:30:00-01:00")]);
    assert!(hits(&q, "createdDate", json!("2024-05-01 01:30:00")));
    assert!(!hits(&q, "createdDate", json!("2024-05-01 01:30:01")));
}

#[test]
fn date_ranges_by_day() {
    let q = parties(&[
        ("filter[createdDate][min]", "2024-01-01"),
        ("filter[createdDate][max]", "2024-01-31"),
    ]);
    assert!(hits(&q, "createdDate", json!("2024-01-01 00:00:00")));
    assert!(hits(&q, "createdDate", json!("2024-01-15 12:00:00")));
    assert!(hits(&q, "createdDate", json!("2024-01-31 00:00:00")));
    assert!(
        !hits(&q, "createdDate", json!("2024-01-31 00:00:01")),
        "max date is midnight"
    );
    assert!(!hits(&q, "createdDate", json!("2023-12-31 23:59:59")));
    // Record values in other accepted forms are read the same way; unset ones don't match.
    assert!(hits(&q, "createdDate", json!("2024-01-10")));
    assert!(!hits(&q, "createdDate", json!("")));
}

#[test]
fn undecodable_dates_are_invalid() {
    for bad in ["yesterday", "2024-02-30", "2024-13-01", "31-12-2024"] {
        assert_invalid_filter(parties(&[("filter[createdDate]", bad)]));
    }
    assert_invalid_filter(filter(r#"{"createdDate":{"gt":20240101}}"#));
}

#[test]
fn an_empty_value_selects_empty_fields_of_any_kind() {
    for field in ["createdDate", "amount", "firstName"] {
        let q = parties(&[(&format!("filter[{field}]"), "")]);
        assert!(hits(&q, field, json!("")), "{field}");
        assert!(!hits(&q, field, json!("2024-01-01 00:00:00")), "{field}");
    }
}

#[test]
fn booleans_filter_as_their_text() {
    let q = filter(r#"{"firstName":true}"#);
    assert!(hits(&q, "firstName", json!(true)));
    assert!(hits(&q, "firstName", json!("true")));
    assert!(!hits(&q, "firstName", json!(false)));
}

#[test]
fn times_compare_to_the_fraction_of_a_second() {
    let q = filter(r#"{"createdDate":{"gt":"2024-05-01T10:00:06Z"}}"#);
    assert!(hits(&q, "createdDate", json!("2024-05-01 10:00:06.5")));
    assert!(!hits(&q, "createdDate", json!("2024-05-01 10:00:06.000000")));
    let q = filter(r#"{"createdDate":{"lt":"2024-05-01 10:00:06.25"}}"#);
    assert!(hits(&q, "createdDate", json!("2024-05-01 10:00:06.249999")));
    assert!(!hits(&q, "createdDate", json!("2024-05-01 10:00:06.250000")));
}

#[test]
fn numbers_compare_as_decimals() {
    let q = filter(r#"{"amount":{"gt":"99"}}"#);
    assert!(hits(&q, "amount", json!("100")), "numeric, not string, order");
    assert!(!hits(&q, "amount", json!("9")));
    let q = filter(r#"{"amount":"0.3"}"#);
    assert!(hits(&q, "amount", json!("0.30")));
    assert!(hits(&q, "amount", json!(0.3)));
    let q = filter(r#"{"amount":{"between":[0.1,0.1]}}"#);
    assert!(hits(&q, "amount", json!("0.1")));
    assert_eq!(
        q.unwrap().filters[0].predicate,
        Predicate::Range {
            min: Some(Bound {
                value: num("0.1"),
                inclusive: true
            }),
            max: Some(Bound {
                value: num("0.1"),
                inclusive: true
            }),
        }
    );
    let q = filter(r#"{"amount":{"lt":1e3}}"#);
    assert!(hits(&q, "amount", json!("999.99")));
    // A non-numeric record value never satisfies a numeric comparison.
    assert!(!hits(&q, "amount", json!("abc")));
}

#[test]
fn non_numeric_values_for_number_fields_are_invalid() {
    assert_invalid_filter(filter(r#"{"amount":"abc"}"#));
    assert_invalid_filter(filter(r#"{"amount":{"gt":"1,000"}}"#));
    assert_invalid_filter(parties(&[("filter[amount][min]", "ten")]));
    assert_invalid_filter(parties(&[("filter[amount][]", "1"), ("filter[amount][]", "x")]));
}

#[test]
fn numeric_ids_compare_as_numbers_from_strings_or_numbers() {
    let as_number = filter(r#"{"partyId":100123}"#);
    let as_string = filter(r#"{"partyId":"100123"}"#);
    let padded = parties(&[("filter[partyId]", "0100123")]);
    for q in [&as_number, &as_string, &padded] {
        assert!(hits(q, "partyId", json!("100123")));
        assert!(hits(q, "partyId", json!(100123)));
        assert!(!hits(q, "partyId", json!("100124")));
    }
    let q = filter(r#"{"partyId":{"gt":"99"}}"#);
    assert!(hits(&q, "partyId", json!("100")), "100 > 99 numerically");
    assert!(!hits(&q, "partyId", json!("99")));
    let q = filter(r#"{"partyId":{"in":[5,"6"]}}"#);
    assert!(hits(&q, "partyId", json!("6")));
    assert!(hits(&q, "partyId", json!(5)));
}

#[test]
fn prefixed_ids_compare_as_text() {
    let q = filter(r#"{"partyId":"P100"}"#);
    assert!(hits(&q, "partyId", json!("P100")));
    assert!(!hits(&q, "partyId", json!("p100")));
    assert!(!hits(&q, "partyId", json!("100")));
    // Text and numeric IDs are never comparable in a range.
    let q = filter(r#"{"partyId":{"gt":"P1"}}"#);
    assert!(hits(&q, "partyId", json!("P2")));
    assert!(!hits(&q, "partyId", json!("5")));
}

#[test]
fn text_compares_as_strings() {
    let q = filter(r#"{"firstName":{"gte":"B"}}"#);
    assert!(hits(&q, "firstName", json!("Bob")));
    assert!(!hits(&q, "firstName", json!("Ann")));
    assert!(
        hits(&q, "firstName", json!("bob")),
        "byte order puts lowercase after uppercase"
    );
    assert!(!hits(&q, "firstName", json!("ANN")));
    let q = filter(r#"{"firstName":10}"#);
    assert!(hits(&q, "firstName", json!("10")));
    assert!(!hits(&q, "firstName", json!("10.0")));
}

// ---- invalid filters ----

#[test]
fn unknown_fields_are_invalid_in_every_form() {
    assert_invalid_filter(filter(r#"{"nope":"x"}"#));
    assert_invalid_filter(parties(&[("filter[nope]", "x")]));
    assert_invalid_filter(parties(&[("filter[nope][]", "x")]));
    assert_invalid_filter(parties(&[("filter[nope][min]", "1")]));
    assert_invalid_filter(accounts(&[("filter[nope]", "x")]));
    // Field names are case-sensitive.
    assert_invalid_filter(parties(&[("filter[firstname]", "x")]));
}

#[test]
fn unknown_operators_are_invalid() {
    assert_invalid_filter(filter(r#"{"amount":{"gteq":1}}"#));
    assert_invalid_filter(filter(r#"{"amount":{"EQ":1}}"#));
    assert_invalid_filter(parties(&[("filter[amount][above]", "1")]));
}

#[test]
fn malformed_operator_values_are_invalid() {
    for json in [
        r#"{"amount":{"between":[1]}}"#,
        r#"{"amount":{"between":[1,2,3]}}"#,
        r#"{"amount":{"between":"1,2"}}"#,
        r#"{"amount":{"in":[]}}"#,
        r#"{"amount":{"in":{"a":1}}}"#,
        r#"{"amount":{"in":[[1]]}}"#,
        r#"{"amount":{"gt":[1]}}"#,
        r#"{"amount":{"eq":null}}"#,
        r#"{"firstName":{"like":["a%"]}}"#,
        r#"{"firstName":{"like":null}}"#,
        r#"{"amount":{}}"#,
        r#"{"amount":[]}"#,
        r#"{"amount":null}"#,
    ] {
        assert_invalid_filter(filter(json));
    }
}

#[test]
fn malformed_bracket_keys_are_invalid() {
    for key in [
        "filter[]",
        "filter[][]",
        "filter[amount][gt][x]",
        "filter[amount][][]",
        "filter[amount]x",
        "filter[amount",
        "filter[amount][min][]x",
    ] {
        assert_invalid_filter(parties(&[(key, "1")]));
    }
}

#[test]
fn filter_json_must_be_an_object() {
    assert_invalid_filter(filter(r#"[{"firstName":"Ann"}]"#));
    assert_invalid_filter(filter(r#""firstName""#));
    assert_invalid_filter(filter("42"));
}

#[test]
fn undecodable_filter_json_is_400() {
    for bad in ["{", "{firstName:'Ann'}", "firstName=Ann", r#"{"a":1,}"#] {
        let err = parties(&[("filter", bad)]).unwrap_err();
        assert!(matches!(err, ListError::Undecodable(_)), "{bad}: {err:?}");
        assert_eq!((err.http_status(), err.status_code()), (400, "1400"));
    }
}

#[test]
fn equality_only_resources_accept_exact_and_lists() {
    let ok: [&[(&str, &str)]; 6] = [
        &[("filter[accountName]", "Main")],
        &[("filter[accountName][]", "Main"), ("filter[accountName][]", "Other")],
        &[("filter[accountName]", "Main"), ("filter[accountName]", "Other")],
        &[("filter", r#"{"accountName":["Main","Other"]}"#)],
        &[("filter", r#"{"accountName":{"eq":"Main"}}"#)],
        &[("filter", r#"{"accountName":{"in":["Main"]},"balance":{"eq":"1.50"}}"#)],
    ];
    for query in ok {
        let q = accounts(query).unwrap_or_else(|e| panic!("{query:?}: {e:?}"));
        assert!(
            q.matches(&rec(json!({"accountName": "Main", "balance": "1.5"}))),
            "{query:?}"
        );
    }
}

#[test]
fn equality_only_resources_reject_other_forms() {
    for op in filter::OPERATORS
        .into_iter()
        .filter(|op| !filter::EQUALITY_OPERATORS.contains(op))
    {
        let value = if matches!(op, "nin" | "between") { "[1,2]" } else { "1" };
        assert_invalid_filter(accounts(&[("filter", &format!(r#"{{"balance":{{"{op}":{value}}}}}"#))]));
    }
    assert_invalid_filter(accounts(&[("filter[balance][min]", "1")]));
    assert_invalid_filter(accounts(&[
        ("filter[balance][max]", "1"),
        ("filter[balance][max_inclusive]", "false"),
    ]));
    assert_invalid_filter(accounts(&[("filter[accountName][like]", "M%")]));
}

#[test]
fn invalid_filters_fail_at_parse_time_regardless_of_results() {
    // Validation happens in parse, before any count or offset check could run.
    let err = parties(&[("offset", "0"), ("filter[nope]", "x")]).unwrap_err();
    assert!(matches!(err, ListError::InvalidFilter(_)));
}

// ---- error precedence ----

#[test]
fn decode_errors_come_before_validation_errors() {
    let is_undecodable = |r: Result<ListQuery, ListError>| matches!(r, Err(ListError::Undecodable(_)));
    assert!(is_undecodable(parties(&[("filter[nope]", "x"), ("filter", "{")])));
    assert!(is_undecodable(parties(&[("filter", r#"{"nope":1}"#), ("filter", "{")])));
    assert!(is_undecodable(parties(&[("filter", "[1]"), ("filter", "{")])));
    assert!(is_undecodable(parties(&[("limit", "0"), ("filter", "{")])));
    assert!(is_undecodable(parties(&[("offset", "-1"), ("filter", "{")])));
    assert!(is_undecodable(parties(&[("sort", "nope:asc"), ("filter", "{")])));
    // Non-integers and bad booleans are decode errors too.
    assert_eq!(
        parties(&[("filter", "{"), ("limit", "x")]).unwrap_err(),
        ListError::NotInteger("limit")
    );
    assert!(matches!(
        parties(&[("limit", "0"), ("deleted", "maybe")]),
        Err(ListError::InvalidParam(_))
    ));
    assert_eq!(
        parties(&[("limit", "0"), ("offset", "x")]).unwrap_err(),
        ListError::NotInteger("offset")
    );
    // Among validation errors: limit, offset, filter, sort.
    assert!(matches!(
        parties(&[("sort", "x"), ("filter[nope]", "1"), ("limit", "0")]),
        Err(ListError::OutOfRange(_))
    ));
    assert!(matches!(
        parties(&[("sort", "x"), ("filter[nope]", "1")]),
        Err(ListError::InvalidFilter(_))
    ));
}

// ---- sorting ----

#[test]
fn explicit_sort_with_case_insensitive_direction() {
    for (text, dir) in [
        ("amount:asc", Dir::Asc),
        ("amount:ASC", Dir::Asc),
        ("amount:Desc", Dir::Desc),
        (" amount : desc ", Dir::Desc),
    ] {
        let q = parties(&[("sort", text)]).unwrap();
        assert_eq!(q.sort, ("amount", dir), "{text}");
        assert!(!q.sort_is_default);
    }
    let q = accounts(&[("sort", "createdDate:DESC")]).unwrap();
    assert!(!q.sort_is_default, "explicitly asked for, even if equal to the default");
    let q = parties(&[("sort", "")]).unwrap();
    assert!(q.sort_is_default);
}

#[test]
fn unknown_sort_field_falls_back_on_sort_fallback_resources() {
    for text in ["nope:asc", "nope:sideways", "createddate:asc"] {
        let q = accounts(&[("sort", text)]).unwrap();
        assert_eq!(q.sort, ("createdDate", Dir::Desc), "{text}");
        assert!(q.sort_is_default);
    }
}

#[test]
fn unknown_sort_field_is_invalid_elsewhere() {
    let err = parties(&[("sort", "nope:asc")]).unwrap_err();
    assert!(matches!(err, ListError::InvalidParam(_)));
    assert_eq!((err.http_status(), err.status_code()), (422, "1422"));
}

#[test]
fn malformed_sort_is_invalid() {
    for (spec, text) in [
        (&PARTIES, "amount"),
        (&PARTIES, "amount:up"),
        (&PARTIES, "amount:"),
        (&PARTIES, "amount:asc:desc"),
        (&ACCOUNTS, "balance"),
        (&ACCOUNTS, "nope"),
        (&ACCOUNTS, "balance:upward"),
        (&ACCOUNTS, "createdDate:"),
    ] {
        let err = parse(&pairs(&[("sort", text)]), spec).unwrap_err();
        assert!(matches!(err, ListError::InvalidParam(_)), "{text}: {err:?}");
        assert_eq!(err.status_code(), "1422");
    }
}

#[test]
fn numbers_sort_numerically_with_nulls_first_and_text_last() {
    let records = [
        json!({"partyId": "1", "amount": "10"}),
        json!({"partyId": "2", "amount": "9.5"}),
        json!({"partyId": "3", "amount": null}),
        json!({"partyId": "4", "amount": "n/a"}),
        json!({"partyId": "5", "amount": 100}),
        json!({"partyId": "6"}),
        json!({"partyId": "7", "amount": "-1"}),
    ];
    let asc = parties(&[("sort", "amount:asc")]).unwrap();
    assert_eq!(sorted(&asc, &records, "partyId"), ["3", "6", "7", "2", "1", "5", "4"]);
    let desc = parties(&[("sort", "amount:desc")]).unwrap();
    assert_eq!(sorted(&desc, &records, "partyId"), ["4", "5", "1", "2", "7", "6", "3"]);
}

#[test]
fn ties_break_by_numeric_id_in_the_sort_direction() {
    let records = [
        json!({"partyId": "10", "firstName": "Ann"}),
        json!({"partyId": "9", "firstName": "Ann"}),
        json!({"partyId": "100", "firstName": "Ann"}),
        json!({"partyId": "5", "firstName": "Bob"}),
    ];
    let asc = parties(&[("sort", "firstName:asc")]).unwrap();
    assert_eq!(sorted(&asc, &records, "partyId"), ["9", "10", "100", "5"]);
    let desc = parties(&[("sort", "firstName:desc")]).unwrap();
    assert_eq!(sorted(&desc, &records, "partyId"), ["5", "100", "10", "9"]);
}

#[test]
fn default_account_sort_is_newest_first_with_id_tiebreak() {
    let records = [
        json!({"accountId": "A2", "createdDate": "2024-01-01 00:00:00"}),
        json!({"accountId": "A1", "createdDate": "2024-01-01 00:00:00"}),
        json!({"accountId": "A3", "createdDate": "2024-03-01 00:00:00"}),
        json!({"accountId": "A0", "createdDate": "2023-12-31 23:59:59"}),
    ];
    let q = accounts(&[]).unwrap();
    assert_eq!(sorted(&q, &records, "accountId"), ["A3", "A2", "A1", "A0"]);
    let q = accounts(&[("sort", "unknown:asc")]).unwrap();
    assert_eq!(sorted(&q, &records, "accountId"), ["A3", "A2", "A1", "A0"]);
}

#[test]
fn dates_sort_by_their_canonical_form() {
    let records = [
        json!({"partyId": "1", "createdDate": "2024-05-01 09:00:00"}),
        json!({"partyId": "2", "createdDate": "2024-05-01T10:00:00+02:00"}),
        json!({"partyId": "3", "createdDate": "04-30-2024"}),
        json!({"partyId": "4", "createdDate": ""}),
    ];
    let q = parties(&[("sort", "createdDate:asc")]).unwrap();
    assert_eq!(sorted(&q, &records, "partyId"), ["4", "3", "2", "1"]);
}

#[test]
fn text_sorts_by_bytes() {
    let records = [
        json!({"partyId": "1", "firstName": "bob"}),
        json!({"partyId": "2", "firstName": "Bob"}),
        json!({"partyId": "3", "firstName": "Ann"}),
        json!({"partyId": "4", "firstName": "Émile"}),
    ];
    let q = parties(&[("sort", "firstName:asc")]).unwrap();
    assert_eq!(sorted(&q, &records, "partyId"), ["3", "2", "1", "4"]);
}

#[test]
fn pages_neither_repeat_nor_skip_despite_ties() {
    let records: Vec<Value> = (0..37)
        .map(|i| json!({"partyId": (i * 7919 % 101).to_string(), "amount": (i % 3).to_string()}))
        .collect();
    for dir in ["asc", "desc"] {
        let mut seen = Vec::new();
        let mut offset = 0;
        loop {
            let q = parties(&[
                ("sort", &format!("amount:{dir}")),
                ("limit", "5"),
                ("offset", &offset.to_string()),
            ])
            .unwrap();
            if q.check_offset(records.len()).is_err() {
                break;
            }
            // Each page sorts a differently ordered copy, as a store might return it.
            let mut shuffled = records.clone();
            shuffled.rotate_left(offset % records.len());
            let all = sorted(&q, &shuffled, "partyId");
            seen.extend(all.into_iter().skip(q.offset).take(q.limit));
            offset += 5;
        }
        let mut unique = seen.clone();
        unique.sort_by_key(|v| v.to_string());
        unique.dedup();
        assert_eq!((seen.len(), unique.len()), (37, 37), "{dir}");
    }
}

#[test]
fn sort_and_filter_work_together_on_a_page() {
    let records: Vec<Map<String, Value>> = [
        json!({"partyId": "1", "firstName": "Ann", "amount": "5"}),
        json!({"partyId": "2", "firstName": "Bob", "amount": "50"}),
        json!({"partyId": "3", "firstName": "Cy", "amount": "500"}),
        json!({"partyId": "4", "firstName": "Dee", "amount": "5000"}),
    ]
    .into_iter()
    .map(rec)
    .collect();
    let q = parties(&[
        ("filter[amount][min]", "50"),
        ("sort", "amount:desc"),
        ("limit", "2"),
        ("offset", "1"),
    ])
    .unwrap();
    let mut hits: Vec<&Map<String, Value>> = records.iter().filter(|r| q.matches(r)).collect();
    hits.sort_by(|a, b| q.cmp(a, b));
    assert_eq!(q.check_offset(hits.len()), Ok(()));
    let page: Vec<&Value> = hits
        .iter()
        .skip(q.offset)
        .take(q.limit)
        .filter_map(|r| r.get("firstName"))
        .collect();
    assert_eq!(page, [&json!("Cy"), &json!("Bob")]);
}
