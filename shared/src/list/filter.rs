//! Typed filters: turning decoded filter clauses (JSON form or bracket form)
//! into [`Filter`] values, and evaluating them against records.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use super::{FieldKind, FieldSpec, ListError, ListSpec};

/// The canonical date/time form every date operand is converted to.
const DATE_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// Operators accepted in the operator form (`{"field":{"op":value}}` or
/// `filter[field][op]=value`), including the range keys.
pub(super) const OPERATORS: [&str; 14] = [
    "eq",
    "ne",
    "gt",
    "gte",
    "lt",
    "lte",
    "in",
    "nin",
    "like",
    "between",
    "min",
    "max",
    "min_inclusive",
    "max_inclusive",
];

/// The only operators allowed on resources flagged `equality_only`.
pub(super) const EQUALITY_OPERATORS: [&str; 2] = ["eq", "in"];

/// One condition on one field; a query's filters are combined with AND.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The field tested (always one of the resource's [`FieldSpec`]s).
    pub field: &'static str,
    /// How the field's values are compared.
    pub kind: FieldKind,
    /// The condition.
    pub predicate: Predicate,
}

/// A condition with typed operands.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// Equal to one of the operands (exact match, list, `eq`, `in`).
    In(Vec<Operand>),
    /// Equal to none of the operands (`ne`, `nin`); a missing or null value matches.
    NotIn(Vec<Operand>),
    /// Within the bounds (range form, `gt`, `gte`, `lt`, `lte`, `between`);
    /// an absent bound is unbounded.
    Range {
        /// Lower bound.
        min: Option<Bound>,
        /// Upper bound.
        max: Option<Bound>,
    },
    /// SQL `LIKE`, case-insensitive, tested against the record's raw text.
    Like(LikePattern),
}

/// One end of a [`Predicate::Range`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The limit value.
    pub value: Operand,
    /// Whether a value equal to the limit is inside the range.
    pub inclusive: bool,
}

/// A typed value, from a filter or from a record, as the field's kind reads it.
///
/// Values of different classes (numbers, numeric IDs, text/dates) never
/// compare equal and never satisfy a range; for sorting, numbers come
/// before numeric IDs, which come before text and dates.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A decimal number ([`FieldKind::Number`]).
    Number(Decimal),
    /// An all-digit ID with leading zeros stripped, compared numerically
    /// at any length ([`FieldKind::Id`]).
    NumericId(String),
    /// A date/time in `YYYY-MM-DD HH:MM:SS` form, with the fraction of a second when it has
    /// one (trailing zeros dropped), compared as a string.
    Date(String),
    /// Any other text, compared byte-wise (case-sensitive).
    Text(String),
}

impl Operand {
    /// Reads a filter value for a field of `kind`; errors describe a bad value.
    /// An empty value selects records where the field is empty, whatever its kind; an ID
    /// written as an integral decimal (`100001.0`, `1.00001e5`) is that number (CONTRACT:
    /// numeric IDs compare as numbers).
    pub(crate) fn from_filter(kind: FieldKind, value: &Value) -> Result<Self, String> {
        let text = record_text(value).ok_or_else(|| format!("value {value} must be a string or a number"))?;
        if text.trim().is_empty() {
            return Ok(Operand::Text(String::new()));
        }
        match kind {
            FieldKind::Text => Ok(Operand::Text(text.into_owned())),
            FieldKind::Number => parse_decimal(&text)
                .map(Operand::Number)
                .ok_or_else(|| format!("'{text}' is not a number")),
            FieldKind::Date => normalize_date(&text)
                .map(Operand::Date)
                .ok_or_else(|| format!("'{text}' is not a recognised date")),
            FieldKind::Id => Ok(
                match parse_decimal(&text).filter(|n| n.is_integer() && !n.is_sign_negative()) {
                    Some(n) => id_operand(&n.normalize().to_string()),
                    None => id_operand(&text),
                },
            ),
        }
    }

