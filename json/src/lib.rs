//! A small JSON reader, and the [`Decode`] trait the policy's object types
//! implement with it.
//!
//! serde's derived decoders are generic over the deserializer, and each
//! struct's decoder was 2–4 KB of WebAssembly: two thirds of the module. Here
//! one non-generic loop walks every object and calls back with each key, so a
//! struct's decoder is only the `match` on its keys ([`json_struct!`]).
//!
//! What it reads is what Go's `encoding/json` reads into the same structs:
//! unknown keys are skipped, `null` is the type's zero value, a repeated key
//! keeps its last value, and a value of another JSON type is an error, named
//! by its path (`spec.cidrBlock: expected a string, found a number`). The
//! whole text must be one valid JSON value in UTF-8, nested at most
//! [`MAX_DEPTH`] deep.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

/// How deeply arrays and objects may nest (serde_json's limit for the
/// values it decodes; it skips ignored values at any depth).
pub const MAX_DEPTH: u32 = 128;

/// Why a text did not decode, and where. Boxed, so that every `Result`
/// the reader returns stays two words: in WebAssembly a larger one is
/// moved by `memory.copy`, a call out of the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(Box<Failure>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Failure {
    reason: String,
    /// The byte offset, for a text that is not JSON.
    at: Option<usize>,
    /// The keys and indices from the value at fault up to the top.
    path: Vec<Segment>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl Error {
    /// An error about a value (its type or content), not about the JSON text.
    pub fn invalid(reason: impl Into<String>) -> Self {
        Self::new(reason.into(), None)
    }

    fn new(reason: String, at: Option<usize>) -> Self {
        Error(Box::new(Failure {
            reason,
            at,
            path: Vec::new(),
        }))
    }

    fn within(mut self, segment: Segment) -> Self {
        self.0.path.push(segment);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Failure { reason, at, path } = &*self.0;
        for (i, segment) in path.iter().rev().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        if !path.is_empty() {
            f.write_str(": ")?;
        }
        f.write_str(reason)?;
        if let Some(at) = at {
            write!(f, " at byte {at}")?;
        }
        Ok(())
    }
}

