//! JSON into the object types, read the way Go's `encoding/json` reads
//! Kube-OVN's structs: unknown keys are skipped and an absent key leaves the
//! field's `Default` (each type says `#[serde(default)]`), and `null` is the
//! zero value of whatever was asked for (empty string, `false`, `0`, empty
//! list or map, `None`), where serde alone would refuse it. A value of
//! another JSON type is an error naming its path:
//! `spec.cidrBlock: invalid type: integer `5`, expected a string at line 1 column 30`.
//!
//! Where it still differs from Go (exact key matching, a repeated key
//! refused, invalid UTF-8 refused): `docs/differences.md`. None of it arises
//! in what the API server sends.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A value kept as its JSON text, borrowed from the input.
pub type Raw<'a> = &'a serde_json::value::RawValue;

/// Why a text did not decode: serde_json's reason, after the path of the
/// value at fault when it is a value's type or content that is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decodes one JSON text (whitespace around it only) as `T`.
pub fn from_slice<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, Error> {
    from_slice_seed(bytes, std::marker::PhantomData::<T>)
}

/// Decodes one JSON text (whitespace around it only) with a seed, as
/// [`from_slice`] decodes a type.
pub fn from_slice_seed<'a, S: DeserializeSeed<'a>>(
    bytes: &'a [u8],
    seed: S,
) -> Result<S::Value, Error> {
    let mut json = serde_json::Deserializer::from_slice(bytes);
    seed.deserialize(GoNull(&mut json))
        .and_then(|value| json.end().map(|()| value))
        .map_err(|e| explain(bytes, e))
}

/// Decodes a JSON text as `T`.
pub fn from_str<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, Error> {
    from_slice(text.as_bytes())
}

/// Whether a JSON text is `null`.
pub fn is_null(bytes: &[u8]) -> bool {
    bytes.trim_ascii() == b"null"
}

/// The message of a failed decoding: a value of the wrong type or content
/// is named by its path, found by scanning the text up to where serde_json
/// stopped (nothing is tracked while decoding, so a decoding that succeeds
/// pays nothing for it).
fn explain(bytes: &[u8], error: serde_json::Error) -> Error {
    if !error.is_data() || error.line() == 0 {
        return Error(error.to_string());
    }
    let line_start = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(error.line() - 1)
        .map(<[u8]>::len)
        .sum::<usize>();
    match path_at(bytes, line_start + error.column().saturating_sub(1)) {
        path if path.is_empty() => Error(error.to_string()),
        path => Error(format!("{path}: {error}")),
    }
}

/// The path (`items[0].spec.ipAddress`) of the value at a byte offset of a
/// JSON text: the keys and indices open at that point. serde_json reports a
/// list or object of the wrong type at its last byte, which closes it.
fn path_at(text: &[u8], offset: usize) -> String {
    let end = match text.get(offset) {
        Some(b'}' | b']') => offset + 1,
        _ => offset.min(text.len()),
    };
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack = Vec::new();
    let mut key_next = false;
    let mut i = 0;
    while i < end {
        match text[i] {
            b'{' => {
                stack.push(Frame::Object(None));
                key_next = true;
            }
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object(key)) => {
                    *key = None;
                    key_next = true;
                }
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i = start;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                if std::mem::take(&mut key_next)
                    && let Some(Frame::Object(key)) = stack.last_mut()
                {
                    let end = i.min(text.len());
                    *key = Some(String::from_utf8_lossy(&text[start..end]).into_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key)) if path.is_empty() => path.push_str(key),
            Frame::Object(Some(key)) => {
                path.push('.');
                path.push_str(key);
            }
            Frame::Object(None) => {}
            Frame::Array(n) => path.push_str(&format!("[{n}]")),
        }
    }
    path
}

/// The deserializer [`from_slice`] reads through: each value asked for is
/// first asked for as an option, so that a `null` gives the zero value of
/// the type rather than an error.
struct GoNull<D>(D);