    /// Reads a record value for a field of `kind`; `None` for null and for
    /// values that are not strings, numbers or booleans. Never fails: a value
    /// that does not fit the kind becomes [`Operand::Text`].
    pub(crate) fn from_record(kind: FieldKind, value: &Value) -> Option<Self> {
        let text = record_text(value)?;
        Some(match kind {
            FieldKind::Text => Operand::Text(text.into_owned()),
            FieldKind::Number => match parse_decimal(&text) {
                Some(number) => Operand::Number(number),
                None => Operand::Text(text.into_owned()),
            },
            FieldKind::Date if is_canonical_date(&text) => Operand::Date(text.into_owned()),
            FieldKind::Date => match normalize_date(&text) {
                Some(date) => Operand::Date(date),
                None => Operand::Text(text.into_owned()),
            },
            FieldKind::Id => id_operand(&text),
        })
    }

    /// Rank of the value's class, for [`Operand::total_cmp`].
    fn class(&self) -> u8 {
        match self {
            Operand::Number(_) => 0,
            Operand::NumericId(_) => 1,
            Operand::Date(_) | Operand::Text(_) => 2,
        }
    }

    /// Compares two values of the same class; `None` across classes.
    pub fn compare(&self, other: &Operand) -> Option<Ordering> {
        match (self, other) {
            (Operand::Number(a), Operand::Number(b)) => Some(a.cmp(b)),
            (Operand::NumericId(a), Operand::NumericId(b)) => Some(a.len().cmp(&b.len()).then_with(|| a.cmp(b))),
            (Operand::Date(a) | Operand::Text(a), Operand::Date(b) | Operand::Text(b)) => {
                Some(a.as_bytes().cmp(b.as_bytes()))
            }
            _ => None,
        }
    }

    /// A total order for sorting: by class, then by [`Operand::compare`].
    pub fn total_cmp(&self, other: &Operand) -> Ordering {
        self.compare(other).unwrap_or_else(|| self.class().cmp(&other.class()))
    }
}

/// A compiled SQL `LIKE` pattern: `%` matches any run of characters, `_`
/// exactly one, `\` makes the next character literal. Matching ignores case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikePattern {
    tokens: Vec<LikeToken>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LikeToken {
    Literal(char),
    AnyOne,
    AnyRun,
}

