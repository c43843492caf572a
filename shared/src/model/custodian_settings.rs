//! A client's custodian settings: the wire and check instructions that
//! getCustodianDetailsforOffering answers for every offering of the client. Set by the
//! operator (`PUT /operator/clients/{clientId}/custodian-settings`); every key is present
//! in answers, empty where nothing is configured (CONTRACT.md). How they are stored:
//! [`crate::records::custodian_settings`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Wire instruction keys, in part 2's order.
pub const WIRE_KEYS: &[&str] = &[
    "description",
    "receivingbank",
    "accountnumber",
    "routingnumber",
    "reference",
    "address1",
    "address2",
    "city",
    "state",
    "zip",
    "country",
    "receivingfinancialinstitution",
    "swiftcode",
    "beneficiary",
    "beneficiaryaccountnumber",
];

/// Check instruction keys, in part 2's order.
pub const CHECK_KEYS: &[&str] = &[
    "description",
    "mailto",
    "address1",
    "address2",
    "city",
    "state",
    "zip",
    "country",
    "postaldescription",
    "postaladdress",
    "postalcity",
    "postalstate",
    "postalzip",
    "postalcountry",
];

/// The stored settings: top-level `name` and `additionaldescription`, and the `wire` and
/// `check` objects, each holding only the keys of [`WIRE_KEYS`] / [`CHECK_KEYS`] that were set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CustodianSettings {
    pub name: String,
    pub additionaldescription: String,
    pub wire: Map<String, Value>,
    pub check: Map<String, Value>,
}

impl CustodianSettings {
    /// Settings from an operator body `{"name", "additionaldescription", "wire": {...},
    /// "check": {...}}`: every key optional, every value a string; an unknown key is an error.
    pub fn parse(top: &Map<String, Value>) -> Result<CustodianSettings, String> {
        let text = |k: &str, v: &Value| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Null => Ok(String::new()),
            _ => Err(format!("{k} must be a string")),
        };
        let section = |name: &str, v: &Value, keys: &[&str]| -> Result<Map<String, Value>, String> {
            let Value::Object(m) = v else {
                return Err(format!("{name} must be an object"));
            };
            let mut out = Map::new();
            for (k, v) in m {
                if !keys.contains(&k.as_str()) {
                    return Err(format!("unknown key {name}.{k}"));
                }
                out.insert(k.clone(), Value::String(text(&format!("{name}.{k}"), v)?));
            }
            Ok(out)
        };
        let mut s = CustodianSettings::default();
        for (k, v) in top {
            match k.as_str() {
                "name" => s.name = text(k, v)?,
                "additionaldescription" => s.additionaldescription = text(k, v)?,
                "wire" => s.wire = section("wire", v, WIRE_KEYS)?,
                "check" => s.check = section("check", v, CHECK_KEYS)?,
                other => return Err(format!("unknown key {other}")),
            }
        }
        Ok(s)
    }

    /// The `custodianDetails` object: every documented key, empty strings where unset.
    pub fn details(&self) -> Value {
        let section = |m: &Map<String, Value>, keys: &[&str]| -> Value {
            Value::Object(
                keys.iter()
                    .map(|k| ((*k).to_owned(), m.get(*k).cloned().unwrap_or_else(|| Value::from(""))))
                    .collect(),
            )
        };
        let mut out = Map::new();
        out.insert("name".into(), self.name.clone().into());
        out.insert(
            "additionaldescription".into(),
            self.additionaldescription.clone().into(),
        );
        out.insert("wire".into(), section(&self.wire, WIRE_KEYS));
        out.insert("check".into(), section(&self.check, CHECK_KEYS));
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_strictly_and_answer_every_key() {
        let object = |v: Value| v.as_object().cloned().expect("an object");
        let s =
            CustodianSettings::parse(&object(serde_json::json!({"name": "C", "wire": {"swiftcode": "ABC"}}))).unwrap();
        let d = s.details();
        assert_eq!(d["name"], "C");
        assert_eq!(d["wire"]["swiftcode"], "ABC");
        assert_eq!(d["wire"]["accountnumber"], "");
        assert_eq!(d["check"].as_object().unwrap().len(), CHECK_KEYS.len());
        for bad in [
            serde_json::json!({"ach": {}}),
            serde_json::json!({"wire": {"ach": "x"}}),
            serde_json::json!({"wire": "x"}),
            serde_json::json!({"name": 5}),
        ] {
            assert!(CustodianSettings::parse(&object(bad.clone())).is_err(), "{bad}");
        }
    }
}