/// Which `deserialize_*` method was called, with its arguments, so that it
/// can be called again on the deserializer of the value (or on [`Zero`]).
#[derive(Clone, Copy)]
enum Call {
    Bool,
    I64,
    U64,
    F64,
    Char,
    Str,
    Bytes,
    Unit,
    Seq,
    Map,
    Struct(&'static str, &'static [&'static str]),
    Newtype(&'static str),
    Enum(&'static str, &'static [&'static str]),
}

impl Call {
    fn on<'de, D: Deserializer<'de>, V: Visitor<'de>>(
        self,
        d: D,
        v: V,
    ) -> Result<V::Value, D::Error> {
        match self {
            Call::Bool => d.deserialize_bool(v),
            Call::I64 => d.deserialize_i64(v),
            Call::U64 => d.deserialize_u64(v),
            Call::F64 => d.deserialize_f64(v),
            Call::Char => d.deserialize_char(v),
            Call::Str => d.deserialize_str(v),
            Call::Bytes => d.deserialize_bytes(v),
            Call::Unit => d.deserialize_unit(v),
            Call::Seq => d.deserialize_seq(v),
            Call::Map => d.deserialize_map(v),
            Call::Struct(name, fields) => d.deserialize_struct(name, fields, v),
            Call::Newtype(name) => d.deserialize_newtype_struct(name, v),
            Call::Enum(name, variants) => d.deserialize_enum(name, variants, v),
        }
    }
}

/// `deserialize_*` methods that ask for the value as an option first.
macro_rules! or_zero {
    ($($method:ident => $call:expr;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.0.deserialize_option(OnNull { call: $call, visitor })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for GoNull<D> {
    type Error = D::Error;

    or_zero! {
        deserialize_bool => Call::Bool;
        deserialize_i8 => Call::I64;
        deserialize_i16 => Call::I64;
        deserialize_i32 => Call::I64;
        deserialize_i64 => Call::I64;
        deserialize_u8 => Call::U64;
        deserialize_u16 => Call::U64;
        deserialize_u32 => Call::U64;
        deserialize_u64 => Call::U64;
        deserialize_f32 => Call::F64;
        deserialize_f64 => Call::F64;
        deserialize_char => Call::Char;
        deserialize_str => Call::Str;
        deserialize_string => Call::Str;
        deserialize_bytes => Call::Bytes;
        deserialize_byte_buf => Call::Bytes;
        deserialize_unit => Call::Unit;
        deserialize_seq => Call::Seq;
        deserialize_map => Call::Map;
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.0.deserialize_any(Nested::new(visitor))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.0.deserialize_option(Nested::new(visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if name == RAW_VALUE {
            // serde_json's own protocol for a RawValue: nothing to zero.
            return self.0.deserialize_newtype_struct(name, visitor);
        }
        let call = Call::Newtype(name);
        self.0.deserialize_option(OnNull { call, visitor })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let call = Call::Struct(name, fields);
        self.0.deserialize_option(OnNull { call, visitor })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let call = Call::Enum(name, variants);
        self.0.deserialize_option(OnNull { call, visitor })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.0.deserialize_identifier(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.0.deserialize_ignored_any(visitor)
    }
}

/// The name serde_json gives the newtype a `RawValue` is read through.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The visitor of a value asked for as an option: `null` is the zero value
/// of the call, anything else the call itself.
struct OnNull<V> {
    call: Call,
    visitor: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for OnNull<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.call.on(Zero(std::marker::PhantomData), self.visitor)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        let is_struct = matches!(self.call, Call::Struct(..));
        self.call.on(
            d,
            Nested {
                visitor: self.visitor,
                is_struct,
            },
        )
    }
}

/// A visitor whose lists, maps and options hand out [`GoNull`] deserializers.
/// A struct is read from an object only: serde would also fill its fields
/// from an array, in order, which Go refuses.
struct Nested<V> {
    visitor: V,
    is_struct: bool,
}

impl<V> Nested<V> {
    fn new(visitor: V) -> Self {
        Nested {
            visitor,
            is_struct: false,
        }
    }
}

/// Visitor methods passed on unchanged.
macro_rules! forward {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.visitor.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Nested<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    forward! {
        visit_bool(bool);
        visit_i64(i64);
        visit_u64(u64);
        visit_i128(i128);
        visit_u128(u128);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(GoNull(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(GoNull(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if self.is_struct {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self.visitor));
        }
        self.visitor.visit_seq(NestedSeq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(NestedMap(map))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(data)
    }
}

/// A seed whose value is read through [`GoNull`].
struct Seed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(GoNull(d))
    }
}

struct NestedSeq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for NestedSeq<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct NestedMap<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for NestedMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// The zero value of every type, as Go leaves a field that reads `null`.
struct Zero<E>(std::marker::PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for Zero<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_unit()
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_bool(false)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_i64(0)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_u64(0)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_f64(0.0)
    }
    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_char('\0')
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_borrowed_str("")
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_borrowed_bytes(b"")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_none()
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_seq(de::value::SeqDeserializer::new(std::iter::empty::<()>()))
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_map(de::value::MapDeserializer::new(
            std::iter::empty::<((), ())>(),
        ))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, E> {
        self.deserialize_map(v)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, E> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, E> {
        Err(de::Error::invalid_type(de::Unexpected::Unit, &v))
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u32 u128 f32 string byte_buf unit unit_struct tuple
        tuple_struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default, rename_all = "camelCase")]
    struct Sample {
        name: String,
        count: u32,
        on: bool,
        list: Vec<String>,
        maybe: Option<Vec<String>>,
        map: BTreeMap<String, String>,
        inner: Inner,
        inners: Vec<Inner>,
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default)]
    struct Inner {
        a: String,
    }

    #[test]
    fn null_is_the_zero_value_as_in_go() {
        let text = r#"{"name":null,"count":null,"on":null,"list":null,"maybe":null,
            "map":null,"inner":null,"inners":[null,{"a":null},{"a":"x"}],"other":null}"#;
        let sample: Sample = from_str(text).unwrap();
        assert_eq!(
            sample,
            Sample {
                inners: vec![Inner::default(), Inner::default(), Inner { a: "x".into() }],
                ..Sample::default()
            }
        );
        let kept: Sample = from_str(r#"{"maybe":[],"list":[null,"b"]}"#).unwrap();
        assert_eq!(kept.maybe, Some(vec![]));
        assert_eq!(kept.list, vec![String::new(), "b".to_string()]);
        assert_eq!(from_str::<Sample>("null").unwrap(), Sample::default());
    }

    #[test]
    fn a_value_of_another_type_is_named_by_its_path() {
        let err = from_str::<Sample>(r#"{"inners":[{"a":"x"},{"a":5}]}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inners[1].a: invalid type: integer `5`, expected a string at line 1 column 27"
        );
        let err = from_str::<Sample>(r#"{"count":-1}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "count: invalid value: integer `-1`, expected u32 at line 1 column 11"
        );
        let err = from_str::<Sample>("[1]").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid type: sequence, expected struct Sample at line 1 column 1"
        );
    }

    #[test]
    fn the_path_is_found_in_any_layout() {
        let text = "{\n  \"inners\": [\n    {\"a\": \"x\"},\n    {\"b\\\"\": \"[{,\", \"a\": true}\n  ]\n}";
        let err = from_str::<Sample>(text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inners[1].a: invalid type: boolean `true`, expected a string at line 4 column 28"
        );
        let err = from_str::<Sample>(r#"{"map":{"k":1}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "map.k: invalid type: integer `1`, expected a string at line 1 column 13"
        );
        let err = from_str::<Sample>(r#"{"inner":[]}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inner: invalid type: sequence, expected struct Inner at line 1 column 11"
        );
    }

    #[test]
    fn a_text_that_is_not_json_is_refused() {
        for (text, reason) in [
            ("{", "EOF while parsing an object at line 1 column 1"),
            (
                r#"{"name":"a"} x"#,
                "trailing characters at line 1 column 14",
            ),
            (r#"{"name":"a",}"#, "trailing comma at line 1 column 13"),
        ] {
            assert_eq!(from_str::<Sample>(text).unwrap_err().to_string(), reason);
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        #[derive(Deserialize)]
        struct Borrowing<'a> {
            #[serde(borrow)]
            a: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            b: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            c: std::borrow::Cow<'a, str>,
        }
        let value: Borrowing<'_> = from_str(r#"{"a":"plain","b":"esc\"aped","c":null}"#).unwrap();
        assert!(matches!(value.a, std::borrow::Cow::Borrowed("plain")));
        assert!(matches!(value.b, std::borrow::Cow::Owned(_)));
        assert_eq!(value.c, "");
    }

    #[test]
    fn a_raw_value_keeps_its_text() {
        #[derive(Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            object: Option<Raw<'a>>,
            #[serde(borrow, default)]
            old: Option<Raw<'a>>,
        }
        let value: Envelope<'_> = from_str(r#"{"object":{"a": [1, null]},"old":null}"#).unwrap();
        assert_eq!(value.object.map(|r| r.get()), Some(r#"{"a": [1, null]}"#));
        assert!(value.old.is_none());
    }
}