impl LikePattern {
    /// Compiles a pattern.
    pub fn new(pattern: &str) -> Self {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            match c {
                '%' => tokens.push(LikeToken::AnyRun),
                '_' => tokens.push(LikeToken::AnyOne),
                '\\' => {
                    let literal = chars.next().unwrap_or('\\');
                    tokens.extend(literal.to_lowercase().map(LikeToken::Literal));
                }
                _ => tokens.extend(c.to_lowercase().map(LikeToken::Literal)),
            }
        }
        LikePattern { tokens }
    }

    /// Whether `text` matches the whole pattern, ignoring case.
    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.to_lowercase().chars().collect();
        let pattern = &self.tokens;
        let (mut t, mut p) = (0, 0);
        // Where to resume after the last `%`: (pattern index after it, text index).
        let mut resume: Option<(usize, usize)> = None;
        while t < text.len() {
            match pattern.get(p) {
                Some(LikeToken::AnyRun) => {
                    p += 1;
                    resume = Some((p, t));
                }
                Some(LikeToken::AnyOne) => {
                    p += 1;
                    t += 1;
                }
                Some(LikeToken::Literal(c)) if *c == text[t] => {
                    p += 1;
                    t += 1;
                }
                _ => match resume {
                    Some((after_run, start)) => {
                        p = after_run;
                        t = start + 1;
                        resume = Some((after_run, start + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|token| *token == LikeToken::AnyRun)
    }
}

impl Filter {
    /// Whether `record` satisfies this filter. A missing or null field never
    /// matches a comparison, but does match [`Predicate::NotIn`].
    pub fn matches(&self, record: &Map<String, Value>) -> bool {
        let raw = record.get(self.field);
        let value = || raw.and_then(|v| Operand::from_record(self.kind, v));
        let equals_any = |v: &Operand, ops: &[Operand]| ops.iter().any(|o| v.compare(o) == Some(Ordering::Equal));
        match &self.predicate {
            Predicate::In(ops) => value().is_some_and(|v| equals_any(&v, ops)),
            Predicate::NotIn(ops) => !value().is_some_and(|v| equals_any(&v, ops)),
            Predicate::Range { min, max } => value().is_some_and(|v| {
                let above = min.as_ref().is_none_or(|b| b.admits(&v, Ordering::Greater));
                let below = max.as_ref().is_none_or(|b| b.admits(&v, Ordering::Less));
                above && below
            }),
            Predicate::Like(pattern) => raw.and_then(record_text).is_some_and(|text| pattern.matches(&text)),
        }
    }
}

impl Bound {
    /// Whether `value` lies on the `inside` side of this bound (or on it, if inclusive).
    fn admits(&self, value: &Operand, inside: Ordering) -> bool {
        match value.compare(&self.value) {
            Some(Ordering::Equal) => self.inclusive,
            Some(order) => order == inside,
            None => false,
        }
    }
}

/// Interprets one decoded clause `field: value` (a scalar for exact match, an
/// array for IN, an object of operators) into filters to be ANDed.
pub(crate) fn interpret(spec: &ListSpec, name: &str, value: &Value) -> Result<Vec<Filter>, ListError> {
    let field = spec
        .field(name)
        .ok_or_else(|| invalid(format!("unknown field '{name}'")))?;
    let filter = |predicate| Filter {
        field: field.name,
        kind: field.kind,
        predicate,
    };
    match value {
        Value::Object(ops) => interpret_operators(&field, ops, spec.equality_only),
        Value::Array(_) => Ok(vec![filter(Predicate::In(operand_list(&field, value)?))]),
        scalar => Ok(vec![filter(Predicate::In(vec![operand(&field, scalar)?]))]),
    }
}

/// Interprets an operator object; range keys (`min`, `max`, `*_inclusive`)
/// combine into one range, every other operator is its own filter.
fn interpret_operators(
    field: &FieldSpec,
    ops: &Map<String, Value>,
    equality_only: bool,
) -> Result<Vec<Filter>, ListError> {
    let name = field.name;
    if ops.is_empty() {
        return Err(invalid(format!("field '{name}': empty operator object")));
    }
    let mut filters = Vec::new();
    let (mut min, mut max) = (None, None);
    let (mut min_inclusive, mut max_inclusive) = (None, None);
    for (op, value) in ops {
        if !OPERATORS.contains(&op.as_str()) {
            return Err(invalid(format!("field '{name}': unknown operator '{op}'")));
        }
        if equality_only && !EQUALITY_OPERATORS.contains(&op.as_str()) {
            return Err(invalid(format!(
                "field '{name}': operator '{op}' is not supported here (only exact match and lists)"
            )));
        }
        let bound = |inclusive| -> Result<Option<Bound>, ListError> {
            Ok(Some(Bound {
                value: operand(field, value)?,
                inclusive,
            }))
        };
        let predicate = match op.as_str() {
            "eq" => Predicate::In(vec![operand(field, value)?]),
            "ne" => Predicate::NotIn(vec![operand(field, value)?]),
            "in" => Predicate::In(operand_list(field, value)?),
            "nin" => Predicate::NotIn(operand_list(field, value)?),
            "gt" => Predicate::Range {
                min: bound(false)?,
                max: None,
            },
            "gte" => Predicate::Range {
                min: bound(true)?,
                max: None,
            },
            "lt" => Predicate::Range {
                min: None,
                max: bound(false)?,
            },
            "lte" => Predicate::Range {
                min: None,
                max: bound(true)?,
            },
            "between" => match value.as_array().map(Vec::as_slice) {
                Some([low, high]) => Predicate::Range {
                    min: Some(Bound {
                        value: operand(field, low)?,
                        inclusive: true,
                    }),
                    max: Some(Bound {
                        value: operand(field, high)?,
                        inclusive: true,
                    }),
                },
                _ => {
                    return Err(invalid(format!(
                        "field '{name}': 'between' needs an array of two values"
                    )))
                }
            },
            "like" => match scalar_text(value) {
                Some(pattern) => Predicate::Like(LikePattern::new(&pattern)),
                None => return Err(invalid(format!("field '{name}': 'like' needs a string pattern"))),
            },
            "min" => {
                min = Some(operand(field, value)?);
                continue;
            }
            "max" => {
                max = Some(operand(field, value)?);
                continue;
            }
            "min_inclusive" => {
                min_inclusive = Some(flag(field, op, value)?);
                continue;
            }
            "max_inclusive" => {
                max_inclusive = Some(flag(field, op, value)?);
                continue;
            }
            _ => return Err(invalid(format!("field '{name}': unknown operator '{op}'"))),
        };
        filters.push(Filter {
            field: name,
            kind: field.kind,
            predicate,
        });
    }
    if min.is_some() || max.is_some() {
        let bound = |value, inclusive: Option<bool>| Bound {
            value,
            inclusive: inclusive.unwrap_or(true),
        };
        filters.push(Filter {
            field: name,
            kind: field.kind,
            predicate: Predicate::Range {
                min: min.map(|v| bound(v, min_inclusive)),
                max: max.map(|v| bound(v, max_inclusive)),
            },
        });
    } else if min_inclusive.is_some() || max_inclusive.is_some() {
        return Err(invalid(format!(
            "field '{name}': min_inclusive/max_inclusive given without min or max"
        )));
    }
    Ok(filters)
}

/// Collects bracket-form pairs (`filter[f]`, `filter[f][]`, `filter[f][op]`,
/// `filter[f][op][]`) into decoded clauses, in order of first appearance.
/// Repeated `filter[f]`/`filter[f][]` values become a list (IN); a repeated
/// `filter[f][op]` becomes an array operand (valid only for `in`/`nin`).
pub(crate) fn bracket_clauses(pairs: &[(&str, &str)]) -> Result<Vec<(String, Value)>, ListError> {
    struct Clause {
        field: String,
        values: Vec<Value>,
        ops: Map<String, Value>,
    }
    let mut clauses: Vec<Clause> = Vec::new();
    for (key, value) in pairs {
        let segments = bracket_segments(key).ok_or_else(|| invalid(format!("malformed filter parameter '{key}'")))?;
        let (field, rest) = match segments.split_first() {
            Some((field, rest)) if !field.is_empty() => (*field, rest),
            _ => return Err(invalid(format!("malformed filter parameter '{key}'"))),
        };
        let index = match clauses.iter().position(|c| c.field == field) {
            Some(index) => index,
            None => {
                clauses.push(Clause {
                    field: field.to_owned(),
                    values: Vec::new(),
                    ops: Map::new(),
                });
                clauses.len() - 1
            }
        };
        let clause = &mut clauses[index];
        let value = Value::String((*value).to_owned());
        match rest {
            [] | [""] => clause.values.push(value),
            [op] | [op, ""] if !op.is_empty() => {
                let list = rest.len() == 2;
                match clause.ops.get_mut(*op) {
                    Some(Value::Array(items)) => items.push(value),
                    Some(existing) => *existing = Value::Array(vec![existing.take(), value]),
                    None if list => {
                        clause.ops.insert((*op).to_owned(), Value::Array(vec![value]));
                    }
                    None => {
                        clause.ops.insert((*op).to_owned(), value);
                    }
                }
            }
            _ => return Err(invalid(format!("malformed filter parameter '{key}'"))),
        }
    }
    let mut out = Vec::new();
    for Clause { field, mut values, ops } in clauses {
        match values.len() {
            0 => {}
            1 => out.push((field.clone(), values.remove(0))),
            _ => out.push((field.clone(), Value::Array(values))),
        }
        if !ops.is_empty() {
            out.push((field, Value::Object(ops)));
        }
    }
    Ok(out)
}

/// Splits `filter[a][b]` into `["a", "b"]`; `None` unless the key is exactly
/// `filter` followed by one or more bracketed segments.
fn bracket_segments(key: &str) -> Option<Vec<&str>> {
    let mut rest = key.strip_prefix("filter")?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        let (segment, after) = rest.strip_prefix('[')?.split_once(']')?;
        segments.push(segment);
        rest = after;
    }
    (!segments.is_empty()).then_some(segments)
}

/// Converts a date/time to `YYYY-MM-DD HH:MM:SS`, followed by its fraction of a second
/// when it has one, to the microsecond and without trailing zeros (`.5`), so that the
/// forms compare as strings in time order (`...:06` < `...:06.5` < `...:07`). Accepts
/// `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` (with an optional fraction, as ATS `executionTime`
/// is written), `MM-DD-YYYY`, and ISO 8601 (`T` separator, optional fraction, optional
/// offset; with an offset the result is in UTC).
pub fn normalize_date(text: &str) -> Option<String> {
    let text = text.trim();
    let naive = NaiveDateTime::parse_from_str(text, DATE_FORMAT)
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f"))
        .or_else(|_| NaiveDate::parse_from_str(text, "%Y-%m-%d").map(midnight))
        .or_else(|_| NaiveDate::parse_from_str(text, "%m-%d-%Y").map(midnight))
        .or_else(|_| DateTime::parse_from_rfc3339(text).map(|t| t.naive_utc()))
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f%z").map(|t| t.naive_utc()))
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()?;
    let mut out = naive.format(DATE_FORMAT).to_string();
    let micros = naive.and_utc().timestamp_subsec_micros();
    if micros > 0 {
        out.push_str(format!(".{micros:06}").trim_end_matches('0'));
    }
    Some(out)
}

fn midnight(date: NaiveDate) -> NaiveDateTime {
    date.and_time(chrono::NaiveTime::MIN)
}

/// Whether `text` already has the `YYYY-MM-DD HH:MM:SS` shape (a fast path
/// for record values; the shape alone is enough to compare them as strings).
fn is_canonical_date(text: &str) -> bool {
    text.len() == 19
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b' ',
            13 | 16 => b == b':',
            _ => b.is_ascii_digit(),
        })
}

