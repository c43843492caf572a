//! The list engine shared by every list endpoint (`GET /v3/accounts`,
//! `/v3/parties`, ...): parses `limit`, `offset`, `deleted`, `filter` and
//! `sort` into a typed [`ListQuery`], then filters and orders records.
//!
//! Pure code: the caller loads the records, keeps the ones that
//! [`ListQuery::matches`] (and whose deleted flag suits [`ListQuery::deleted`]),
//! sorts them with [`ListQuery::cmp`], checks [`ListQuery::check_offset`]
//! against the count, and takes `limit` records from `offset`.
//!
//! Parsing reports errors in two phases: first decoding (`limit`/`offset`
//! not integers, `deleted` not a boolean, `filter` JSON undecodable), then
//! validation (ranges, filter fields/operators/values, sort).

pub mod filter;

#[cfg(test)]
mod tests;

use std::cmp::Ordering;

use serde_json::{Map, Value};

pub use filter::{normalize_date, Bound, Filter, LikePattern, Operand, Predicate};

/// `limit` when the query has none.
pub const DEFAULT_LIMIT: usize = 10;
/// The largest accepted `limit`.
pub const MAX_LIMIT: usize = 500;

/// How a field's values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Strings: exact, case-sensitive equality; byte order.
    Text,
    /// Decimal numbers, compared exactly.
    Number,
    /// Date/times, compared in `YYYY-MM-DD HH:MM:SS` form.
    Date,
    /// An ID such as `"100123"` or `"A1000001"`: compared as a number when
    /// all digits, as text otherwise.
    Id,
}

/// One filterable and sortable field of a resource's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// The field's name in the record (and in `filter`/`sort`).
    pub name: &'static str,
    /// How its values are compared.
    pub kind: FieldKind,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Ascending.
    Asc,
    /// Descending.
    Desc,
}

/// What a resource's list endpoint accepts: its filterable and sortable fields, named once
/// per kind (a `const`, built with [`ListSpec::newest_first`] and the kind setters).
#[derive(Debug, Clone, Copy)]
pub struct ListSpec {
    /// The record's ID field (an [`FieldKind::Id`]), which breaks ties in the sort order.
    pub id_field: &'static str,
    /// Other ID fields.
    pub ids: &'static [&'static str],
    /// Decimal fields.
    pub numbers: &'static [&'static str],
    /// Date/time fields.
    pub dates: &'static [&'static str],
    /// Text fields.
    pub texts: &'static [&'static str],
    /// The sort used when the query gives none.
    pub default_sort: (&'static str, Dir),
    /// The field the list index keeps its records in order of (`createdDate`, or an ATS
    /// list's `executionTime`): a page sorted by it is read from the index.
    pub indexed: &'static str,
    /// Whether part 1's keyset page applies (the ATS lists, by `executionTime`): see
    /// [`ListQuery::keyset`].
    pub keyset: bool,
    /// Filters may only be exact matches or lists (`eq`/`in`) (accounts).
    pub equality_only: bool,
    /// An unknown sort field means the default sort instead of an error (accounts).
    pub sort_fallback: bool,
}

impl ListSpec {
    /// A resource keyed by `id_field` and listed newest first, with the `createdDate` and
    /// `updatedDate` every record keeps; every operator, and an unknown sort field is an error.
    pub const fn newest_first(id_field: &'static str) -> Self {
        ListSpec {
            id_field,
            ids: &[],
            numbers: &[],
            dates: &["createdDate", "updatedDate"],
            texts: &[],
            default_sort: ("createdDate", Dir::Desc),
            indexed: "createdDate",
            keyset: false,
            equality_only: false,
            sort_fallback: false,
        }
    }

    /// With these other ID fields.
    pub const fn ids(self, ids: &'static [&'static str]) -> Self {
        ListSpec { ids, ..self }
    }

    /// With these decimal fields.
    pub const fn numbers(self, numbers: &'static [&'static str]) -> Self {
        ListSpec { numbers, ..self }
    }

    /// With these date/time fields (in place of `createdDate` and `updatedDate` alone).
    pub const fn dates(self, dates: &'static [&'static str]) -> Self {
        ListSpec { dates, ..self }
    }

    /// Listed newest first by `field`, a date/time the list index keeps them in order of at
    /// microsecond width (`YYYY-MM-DD HH:MM:SS.ffffff`), and paged by part 1's keyset on it.
    pub const fn indexed_by(self, field: &'static str) -> Self {
        ListSpec {
            indexed: field,
            default_sort: (field, Dir::Desc),
            keyset: true,
            ..self
        }
    }

    /// With these text fields.
    pub const fn texts(self, texts: &'static [&'static str]) -> Self {
        ListSpec { texts, ..self }
    }

    /// The field named `name`, if the resource has it.
    pub fn field(&self, name: &str) -> Option<FieldSpec> {
        let tables = [
            (std::slice::from_ref(&self.id_field), FieldKind::Id),
            (self.ids, FieldKind::Id),
            (self.numbers, FieldKind::Number),
            (self.dates, FieldKind::Date),
            (self.texts, FieldKind::Text),
        ];
        tables.into_iter().find_map(|(names, kind)| {
            let name = *names.iter().find(|field| **field == name)?;
            Some(FieldSpec { name, kind })
        })
    }

    /// The kind of `name`, or `default` when the spec does not list it.
    fn kind_of(&self, name: &str, default: FieldKind) -> FieldKind {
        self.field(name).map_or(default, |field| field.kind)
    }
}