/// A cursor over one JSON text.
pub struct Reader<'a> {
    text: &'a str,
    pos: usize,
    depth: u32,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Reader {
            text,
            pos: 0,
            depth: 0,
        }
    }

    #[inline(always)]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn syntax(&self, reason: &str) -> Error {
        Error::new(reason.to_string(), Some(self.pos))
    }

    /// The next byte after whitespace, not consumed.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes().get(self.pos) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Consumes `literal` (`null`, `true`, `false`), which must come next.
    fn literal(&mut self, literal: &str) -> Result<(), Error> {
        if self.text[self.pos..].starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(self.syntax("expected a JSON value"))
        }
    }

    /// Consumes a `null` if one comes next.
    #[inline(always)]
    pub fn null(&mut self) -> Result<bool, Error> {
        if self.peek() == Some(b'n') {
            self.literal("null")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// "expected …, found <what comes next>".
    pub fn unexpected(&mut self, expected: &str) -> Error {
        let found = match self.peek() {
            Some(b'"') => "a string",
            Some(b'{') => "an object",
            Some(b'[') => "an array",
            Some(b't' | b'f') => "a boolean",
            Some(b'n') => "null",
            Some(b'-' | b'0'..=b'9') => "a number",
            Some(_) => return self.syntax("expected a JSON value"),
            None => return self.syntax("unexpected end of text"),
        };
        Error::invalid(format!("expected {expected}, found {found}"))
    }

    /// Where the run of plain string bytes from `from` ends: at a quote, a
    /// backslash, a control character or the end of the text. Eight bytes
    /// at a time: a byte is flagged where `x ^ '"'`, `x ^ '\\'` or `x - 0x20`
    /// borrows; the lowest flag of each test is exact, so their lowest is.
    #[inline(always)]
    fn plain_run(&self, from: usize) -> usize {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let bytes = self.bytes();
        let mut i = from;
        while let Some(word) = bytes
            .get(i..i + 8)
            .and_then(|chunk| <[u8; 8]>::try_from(chunk).ok())
        {
            let x = u64::from_le_bytes(word);
            let quote = x ^ (ONES * u64::from(b'"'));
            let backslash = x ^ (ONES * u64::from(b'\\'));
            let flags = ((quote.wrapping_sub(ONES) & !quote)
                | (backslash.wrapping_sub(ONES) & !backslash)
                | (x.wrapping_sub(ONES * 0x20) & !x))
                & HIGH;
            if flags != 0 {
                return i + (flags.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        while bytes
            .get(i)
            .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
        {
            i += 1;
        }
        i
    }

    /// The error for the byte at which a plain run ended, if not `"` or `\`.
    fn string_error(&self) -> Error {
        match self.bytes().get(self.pos) {
            None => self.syntax("unterminated string"),
            _ => self.syntax("control character in a string"),
        }
    }

    /// A string (not `null`), borrowed from the text unless it has escapes.
    pub fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("a string"));
        }
        let start = self.pos + 1;
        self.pos = self.plain_run(start);
        match self.bytes().get(self.pos) {
            Some(b'"') => {
                self.pos += 1;
                return Ok(Cow::Borrowed(&self.text[start..self.pos - 1]));
            }
            Some(b'\\') => {}
            _ => return Err(self.string_error()),
        }
        let mut out = String::from(&self.text[start..self.pos]);
        loop {
            match self.bytes().get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    out.push(self.escape()?);
                    let run = self.pos;
                    self.pos = self.plain_run(run);
                    out.push_str(&self.text[run..self.pos]);
                }
                _ => return Err(self.string_error()),
            }
        }
    }

    /// Reads past a string, checking its escapes but not that a `\u`
    /// surrogate is paired (as serde_json does for a value it ignores).
    fn skip_string(&mut self) -> Result<(), Error> {
        self.pos += 1;
        loop {
            self.pos = self.plain_run(self.pos);
            match self.bytes().get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.bytes().get(self.pos) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            self.hex4()?;
                        }
                        Some(_) => return Err(self.syntax("invalid escape")),
                        None => return Err(self.syntax("unterminated string")),
                    }
                }
                _ => return Err(self.string_error()),
            }
        }
    }

    /// The character of the escape after a `\`.
    fn escape(&mut self) -> Result<char, Error> {
        let Some(&b) = self.bytes().get(self.pos) else {
            return Err(self.syntax("unterminated string"));
        };
        self.pos += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                let code = match unit {
                    0xD800..=0xDBFF => {
                        if !self.text[self.pos..].starts_with("\\u") {
                            return Err(self.syntax("lone surrogate in a \\u escape"));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.syntax("lone surrogate in a \\u escape"));
                        }
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(self.syntax("lone surrogate in a \\u escape")),
                    _ => unit,
                };
                char::from_u32(code).ok_or_else(|| self.syntax("invalid \\u escape"))?
            }
            _ => {
                self.pos -= 1;
                return Err(self.syntax("invalid escape"));
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let digits = self.bytes().get(self.pos..self.pos + 4);
        let value = digits.and_then(|d| {
            d.iter()
                .try_fold(0u32, |acc, &b| Some(acc * 16 + (b as char).to_digit(16)?))
        });
        match value {
            Some(value) => {
                self.pos += 4;
                Ok(value)
            }
            None => Err(self.syntax("invalid \\u escape")),
        }
    }

    /// The text of a number (not `null`), checked against JSON's grammar.
    pub fn number(&mut self) -> Result<&'a str, Error> {
        if !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            return Err(self.unexpected("a number"));
        }
        let start = self.pos;
        let bytes = self.bytes();
        let digits = |pos: &mut usize| {
            let from = *pos;
            while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos > from
        };
        let mut pos = self.pos;
        if bytes[pos] == b'-' {
            pos += 1;
        }
        let leading_zero = bytes.get(pos) == Some(&b'0');
        let int_start = pos;
        let mut valid = digits(&mut pos) && !(leading_zero && pos - int_start > 1);
        if valid && bytes.get(pos) == Some(&b'.') {
            pos += 1;
            valid = digits(&mut pos);
        }
        if valid && matches!(bytes.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(bytes.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            valid = digits(&mut pos);
        }
        if !valid {
            return Err(self.syntax("invalid number"));
        }
        self.pos = pos;
        Ok(&self.text[start..pos])
    }

    /// A `true` or `false` (not `null`).
    pub fn boolean(&mut self) -> Result<bool, Error> {
        match self.peek() {
            Some(b't') => self.literal("true").map(|()| true),
            Some(b'f') => self.literal("false").map(|()| false),
            _ => Err(self.unexpected("a boolean")),
        }
    }

    /// Consumes the `{` or `[` that must come next, and reports whether
    /// the object or array is empty (its `}` or `]` consumed too).
    fn open(&mut self, open: u8, close: u8, what: &str) -> Result<bool, Error> {
        if self.peek() != Some(open) {
            return Err(self.unexpected(what));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax("nested too deeply"));
        }
        self.pos += 1;
        if self.peek() == Some(close) {
            self.pos += 1;
            self.depth -= 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// After an element: whether another follows (a `,`
    /// consumed) or the container ends (its `close` consumed).
    #[inline(always)]
    fn more(&mut self, close: u8) -> Result<bool, Error> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                self.depth -= 1;
                Ok(false)
            }
            _ if close == b'}' => Err(self.syntax("expected ',' or '}'")),
            _ => Err(self.syntax("expected ',' or ']'")),
        }
    }

    /// Consumes a key and its `:`, which must come next.
    fn key(&mut self) -> Result<Cow<'a, str>, Error> {
        if self.peek() != Some(b'"') {
            return Err(self.syntax("expected a key"));
        }
        let key = self.string()?;
        self.colon()?;
        Ok(key)
    }

    #[inline(always)]
    fn colon(&mut self) -> Result<(), Error> {
        if self.peek() != Some(b':') {
            return Err(self.syntax("expected ':'"));
        }
        self.pos += 1;
        Ok(())
    }

    /// Calls `field` with each key of an object, the reader before its value,
    /// which `field` must read or [`skip`](Self::skip). `null` is an object
    /// without keys.
    pub fn object(
        &mut self,
        field: &mut dyn FnMut(&mut Self, &str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.null()? || self.open(b'{', b'}', "an object")? {
            return Ok(());
        }
        loop {
            let key = self.key()?;
            field(self, &key).map_err(|e| e.within(Segment::Key(key.into_owned())))?;
            if !self.more(b'}')? {
                return Ok(());
            }
        }
    }

    /// Calls `item` with the reader before each element of an array, which
    /// `item` must read. `null` is an empty array.
    pub fn array(
        &mut self,
        item: &mut dyn FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.null()? || self.open(b'[', b']', "an array")? {
            return Ok(());
        }
        let mut index = 0;
        loop {
            item(self).map_err(|e| e.within(Segment::Index(index)))?;
            index += 1;
            if !self.more(b']')? {
                return Ok(());
            }
        }
    }

    /// Reads past one value of any type, checking it.
    pub fn skip(&mut self) -> Result<(), Error> {
        match self.peek() {
            Some(b'"') => self.skip_string(),
            Some(b'{') => {
                if self.open(b'{', b'}', "an object")? {
                    return Ok(());
                }
                loop {
                    if self.peek() != Some(b'"') {
                        return Err(self.syntax("expected a key"));
                    }
                    self.skip_string()?;
                    self.colon()?;
                    self.skip()?;
                    if !self.more(b'}')? {
                        return Ok(());
                    }
                }
            }
            Some(b'[') => {
                if self.open(b'[', b']', "an array")? {
                    return Ok(());
                }
                loop {
                    self.skip()?;
                    if !self.more(b']')? {
                        return Ok(());
                    }
                }
            }
            Some(b't' | b'f') => self.boolean().map(drop),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number().map(drop),
            Some(_) => Err(self.syntax("expected a JSON value")),
            None => Err(self.syntax("unexpected end of text")),
        }
    }

    /// Reads past one value of any type, returning its text.
    pub fn raw(&mut self) -> Result<&'a str, Error> {
        self.peek();
        let start = self.pos;
        self.skip()?;
        Ok(&self.text[start..self.pos])
    }

    /// Checks that nothing but whitespace follows.
    pub fn finish(&mut self) -> Result<(), Error> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.syntax("trailing characters after the JSON value")),
        }
    }
}