/// Parses a plain decimal number (optional sign, digits, optional fraction,
/// optional exponent); `None` for anything else, including `1_000`.
fn parse_decimal(text: &str) -> Option<Decimal> {
    let text = text.trim();
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    if !plain {
        return None;
    }
    Decimal::from_str(text).or_else(|_| Decimal::from_scientific(text)).ok()
}

/// An ID operand: all digits compare numerically, anything else as text.
fn id_operand(text: &str) -> Operand {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let digits = text.trim_start_matches('0');
        Operand::NumericId(if digits.is_empty() { "0" } else { digits }.to_owned())
    } else {
        Operand::Text(text.to_owned())
    }
}

/// The text of a filter scalar (string or number).
fn scalar_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        _ => None,
    }
}

/// The text of a record value (string, number or boolean).
fn record_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::Bool(b) => Some(Cow::Owned(b.to_string())),
        other => scalar_text(other),
    }
}

fn operand(field: &FieldSpec, value: &Value) -> Result<Operand, ListError> {
    Operand::from_filter(field.kind, value).map_err(|e| invalid(format!("field '{}': {e}", field.name)))
}

/// A non-empty list operand; a single scalar counts as a one-item list.
fn operand_list(field: &FieldSpec, value: &Value) -> Result<Vec<Operand>, ListError> {
    match value {
        Value::Array(items) if items.is_empty() => Err(invalid(format!("field '{}': empty list", field.name))),
        Value::Array(items) => items.iter().map(|item| operand(field, item)).collect(),
        scalar => Ok(vec![operand(field, scalar)?]),
    }
}