/// A parsed, validated list query.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    /// Page size, 1 to [`MAX_LIMIT`].
    pub limit: usize,
    /// Zero-based index of the page's first record.
    pub offset: usize,
    /// Whether deleted records are included.
    pub deleted: bool,
    /// Conditions every returned record meets (AND).
    pub filters: Vec<Filter>,
    /// The sort field and direction actually applied.
    pub sort: (&'static str, Dir),
    /// Whether `sort` is the resource's default (no sort given, an empty
    /// one, or an unknown field on a `sort_fallback` resource).
    pub sort_is_default: bool,
    /// The resource's [`ListSpec::indexed`] field.
    pub indexed: &'static str,
    keyset_paged: bool,
    sort_kind: FieldKind,
    id_field: &'static str,
    id_kind: FieldKind,
}

/// Why a list query was rejected.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ListError {
    /// `limit` or `offset` is not an integer (the parameter's name).
    #[error("{0} must be an integer")]
    NotInteger(&'static str),
    /// `limit` outside 1 to 500, or `offset` negative or past the results.
    #[error("{0}")]
    OutOfRange(String),
    /// The `filter` parameter is not valid JSON.
    #[error("filter could not be decoded: {0}")]
    Undecodable(String),
    /// A filter names an unknown field or operator, or has a bad value.
    #[error("invalid filter: {0}")]
    InvalidFilter(String),
    /// Another parameter (`deleted`, `sort`) has a bad value.
    #[error("{0}")]
    InvalidParam(String),
}

impl ListError {
    /// The API's `statusCode` for this error.
    pub fn status_code(&self) -> &'static str {
        match self {
            ListError::OutOfRange(_) => "239",
            ListError::Undecodable(_) => "1400",
            ListError::NotInteger(_) | ListError::InvalidFilter(_) | ListError::InvalidParam(_) => "1422",
        }
    }

    /// The HTTP status for this error.
    pub fn http_status(&self) -> u16 {
        match self {
            ListError::Undecodable(_) => 400,
            _ => 422,
        }
    }

    /// The API's `statusDesc` for this error.
    pub fn desc(&self) -> String {
        self.to_string()
    }
}