/// A type read from JSON with a [`Reader`].
pub trait Decode<'a>: Sized {
    /// Reads one value.
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error>;
}

/// Decodes a whole text as one `T`.
pub fn from_str<'a, T: Decode<'a>>(text: &'a str) -> Result<T, Error> {
    let mut reader = Reader::new(text);
    let value = T::decode(&mut reader)?;
    reader.finish()?;
    Ok(value)
}

/// Whether a whole text is `null` (which [`Reader::object`] reads as an
/// empty object, where a caller may need to refuse it).
pub fn is_null(text: &[u8]) -> bool {
    text.trim_ascii() == b"null"
}

/// Decodes a whole UTF-8 text as one `T`.
pub fn from_slice<'a, T: Decode<'a>>(bytes: &'a [u8]) -> Result<T, Error> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::new("invalid UTF-8".to_string(), Some(e.valid_up_to())))?;
    from_str(text)
}

/// Any value, read past unlooked-at (an object whose existence is all that matters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ignored;

impl<'a> Decode<'a> for Ignored {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        reader.skip().map(|()| Ignored)
    }
}

/// The text of a value, undecoded (an admission request's `object`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw<'a>(pub &'a str);

impl<'a> Decode<'a> for Raw<'a> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        reader.raw().map(Raw)
    }
}