/// An inclusive flag: `true`/`false` (any case), `1`/`0`, or a JSON boolean.
fn flag(field: &FieldSpec, op: &str, value: &Value) -> Result<bool, ListError> {
    let parsed = match value {
        Value::Bool(b) => Some(*b),
        other => scalar_text(other).and_then(|text| super::parse_bool(&text)),
    };
    parsed.ok_or_else(|| invalid(format!("field '{}': '{op}' must be true or false", field.name)))
}

fn invalid(detail: String) -> ListError {
    ListError::InvalidFilter(detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_wildcards_case_and_escapes() {
        let like = |p: &str, t: &str| LikePattern::new(p).matches(t);
        assert!(like("abc", "ABC"));
        assert!(like("a%", "apple"));
        assert!(like("%le", "apple"));
        assert!(like("%pp%", "apple"));
        assert!(like("%", ""));
        assert!(like("a_ple", "apple"));
        assert!(!like("a_ple", "aple"));
        assert!(!like("a_", "a"));
        assert!(like("a%b%c", "axxbyyc"));
        assert!(!like("a%b%c", "axxbyy"));
        assert!(like("%a%a%a%", "banana"));
        assert!(!like("abc", "abcd"));
        assert!(!like("", "a"));
        assert!(like("", ""));
        assert!(like("100\\%", "100%"));
        assert!(!like("100\\%", "1000"));
        assert!(like("a\\_b", "a_b"));
        assert!(!like("a\\_b", "axb"));
        assert!(like("ÉCOLE%", "école primaire"));
        assert!(like("x\\", "x\\"));
    }

    #[test]
    fn dates_normalize_from_every_accepted_form() {
        let n = |s: &str| normalize_date(s);
        assert_eq!(n("2024-05-01").as_deref(), Some("2024-05-01 00:00:00"));
        assert_eq!(n("2024-05-01 13:14:15").as_deref(), Some("2024-05-01 13:14:15"));
        assert_eq!(n("05-01-2024").as_deref(), Some("2024-05-01 00:00:00"));
        assert_eq!(n("2024-05-01T10:00:00+02:00").as_deref(), Some("2024-05-01 08:00:00"));
        assert_eq!(n("2024-05-01T01:00:00+02:00").as_deref(), Some("2024-04-30 23:00:00"));
        assert_eq!(n("2024-05-01T10:00:00Z").as_deref(), Some("2024-05-01 10:00:00"));
        assert_eq!(
            n("2024-05-01T10:00:00.250-05:00").as_deref(),
            Some("2024-05-01 15:00:00.25"),
            "to the microsecond, trailing zeros dropped"
        );
        assert_eq!(n("2024-05-01 10:00:00.000000").as_deref(), Some("2024-05-01 10:00:00"));
        assert_eq!(
            n("2024-05-01 10:00:00.123456").as_deref(),
            Some("2024-05-01 10:00:00.123456")
        );
        assert_eq!(n("2024-05-01T10:00:00+0200").as_deref(), Some("2024-05-01 08:00:00"));
        assert_eq!(n("2024-05-01T10:00:00").as_deref(), Some("2024-05-01 10:00:00"));
        assert_eq!(n(" 2024-05-01 ").as_deref(), Some("2024-05-01 00:00:00"));
        assert_eq!(n("2024-02-30"), None);
        assert_eq!(n("2024-05-01 25:00:00"), None);
        assert_eq!(n("13-01-2024"), None);
        assert_eq!(n("yesterday"), None);
        assert_eq!(n(""), None);
    }

    #[test]
    fn canonical_date_shape() {
        assert!(is_canonical_date("2024-05-01 10:00:00"));
        assert!(!is_canonical_date("2024-05-01T10:00:00"));
        assert!(!is_canonical_date("2024-05-01"));
    }

    #[test]
    fn decimals_are_strict_and_exact() {
        for (text, exact) in [("10.50", "10.5"), (" -3 ", "-3"), ("1e3", "1000"), ("1E3", "1000")] {
            assert_eq!(parse_decimal(text), Decimal::from_str(exact).ok(), "{text}");
        }
        for refused in ["1_000", "abc", "", ".", "-", "1.2.3"] {
            assert_eq!(parse_decimal(refused), None, "{refused}");
        }
    }

    #[test]
    fn ids_compare_numerically_when_all_digits() {
        for (id, number) in [("000123", "123"), ("0", "0"), ("000", "0")] {
            assert_eq!(id_operand(id), Operand::NumericId(number.into()), "{id}");
        }
        for text in ["A100", "-5"] {
            assert_eq!(id_operand(text), Operand::Text(text.into()));
        }
        let (nine, ten) = (id_operand("9"), id_operand("10"));
        assert_eq!(nine.compare(&ten), Some(Ordering::Less));
        assert_eq!(
            id_operand("123456789012345678901234567890123").compare(&id_operand("99")),
            Some(Ordering::Greater)
        );
        assert_eq!(nine.compare(&Operand::Text("9".into())), None);
        assert_eq!(nine.total_cmp(&Operand::Text("1".into())), Ordering::Less);
    }

    #[test]
    fn bracket_keys_split_into_segments() {
        assert_eq!(bracket_segments("filter[a]"), Some(vec!["a"]));
        assert_eq!(bracket_segments("filter[a][]"), Some(vec!["a", ""]));
        assert_eq!(bracket_segments("filter[a][min]"), Some(vec!["a", "min"]));
        assert_eq!(bracket_segments("filter"), None);
        assert_eq!(bracket_segments("filter[a"), None);
        assert_eq!(bracket_segments("filter[a]x"), None);
        assert_eq!(bracket_segments("filters[a]"), None);
    }
}
