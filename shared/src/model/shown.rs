//! A record's public view serialized straight from the record: its stored fields without
//! the internal ones, some masked, then its archive status, written in one pass. List pages
//! render ten records of some sixty fields each, and building a JSON tree of every record
//! first cost most of their CPU.

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::auth::PiiLevel;
use crate::mask::REDACTED;

/// The view of `rec` (see the module).
pub struct Shown<'a, T> {
    pub rec: &'a T,
    /// Stored fields the view leaves out.
    pub hide: &'a [&'a str],
    /// The archive status, after the fields: its key and whether the record is archived.
    pub status: Option<(&'a str, bool)>,
    pub mask: Option<Mask<'a>>,
}

/// Fields shown as `REDACTED`: `always` these when set, and below `High` every field not in
/// `base`, set or not (CONTRACT: "every other field as `REDACTED`"; an empty one would tell a
/// low-PII key which sensitive fields are filled in).
#[derive(Clone, Copy)]
pub struct Mask<'a> {
    pub always: &'a [&'a str],
    pub base: &'a [&'a str],
    pub pii: PiiLevel,
}

/// How a field is masked.
#[derive(PartialEq)]
enum Masked {
    No,
    WhenSet,
    Always,
}

impl Mask<'_> {
    fn masks(&self, key: &str) -> Masked {
        if self.pii < PiiLevel::High && !self.base.contains(&key) {
            Masked::Always
        } else if self.always.contains(&key) {
            Masked::WhenSet
        } else {
            Masked::No
        }
    }
}

impl<T: Serialize> Serialize for Shown<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.rec.serialize(Filter {
            inner: serializer,
            view: self,
        })
    }
}

/// Writes one field of the view: skipped, masked or as stored.
fn entry<M: SerializeMap, T: Serialize, V: Serialize + ?Sized>(
    map: &mut M,
    view: &Shown<'_, T>,
    key: &str,
    value: &V,
) -> Result<(), M::Error> {
    if view.hide.contains(&key) {
        return Ok(());
    }
    match view.mask.map_or(Masked::No, |m| m.masks(key)) {
        Masked::No => {}
        Masked::Always => return map.serialize_entry(key, REDACTED),
        Masked::WhenSet => {
            let stored = serde_json::to_value(value).map_err(ser::Error::custom)?;
            if !(stored.is_null() || stored.as_str() == Some("")) {
                return map.serialize_entry(key, REDACTED);
            }
        }
    }
    map.serialize_entry(key, value)
}

/// Ends the view: the archive status after the fields.
fn finish<M: SerializeMap, T>(mut map: M, view: &Shown<'_, T>) -> Result<M::Ok, M::Error> {
    if let Some((key, archived)) = view.status {
        map.serialize_entry(key, if archived { "Archived" } else { "Active" })?;
    }
    map.end()
}

/// A serializer that passes a record's struct (or the map a flattened struct becomes) to
/// `inner` as a map, field by field through [`entry`].
struct Filter<'a, 'v, S, T> {
    inner: S,
    view: &'v Shown<'a, T>,
}

struct Fields<'a, 'v, M, T> {
    map: M,
    view: &'v Shown<'a, T>,
    key: Option<String>,
}

fn not_a_record<E: ser::Error>() -> E {
    E::custom("a view is made of a record's struct")
}

impl<M: SerializeMap, T: Serialize> SerializeStruct for Fields<'_, '_, M, T> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<V: Serialize + ?Sized>(&mut self, key: &'static str, value: &V) -> Result<(), M::Error> {
        entry(&mut self.map, self.view, key, value)
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        finish(self.map, self.view)
    }
}

impl<M: SerializeMap, T: Serialize> SerializeMap for Fields<'_, '_, M, T> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), M::Error> {
        match serde_json::to_value(key) {
            Ok(serde_json::Value::String(k)) => {
                self.key = Some(k);
                Ok(())
            }
            _ => Err(not_a_record()),
        }
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), M::Error> {
        let key = self.key.take().ok_or_else(not_a_record)?;
        entry(&mut self.map, self.view, &key, value)
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        finish(self.map, self.view)
    }
}

macro_rules! refuse {
    ($($name:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $arg),*) -> Result<S::Ok, S::Error> {
            Err(not_a_record())
        })*
    };
}

impl<'a, 'v, S: Serializer, T: Serialize> Serializer for Filter<'a, 'v, S, T> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Fields<'a, 'v, S::SerializeMap, T>;
    type SerializeStruct = Fields<'a, 'v, S::SerializeMap, T>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, S::Error> {
        self.serialize_map(None)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(Fields {
            map: self.inner.serialize_map(None)?,
            view: self.view,
            key: None,
        })
    }

    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<S::Ok, S::Error> {
        Err(not_a_record())
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(self, _: &'static str, _: &V) -> Result<S::Ok, S::Error> {
        Err(not_a_record())
    }

    fn serialize_newtype_variant<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<S::Ok, S::Error> {
        Err(not_a_record())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_a_record())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_a_record())
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_a_record())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_a_record())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(not_a_record())
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Rec {
        id: String,
        ssn: String,
        dob: String,
        name: String,
        total: Option<i64>,
        deleted: bool,
        #[serde(flatten)]
        stamps: Stamps,
    }

    #[derive(Serialize)]
    struct Stamps {
        #[serde(rename = "createdDate")]
        created: String,
        #[serde(rename = "createdIp")]
        ip: String,
    }

    fn rec() -> Rec {
        Rec {
            id: "P1".into(),
            ssn: "123-45-6789".into(),
            dob: String::new(),
            name: "Ann".into(),
            total: None,
            deleted: false,
            stamps: Stamps {
                created: "2026-01-02".into(),
                ip: "10.0.0.1".into(),
            },
        }
    }

    fn shown(r: &Rec, pii: PiiLevel) -> String {
        serde_json::to_string(&Shown {
            rec: r,
            hide: &["deleted", "createdIp"],
            status: Some(("status", true)),
            mask: Some(Mask {
                always: &["ssn", "dob"],
                base: &["id", "createdDate", "status"],
                pii,
            }),
        })
        .unwrap()
    }

    #[test]
    fn hides_masks_set_fields_and_ends_with_the_status_in_field_order() {
        let r = rec();
        let high = shown(&r, PiiLevel::High);
        assert_eq!(
            high,
            r#"{"id":"P1","ssn":"REDACTED","dob":"","name":"Ann","total":null,"createdDate":"2026-01-02","status":"Archived"}"#
        );
        let low: serde_json::Value = serde_json::from_str(&shown(&r, PiiLevel::Low)).unwrap();
        assert_eq!(
            low,
            json!({"id": "P1", "ssn": "REDACTED", "dob": "REDACTED", "name": "REDACTED", "total": "REDACTED",
                   "createdDate": "2026-01-02", "status": "Archived"})
        );
    }

    #[test]
    fn matches_the_json_tree_it_replaces() {
        let r = rec();
        let view = Shown {
            rec: &r,
            hide: &["deleted"],
            status: None,
            mask: None,
        };
        let mut tree = serde_json::to_value(&r).unwrap();
        tree.as_object_mut().unwrap().shift_remove("deleted");
        assert_eq!(serde_json::to_string(&view).unwrap(), tree.to_string());
    }

    #[test]
    fn refuses_what_is_not_a_record() {
        let view = Shown {
            rec: &"text",
            hide: &[],
            status: None,
            mask: None,
        };
        assert!(serde_json::to_string(&view).is_err());
    }
}