impl<'a> Decode<'a> for Cow<'a, str> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        if reader.null()? {
            return Ok(Cow::Borrowed(""));
        }
        reader.string()
    }
}

impl<'a> Decode<'a> for String {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        Cow::<str>::decode(reader).map(Cow::into_owned)
    }
}

impl<'a> Decode<'a> for bool {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        if reader.null()? {
            return Ok(false);
        }
        reader.boolean()
    }
}

/// An integer type read from a JSON number without fraction or exponent.
macro_rules! decode_integer {
    ($($ty:ty: $what:literal),*) => {$(
        impl<'a> Decode<'a> for $ty {
            fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
                if reader.null()? {
                    return Ok(0);
                }
                let text = reader.number()?;
                text.parse().map_err(|_| {
                    Error::invalid(format!(concat!("expected ", $what, ", found {}"), text))
                })
            }
        }
    )*};
}

decode_integer!(u32: "an unsigned 32-bit integer", i32: "a 32-bit integer");

impl<'a, T: Decode<'a>> Decode<'a> for Option<T> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        if reader.null()? {
            return Ok(None);
        }
        T::decode(reader).map(Some)
    }
}

impl<'a, T: Decode<'a>> Decode<'a> for Vec<T> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let mut items = Vec::new();
        reader.array(&mut |r| {
            items.push(T::decode(r)?);
            Ok(())
        })?;
        Ok(items)
    }
}

impl<'a> Decode<'a> for BTreeMap<String, String> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, Error> {
        let mut map = BTreeMap::new();
        reader.object(&mut |r, key| {
            map.insert(key.to_string(), String::decode(r)?);
            Ok(())
        })?;
        Ok(map)
    }
}

/// Declares a struct whose every field is read from its JSON key, and
/// implements [`Decode`] for it: other keys are skipped, and absent keys
/// keep the field's default, so the struct must be `Default`. A field
/// cannot exist without its key.
///
/// ```
/// kube_ovn_json::json_struct! {
///     /// `status` of a Vip.
///     #[derive(Debug, Default, PartialEq)]
///     pub struct VipStatus {
///         /// `status.mac`
///         pub mac: String = "mac",
///     }
/// }
/// let status: VipStatus = kube_ovn_json::from_str(r#"{"mac": "00:00:00:0a:0b:0c"}"#).unwrap();
/// assert_eq!(status.mac, "00:00:00:0a:0b:0c");
/// ```
#[macro_export]
macro_rules! json_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $ty:ident $(<$lt:lifetime>)? {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $field_ty:ty = $key:literal),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $ty $(<$lt>)? {
            $($(#[$field_meta])* $field_vis $field: $field_ty,)*
        }

        impl<'a> $crate::Decode<'a> for $ty $(<$lt>)? {
            fn decode(reader: &mut $crate::Reader<'a>) -> Result<Self, $crate::Error> {
                let mut value = Self::default();
                reader.object(&mut |r, key| {
                    match key {
                        $($key => value.$field = $crate::Decode::decode(r)?,)*
                        _ => r.skip()?,
                    }
                    Ok(())
                })?;
                Ok(value)
            }
        }
    };
}

/// Decodes a `serde_json::Value` (tests build objects with `json!`).
#[cfg(test)]
pub fn from_value<T: for<'a> Decode<'a>>(value: serde_json::Value) -> Result<T, Error> {
    from_str(&value.to_string())
}

#[cfg(test)]
mod tests;