/// Parses a list query from the query string's pairs, already
/// percent-decoded and in order (`filter[name][]` keys arrive literally).
/// Unknown parameters are ignored; for a repeated `limit`, `offset`,
/// `deleted` or `sort` the last one counts; every `filter` and `filter[..]`
/// pair adds conditions.
pub fn parse(pairs: &[(String, String)], spec: &ListSpec) -> Result<ListQuery, ListError> {
    let (mut limit, mut offset, mut deleted, mut sort) = (None, None, None, None);
    let mut json_filters = Vec::new();
    let mut bracket_filters = Vec::new();
    for (key, value) in pairs {
        match key.as_str() {
            "limit" => limit = Some(value.as_str()),
            "offset" => offset = Some(value.as_str()),
            "deleted" => deleted = Some(value.as_str()),
            "sort" => sort = Some(value.as_str()),
            "filter" => json_filters.push(value.as_str()),
            _ if key.starts_with("filter[") => bracket_filters.push((key.as_str(), value.as_str())),
            _ => {}
        }
    }

    // Decoding.
    let limit = limit.map(|v| parse_integer("limit", v)).transpose()?;
    let offset = offset.map(|v| parse_integer("offset", v)).transpose()?;
    let deleted = match deleted {
        None => false,
        Some(v) => {
            parse_bool(v).ok_or_else(|| ListError::InvalidParam(format!("deleted must be true or false, not '{v}'")))?
        }
    };
    let json_filters = json_filters
        .into_iter()
        .filter(|text| !text.trim().is_empty())
        .map(|text| serde_json::from_str::<Value>(text).map_err(|e| ListError::Undecodable(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;

    // Validation.
    let limit = match limit {
        None => DEFAULT_LIMIT,
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| ListError::OutOfRange(format!("limit must be between 1 and {MAX_LIMIT}")))?,
    };
    let offset = match offset {
        None => 0,
        Some(n) => usize::try_from(n).map_err(|_| ListError::OutOfRange("offset must be 0 or greater".to_owned()))?,
    };
    let mut filters = Vec::new();
    for decoded in &json_filters {
        let Value::Object(clauses) = decoded else {
            return Err(ListError::InvalidFilter("filter must be a JSON object".to_owned()));
        };
        for (name, value) in clauses {
            filters.extend(filter::interpret(spec, name, value)?);
        }
    }
    for (name, value) in filter::bracket_clauses(&bracket_filters)? {
        filters.extend(filter::interpret(spec, &name, &value)?);
    }
    let (sort, sort_is_default) = parse_sort(sort, spec)?;

    Ok(ListQuery {
        limit,
        offset,
        deleted,
        filters,
        sort,
        sort_is_default,
        indexed: spec.indexed,
        keyset_paged: spec.keyset,
        sort_kind: spec.kind_of(sort.0, FieldKind::Text),
        id_field: spec.id_field,
        id_kind: spec.kind_of(spec.id_field, FieldKind::Id),
    })
}

impl ListQuery {
    /// Whether `record` meets every filter. Does not look at the deleted flag.
    pub fn matches(&self, record: &Map<String, Value>) -> bool {
        self.filters.iter().all(|filter| filter.matches(record))
    }

    /// Orders two records by the sort field, ties broken by the ID field, both
    /// in the sort's direction. Missing/null values come first ascending.
    pub fn cmp(&self, a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
        let order = compare_field(a, b, self.sort.0, self.sort_kind)
            .then_with(|| compare_field(a, b, self.id_field, self.id_kind));
        match self.sort.1 {
            Dir::Asc => order,
            Dir::Desc => order.reverse(),
        }
    }

    /// Whether the query has any filter.
    pub fn has_filters(&self) -> bool {
        !self.filters.is_empty()
    }

    /// Part 1's keyset page, on a list that has it ([`ListSpec::keyset`]): sorted ascending
    /// by the indexed field from offset 0, its only filter a lower bound on that field.
    /// Answers the bound as the index writes it (microsecond width) and whether it is
    /// inclusive.
    pub fn keyset(&self) -> Option<(String, bool)> {
        if !self.keyset_paged || self.sort != (self.indexed, Dir::Asc) || self.offset != 0 || self.filters.len() != 1 {
            return None;
        }
        let f = &self.filters[0];
        match &f.predicate {
            Predicate::Range {
                min:
                    Some(Bound {
                        value: Operand::Date(v),
                        inclusive,
                    }),
                max: None,
            } if f.field == self.indexed => {
                let (seconds, fraction) = v.split_once('.').unwrap_or((v, ""));
                Some((format!("{seconds}.{fraction:0<6}"), *inclusive))
            }
            _ => None,
        }
    }

    /// Checks `offset` against the number of matching records: it must be
    /// below `total`, so an empty result rejects even offset 0.
    pub fn check_offset(&self, total: usize) -> Result<(), ListError> {
        if self.offset < total {
            Ok(())
        } else {
            Err(ListError::OutOfRange(format!(
                "offset must be less than the total record count ({total})"
            )))
        }
    }
}

/// Compares one field of two records; missing/null first.
fn compare_field(a: &Map<String, Value>, b: &Map<String, Value>, name: &str, kind: FieldKind) -> Ordering {
    let read = |record: &Map<String, Value>| record.get(name).and_then(|v| Operand::from_record(kind, v));
    match (read(a), read(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (x, y) => x.is_some().cmp(&y.is_some()),
    }
}

/// Parses an integer (optional sign, digits, surrounding spaces allowed).
/// One too large for `i64` saturates, so it fails the range check instead.
fn parse_integer(param: &'static str, text: &str) -> Result<i64, ListError> {
    let text = text.trim();
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ListError::NotInteger(param));
    }
    let saturated = if text.starts_with('-') { i64::MIN } else { i64::MAX };
    Ok(text.parse().unwrap_or(saturated))
}

/// `true`/`false` (any case) or `1`/`0`.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "1" => Some(true),
        "0" => Some(false),
        t if t.eq_ignore_ascii_case("true") => Some(true),
        t if t.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// Resolves `sort` (`field:asc`/`field:desc`); returns the sort and whether
/// it is the default.
fn parse_sort(raw: Option<&str>, spec: &ListSpec) -> Result<((&'static str, Dir), bool), ListError> {
    let default = Ok((spec.default_sort, true));
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return default;
    };
    let Some((name, dir)) = raw.split_once(':') else {
        return Err(ListError::InvalidParam(format!(
            "sort must be field:asc or field:desc, not '{raw}'"
        )));
    };
    let dir = dir.trim();
    let dir = if dir.eq_ignore_ascii_case("asc") {
        Some(Dir::Asc)
    } else if dir.eq_ignore_ascii_case("desc") {
        Some(Dir::Desc)
    } else {
        None
    };
    match (spec.field(name.trim()), dir) {
        (Some(field), Some(dir)) => Ok(((field.name, dir), false)),
        (Some(_), None) => Err(ListError::InvalidParam(format!(
            "sort direction must be asc or desc, in '{raw}'"
        ))),
        (None, _) if spec.sort_fallback => default,
        (None, _) => Err(ListError::InvalidParam(format!("unknown sort field '{}'", name.trim()))),
    }
}
