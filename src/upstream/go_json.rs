//! Go's `encoding/json` `Unmarshal` (Go 1.25/1.26, `decode.go`, `scanner.go`,
//! `fold.go`) for the Go types kube-ovn-controller decodes tenant-written
//! JSON into: nadutils v1.7.7's `NetworkSelectionElement` (a pod's
//! `k8s.v1.cni.cncf.io/networks`) and CNI v1.3.0's `PluginConf` and
//! `NetConfList` (a NetworkAttachmentDefinition's `spec.config`, as
//! kube-ovn's `loadNetConf` and multus' `LoadDelegateNetConfList` read it).
//!
//! Go's rules, where they differ from serde_json's:
//! - the whole text is checked first (`checkValid`): a syntax error, or
//!   nesting deeper than 10 000, fails it before anything is decoded;
//! - invalid UTF-8 in a string becomes U+FFFD byte by byte, an escaped
//!   lone surrogate (`\ud800`) becomes U+FFFD;
//! - an object key names a struct field exactly, else under Unicode simple
//!   case folding ([`fold_eq`]: `ſ` is `s`, the Kelvin sign `k`);
//! - a repeated key decodes into the value already there: a later string
//!   replaces, `null` leaves a string as it was and sets a list or pointer
//!   to nil, a later list decodes element by element into the list's
//!   existing elements (so `"ips":["a","b"],"IPS":[null]` is `["a"]`, and
//!   elements a shorter list dropped come back when a longer one follows);
//! - a value of the wrong type for a field Go decodes, an integer field
//!   that is not an integer of 64 bits, a number in an `interface{}` out
//!   of `float64`'s range, an IP that `net.ParseIP` refuses: the whole
//!   document fails ([`Error::Type`]); keys naming no field are skipped
//!   unchecked.
//!
//! [`unmarshal`] decodes into a [`Value`] tree shaped by a [`Kind`] (Go's
//! type); [`network_selections`], [`plugin_conf`] and [`net_conf_list`]
//! read the upstream types into plain structs. The text is read once,
//! without recursion beyond the Go type's own depth, in linear time.

use super::go_net::parse_ip;

/// Go's `maxNestingDepth` (`encoding/json/scanner.go`): deeper nesting is a
/// syntax error.
pub const MAX_DEPTH: usize = 10_000;

/// Why Go's `json.Unmarshal` fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `*json.SyntaxError`: not JSON, or nested deeper than [`MAX_DEPTH`].
    Syntax,
    /// `*json.UnmarshalTypeError` (or a field's `UnmarshalText` failing): a
    /// value of the wrong type, an integer out of range, a bad IP.
    Type,
}

/// A Go type, as far as `Unmarshal` treats it.
#[derive(Debug)]
pub enum Kind {
    /// `string`.
    String,
    /// `bool`.
    Bool,
    /// `int` (64 bits): a number that `strconv.ParseInt` reads.
    Int,
    /// `interface{}`: anything, its numbers within `float64`'s range.
    Any,
    /// `json.RawMessage`: anything, unchecked.
    Raw,
    /// `net.IP` (an `encoding.TextUnmarshaler`): a string `net.ParseIP`
    /// reads, or empty, or `null`.
    Ip,
    /// `[]T`.
    Slice(&'static Kind),
    /// `*T`.
    Ptr(&'static Kind),
    /// `map[string]T`.
    Map(&'static Kind),
    /// A struct: its fields by JSON name.
    Struct(&'static [(&'static str, Kind)]),
}

/// A decoded Go value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A `string`.
    String(String),
    /// A `bool`.
    Bool(bool),
    /// An `int`.
    Int(i64),
    /// A slice, with the elements Go keeps past its length.
    Slice(Slice),
    /// A pointer, `None` when nil.
    Ptr(Option<Box<Value>>),
    /// A struct's fields, by JSON name, in the type's order.
    Struct(Vec<(&'static str, Value)>),
    /// A map, interface, raw message or IP: checked, not kept.
    Opaque,
}

/// A Go slice: nil or not, its length, and its backing array as far as it
/// was ever written (a shorter list keeps the elements past its length,
/// and a longer one decodes into them again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    nil: bool,
    len: usize,
    backing: Vec<Value>,
}

impl Value {
    /// Go's zero value of a type.
    pub fn zero(kind: &Kind) -> Value {
        match kind {
            Kind::String => Value::String(String::new()),
            Kind::Bool => Value::Bool(false),
            Kind::Int => Value::Int(0),
            Kind::Slice(_) => Value::Slice(Slice {
                nil: true,
                len: 0,
                backing: Vec::new(),
            }),
            Kind::Ptr(_) => Value::Ptr(None),
            Kind::Struct(fields) => Value::Struct(
                fields
                    .iter()
                    .map(|(name, kind)| (*name, Value::zero(kind)))
                    .collect(),
            ),
            Kind::Any | Kind::Raw | Kind::Ip | Kind::Map(_) => Value::Opaque,
        }
    }

    /// A struct's field by JSON name.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Struct(fields) => fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A string field's text (empty for anything else).
    pub fn text(&self) -> &str {
        match self {
            Value::String(s) => s,
            _ => "",
        }
    }

    /// A slice's elements, `None` when it is nil (or not a slice).
    pub fn elements(&self) -> Option<&[Value]> {
        match self {
            Value::Slice(s) if !s.nil => s.backing.get(..s.len),
            _ => None,
        }
    }

    /// A pointer's target, `None` when nil (or not a pointer).
    pub fn target(&self) -> Option<&Value> {
        match self {
            Value::Ptr(p) => p.as_deref(),
            _ => None,
        }
    }

    /// A `[]string`'s texts (nil is empty).
    pub fn texts(&self) -> Vec<String> {
        self.elements()
            .unwrap_or_default()
            .iter()
            .map(|v| v.text().to_string())
            .collect()
    }
}

/// `json.Unmarshal(data, &v)` with `v` a zero value of `kind`.
///
/// ```
/// use kube_ovn_policy::upstream::go_json::{Error, Kind, unmarshal};
/// const IPS: Kind = Kind::Struct(&[("ips", Kind::Slice(&Kind::String))]);
/// let v = unmarshal(br#"{"ips":["a","b"],"IPS":[null]}"#, &IPS).unwrap();
/// assert_eq!(v.field("ips").unwrap().texts(), ["a"]);
/// assert_eq!(unmarshal(br#"{"ips":[1]}"#, &IPS), Err(Error::Type));
/// assert_eq!(unmarshal(br#"{"ips":[}"#, &IPS), Err(Error::Syntax));
/// ```
pub fn unmarshal(data: &[u8], kind: &Kind) -> Result<Value, Error> {
    check_valid(data)?;
    let mut value = Value::zero(kind);
    Decoder { data, pos: 0 }.value(kind, &mut value)?;
    Ok(value)
}

/// Whether a JSON key names a struct field for Go (`bytes.EqualFold`, as
/// `encoding/json`'s `foldName` applies it): equal under Unicode simple
/// case folding, where the only runes outside ASCII that fold onto an ASCII
/// letter are `ſ` (s) and the Kelvin sign (k); the Turkish `ı` and `İ` do
/// not fold onto `i`.
///
/// ```
/// use kube_ovn_policy::upstream::go_json::fold_eq;
/// assert!(fold_eq("IPſ", "ips") && fold_eq("\u{212A}ind", "kind"));
/// assert!(!fold_eq("ıps", "ips") && !fold_eq("İps", "ips"));
/// ```
pub fn fold_eq(key: &str, field: &str) -> bool {
    let fold = |c: char| match c {
        'ſ' => 'S',
        '\u{212A}' => 'K',
        c => c.to_ascii_uppercase(),
    };
    key.chars().map(fold).eq(field.chars().map(fold))
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// Go's `checkValid`: the scanner over the whole text, iteratively.
fn check_valid(data: &[u8]) -> Result<(), Error> {
    let at = |i: usize| data.get(i).copied();
    let ws = |mut i: usize| {
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        i
    };
    // An object's key and its `:`, from i; where the value starts.
    let key = |i: usize| -> Result<usize, Error> {
        let i = ws(scan_string(data, i)?);
        if at(i) != Some(b':') {
            return Err(Error::Syntax);
        }
        Ok(ws(i + 1))
    };
    // The open containers: `true` for an object.
    let mut stack: Vec<bool> = Vec::new();
    let mut i = ws(0);
    'value: loop {
        // A value starts at i.
        match at(i).ok_or(Error::Syntax)? {
            b'{' | b'[' => {
                let object = at(i) == Some(b'{');
                if stack.len() >= MAX_DEPTH {
                    return Err(Error::Syntax);
                }
                stack.push(object);
                i = ws(i + 1);
                if at(i) == Some(if object { b'}' } else { b']' }) {
                    stack.pop();
                    i += 1;
                } else {
                    if object {
                        i = key(i)?;
                    }
                    continue 'value;
                }
            }
            b'"' => i = scan_string(data, i)?,
            b'-' | b'0'..=b'9' => i = scan_number(data, i)?,
            b't' => i = scan_word(data, i, b"true")?,
            b'f' => i = scan_word(data, i, b"false")?,
            b'n' => i = scan_word(data, i, b"null")?,
            _ => return Err(Error::Syntax),
        }
        // After a value: close containers, or go on to the next value.
        loop {
            i = ws(i);
            let Some(&object) = stack.last() else {
                return if i == data.len() {
                    Ok(())
                } else {
                    Err(Error::Syntax)
                };
            };
            match at(i) {
                Some(b',') => {
                    i = ws(i + 1);
                    if object {
                        i = key(i)?;
                    }
                    continue 'value;
                }
                Some(b'}') if object => {
                    stack.pop();
                    i += 1;
                }
                Some(b']') if !object => {
                    stack.pop();
                    i += 1;
                }
                _ => return Err(Error::Syntax),
            }
        }
    }
}

/// A string starting at `i` (its `"`): the index after its closing quote.
fn scan_string(data: &[u8], i: usize) -> Result<usize, Error> {
    if data.get(i) != Some(&b'"') {
        return Err(Error::Syntax);
    }
    let mut i = i + 1;
    loop {
        match *data.get(i).ok_or(Error::Syntax)? {
            b'"' => return Ok(i + 1),
            b'\\' => match *data.get(i + 1).ok_or(Error::Syntax)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let hex = data.get(i + 2..i + 6).ok_or(Error::Syntax)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(Error::Syntax);
                    }
                    i += 6;
                }
                _ => return Err(Error::Syntax),
            },
            c if c < 0x20 => return Err(Error::Syntax),
            _ => i += 1,
        }
    }
}

/// A number starting at `i`: the index after it.
fn scan_number(data: &[u8], i: usize) -> Result<usize, Error> {
    let digit = |i: usize| data.get(i).is_some_and(u8::is_ascii_digit);
    let digits = |mut i: usize| {
        while digit(i) {
            i += 1;
        }
        i
    };
    let mut i = i;
    if data.get(i) == Some(&b'-') {
        i += 1;
    }
    match data.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        _ => return Err(Error::Syntax),
    }
    if data.get(i) == Some(&b'.') {
        if !digit(i + 1) {
            return Err(Error::Syntax);
        }
        i = digits(i + 1);
    }
    if matches!(data.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(data.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return Err(Error::Syntax);
        }
        i = digits(i);
    }
    Ok(i)
}

fn scan_word(data: &[u8], i: usize, word: &[u8]) -> Result<usize, Error> {
    match data.get(i..i + word.len()) {
        Some(w) if w == word => Ok(i + word.len()),
        _ => Err(Error::Syntax),
    }
}

/// Go's `unquoteBytes` of a string's bytes between its quotes (already
/// checked): escapes read, a valid surrogate pair joined, a lone
/// surrogate and each byte of invalid UTF-8 replaced by U+FFFD.
fn unquote(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        // The run up to the next escape, its invalid bytes replaced one by one.
        let end = raw[i..]
            .iter()
            .position(|&b| b == b'\\')
            .map_or(raw.len(), |p| i + p);
        let mut run = &raw[i..end];
        while !run.is_empty() {
            match std::str::from_utf8(run) {
                Ok(s) => {
                    out.push_str(s);
                    run = &[];
                }
                Err(e) => {
                    let (valid, rest) = run.split_at(e.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    out.push(char::REPLACEMENT_CHARACTER);
                    run = rest.get(1..).unwrap_or_default();
                }
            }
        }
        i = end;
        if i >= raw.len() {
            break;
        }
        let escape = raw.get(i + 1).copied().unwrap_or(b'\\');
        i += 2;
        match escape {
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let first = hex4(raw.get(i..i + 4));
                i += 4;
                let c = if (0xD800..0xDC00).contains(&first)
                    && raw.get(i..i + 2) == Some(b"\\u")
                    && (0xDC00..0xE000).contains(&hex4(raw.get(i + 2..i + 6)))
                {
                    let second = hex4(raw.get(i + 2..i + 6));
                    i += 6;
                    char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
                } else {
                    char::from_u32(first)
                };
                out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            other => out.push(char::from(other)),
        }
    }
    out
}

fn hex4(digits: Option<&[u8]>) -> u32 {
    digits
        .and_then(|d| std::str::from_utf8(d).ok())
        .and_then(|d| u32::from_str_radix(d, 16).ok())
        .unwrap_or(u32::MAX)
}

/// Go's `decodeState` over a checked text.
struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Decoder<'_> {
    fn ws(&mut self) {
        while self.data.get(self.pos).copied().is_some_and(is_space) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> u8 {
        self.ws();
        self.data.get(self.pos).copied().unwrap_or(0)
    }

    /// Consumes `c` (after spaces), telling whether it was there.
    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == c;
        if found {
            self.pos += 1;
        }
        found
    }

    /// The raw bytes of the string at the cursor, consumed.
    fn string_raw(&mut self) -> &[u8] {
        self.ws();
        let start = self.pos + 1;
        let end = scan_string(self.data, self.pos).unwrap_or(self.data.len());
        self.pos = end;
        self.data
            .get(start..end.saturating_sub(1))
            .unwrap_or_default()
    }

    /// Skips the value at the cursor; with `check_numbers`, fails on a
    /// number out of `float64`'s range (an `interface{}`'s `convertNumber`).
    fn skip(&mut self, check_numbers: bool) -> Result<(), Error> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    self.pos += 1;
                }
                b',' | b':' => {
                    self.pos += 1;
                    continue;
                }
                b'"' => {
                    self.string_raw();
                }
                b'-' | b'0'..=b'9' => {
                    let end = scan_number(self.data, self.pos).unwrap_or(self.data.len());
                    let text = self.data.get(self.pos..end).unwrap_or_default();
                    self.pos = end;
                    if check_numbers && !float_in_range(text) {
                        return Err(Error::Type);
                    }
                }
                b't' | b'n' => self.pos += 4,
                b'f' => self.pos += 5,
                _ => return Ok(()),
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }

    /// Decodes the value at the cursor into `v`, of type `kind`.
    fn value(&mut self, kind: &Kind, v: &mut Value) -> Result<(), Error> {
        let c = self.peek();
        match kind {
            Kind::Any => return self.skip(true),
            Kind::Raw => return self.skip(false),
            Kind::Ptr(inner) => {
                if c == b'n' {
                    self.pos += 4;
                    *v = Value::Ptr(None);
                    return Ok(());
                }
                if !matches!(v, Value::Ptr(Some(_))) {
                    *v = Value::Ptr(Some(Box::new(Value::zero(inner))));
                }
                return match v {
                    Value::Ptr(Some(target)) => self.value(inner, target),
                    _ => Err(Error::Type),
                };
            }
            _ => {}
        }
        match c {
            b'{' => self.object(kind, v),
            b'[' => self.array(kind, v),
            b'"' => {
                let raw = self.string_raw();
                match kind {
                    Kind::String => {
                        *v = Value::String(unquote(raw));
                        Ok(())
                    }
                    Kind::Ip => {
                        let text = unquote(raw);
                        if text.is_empty() || parse_ip(&text).is_some() {
                            Ok(())
                        } else {
                            Err(Error::Type)
                        }
                    }
                    _ => Err(Error::Type),
                }
            }
            b'n' => {
                self.pos += 4;
                match kind {
                    Kind::Slice(_) => *v = Value::zero(kind),
                    Kind::Map(_) => *v = Value::Opaque,
                    _ => {}
                }
                Ok(())
            }
            b't' | b'f' => {
                let truth = c == b't';
                self.pos += if truth { 4 } else { 5 };
                match kind {
                    Kind::Bool => {
                        *v = Value::Bool(truth);
                        Ok(())
                    }
                    _ => Err(Error::Type),
                }
            }
            _ => {
                let end = scan_number(self.data, self.pos).unwrap_or(self.data.len());
                let text = self.data.get(self.pos..end).unwrap_or_default();
                self.pos = end;
                let int = std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse::<i64>().ok());
                match (kind, int) {
                    (Kind::Int, Some(n)) => {
                        *v = Value::Int(n);
                        Ok(())
                    }
                    _ => Err(Error::Type),
                }
            }
        }
    }

    fn object(&mut self, kind: &Kind, v: &mut Value) -> Result<(), Error> {
        self.pos += 1; // `{`
        match kind {
            Kind::Struct(fields) => {
                if !self.eat(b'}') {
                    loop {
                        let key = unquote(self.string_raw());
                        self.eat(b':');
                        let index = fields
                            .iter()
                            .position(|(name, _)| *name == key)
                            .or_else(|| fields.iter().position(|(name, _)| fold_eq(&key, name)));
                        match (index, &mut *v) {
                            (Some(i), Value::Struct(values)) => {
                                let (Some((_, kind)), Some((_, value))) =
                                    (fields.get(i), values.get_mut(i))
                                else {
                                    return Err(Error::Type);
                                };
                                self.value(kind, value)?;
                            }
                            _ => self.skip(false)?,
                        }
                        if !self.eat(b',') {
                            break;
                        }
                    }
                    self.eat(b'}');
                }
                Ok(())
            }
            Kind::Map(elem) => {
                *v = Value::Opaque;
                if !self.eat(b'}') {
                    loop {
                        self.string_raw();
                        self.eat(b':');
                        self.value(elem, &mut Value::zero(elem))?;
                        if !self.eat(b',') {
                            break;
                        }
                    }
                    self.eat(b'}');
                }
                Ok(())
            }
            _ => Err(Error::Type),
        }
    }

    fn array(&mut self, kind: &Kind, v: &mut Value) -> Result<(), Error> {
        let Kind::Slice(elem) = kind else {
            return Err(Error::Type);
        };
        if !matches!(v, Value::Slice(_)) {
            *v = Value::zero(kind);
        }
        let Value::Slice(slice) = v else {
            return Err(Error::Type);
        };
        self.pos += 1; // `[`
        let mut i = 0;
        if !self.eat(b']') {
            loop {
                // Go grows the slice (keeping what lies past its length)
                // and decodes into the element already there.
                if i >= slice.backing.len() {
                    slice.backing.push(Value::zero(elem));
                }
                slice.len = slice.len.max(i + 1);
                let Some(element) = slice.backing.get_mut(i) else {
                    return Err(Error::Type);
                };
                self.value(elem, element)?;
                i += 1;
                if !self.eat(b',') {
                    break;
                }
            }
            self.eat(b']');
        }
        slice.nil = false;
        slice.len = slice.len.min(i);
        if i == 0 {
            slice.backing.clear();
        }
        Ok(())
    }
}

/// Whether Go's `strconv.ParseFloat(s, 64)` reads a JSON number without
/// `ErrRange` (overflow to ±Inf; underflow to 0 is no error).
fn float_in_range(text: &[u8]) -> bool {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .is_some_and(f64::is_finite)
}

/// nadutils v1.7.7's `NetworkSelectionElement`
/// (`pkg/apis/k8s.cni.cncf.io/v1/types.go`), every field, with
/// `PortMapEntry` and `BandwidthEntry`.
pub const NETWORK_SELECTION_ELEMENT: Kind = Kind::Struct(&[
    ("name", Kind::String),
    ("namespace", Kind::String),
    ("ips", Kind::Slice(&Kind::String)),
    ("mac", Kind::String),
    ("infiniband-guid", Kind::String),
    ("interface", Kind::String),
    (
        "portMappings",
        Kind::Slice(&Kind::Ptr(&Kind::Struct(&[
            ("hostPort", Kind::Int),
            ("containerPort", Kind::Int),
            ("protocol", Kind::String),
            ("hostIP", Kind::String),
        ]))),
    ),
    (
        "bandwidth",
        Kind::Ptr(&Kind::Struct(&[
            ("ingressRate", Kind::Int),
            ("ingressBurst", Kind::Int),
            ("egressRate", Kind::Int),
            ("egressBurst", Kind::Int),
        ])),
    ),
    ("cni-args", Kind::Ptr(&Kind::Map(&Kind::Any))),
    ("default-route", Kind::Slice(&Kind::Ip)),
    ("ipam-claim-reference", Kind::String),
]);

/// CNI v1.3.0's `types.PluginConf` (`types.NetConf`), every field but
/// `PrevResult` (`json:"-"`).
pub const PLUGIN_CONF: Kind = Kind::Struct(&[
    ("cniVersion", Kind::String),
    ("name", Kind::String),
    ("type", Kind::String),
    ("capabilities", Kind::Map(&Kind::Bool)),
    ("ipam", Kind::Struct(&[("type", Kind::String)])),
    (
        "dns",
        Kind::Struct(&[
            ("nameservers", Kind::Slice(&Kind::String)),
            ("domain", Kind::String),
            ("search", Kind::Slice(&Kind::String)),
            ("options", Kind::Slice(&Kind::String)),
        ]),
    ),
    ("prevResult", Kind::Map(&Kind::Any)),
    (
        "cni.dev/valid-attachments",
        Kind::Slice(&Kind::Struct(&[
            ("containerID", Kind::String),
            ("ifname", Kind::String),
        ])),
    ),
]);

/// CNI v1.3.0's `types.NetConfList`.
pub const NET_CONF_LIST: Kind = Kind::Struct(&[
    ("cniVersion", Kind::String),
    ("name", Kind::String),
    ("disableCheck", Kind::Bool),
    ("disableGC", Kind::Bool),
    ("plugins", Kind::Slice(&Kind::Ptr(&PLUGIN_CONF))),
]);

/// The fields of a `NetworkSelectionElement` the policy reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
    /// `interface`.
    pub interface: String,
    /// `ips` (nil is empty).
    pub ips: Vec<String>,
    /// `mac`.
    pub mac: String,
}

/// `json.Unmarshal(data, &[]*NetworkSelectionElement)`: the elements,
/// `None` for a `null` one (nadutils then dereferences it); a `null` list
/// is empty. Each element is decoded afresh (its `UnmarshalJSON`).
///
/// ```
/// use kube_ovn_policy::upstream::go_json::network_selections;
/// let list = network_selections(r#"[{"NAME":"a","ips":["x"],"ipſ":[null,"y"]},null]"#.as_bytes()).unwrap();
/// assert_eq!(list[0].as_ref().unwrap().ips, ["x", "y"]);
/// assert!(list[1].is_none());
/// assert!(network_selections(br#"[{"name":"a","bandwidth":{"ingressRate":1.5}}]"#).is_err());
/// ```
pub fn network_selections(data: &[u8]) -> Result<Vec<Option<Selection>>, Error> {
    const LIST: Kind = Kind::Slice(&Kind::Ptr(&NETWORK_SELECTION_ELEMENT));
    let list = unmarshal(data, &LIST)?;
    Ok(list
        .elements()
        .unwrap_or_default()
        .iter()
        .map(|element| {
            element.target().map(|s| {
                let text = |name| s.field(name).map(Value::text).unwrap_or("").to_string();
                Selection {
                    name: text("name"),
                    namespace: text("namespace"),
                    interface: text("interface"),
                    ips: s.field("ips").map(Value::texts).unwrap_or_default(),
                    mac: text("mac"),
                }
            })
        })
        .collect())
}

/// The fields of a CNI `PluginConf` the policy reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginConf {
    /// `type`.
    pub kind: String,
    /// `ipam.type`.
    pub ipam_type: String,
}

impl PluginConf {
    fn of(value: &Value) -> PluginConf {
        PluginConf {
            kind: value.field("type").map(Value::text).unwrap_or("").into(),
            ipam_type: value
                .field("ipam")
                .and_then(|ipam| ipam.field("type"))
                .map(Value::text)
                .unwrap_or("")
                .into(),
        }
    }
}

/// `json.Unmarshal(data, &types.NetConf{})`.
///
/// ```
/// use kube_ovn_policy::upstream::go_json::plugin_conf;
/// assert_eq!(plugin_conf(br#"{"Type":"kube-ovn","ipam":null}"#).unwrap().kind, "kube-ovn");
/// assert!(plugin_conf(br#"{"type":"x","capabilities":{"a":1}}"#).is_err());
/// ```
pub fn plugin_conf(data: &[u8]) -> Result<PluginConf, Error> {
    unmarshal(data, &PLUGIN_CONF).map(|v| PluginConf::of(&v))
}

/// The fields of a CNI `NetConfList` the policy reads: its `plugins`,
/// `None` when nil, each `None` when `null`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetConfList {
    /// `plugins`.
    pub plugins: Option<Vec<Option<PluginConf>>>,
}

/// `json.Unmarshal(data, &types.NetConfList{})`.
///
/// ```
/// use kube_ovn_policy::upstream::go_json::net_conf_list;
/// let list = net_conf_list(br#"{"plugins":[{"type":"a"},{"type":"b"}],"Plugins":[{}]}"#).unwrap();
/// assert_eq!(list.plugins.unwrap()[0].as_ref().unwrap().kind, "a");
/// assert_eq!(net_conf_list(br#"{"plugins":null}"#).unwrap().plugins, None);
/// ```
pub fn net_conf_list(data: &[u8]) -> Result<NetConfList, Error> {
    let value = unmarshal(data, &NET_CONF_LIST)?;
    Ok(NetConfList {
        plugins: value
            .field("plugins")
            .and_then(Value::elements)
            .map(|plugins| {
                plugins
                    .iter()
                    .map(|p| p.target().map(PluginConf::of))
                    .collect()
            }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// The `ips` of each selection, or the error. Every answer below is Go
    /// 1.26's (`json.Unmarshal` into nadutils v1.7.7's type, e2e/gojson).
    fn ips(text: &str) -> Result<Vec<Vec<String>>, Error> {
        network_selections(text.as_bytes()).map(|list| {
            list.into_iter()
                .map(|s| s.unwrap_or_default().ips)
                .collect()
        })
    }

    #[rstest]
    #[case::later_list_into_the_first(r#"[{"ips":["a","b"],"IPS":[null]}]"#, Ok(vec![vec!["a"]]))]
    #[case::elements_past_the_length_come_back(
        r#"[{"ips":["x","y","z"],"ips":["q"],"ips":[null,null,null,null]}]"#,
        Ok(vec![vec!["q", "y", "z", ""]])
    )]
    #[case::empty_list_is_a_new_slice(r#"[{"ips":["x"],"ips":[],"ips":[null]}]"#, Ok(vec![vec![""]]))]
    #[case::null_empties_a_list(r#"[{"ips":["x"],"ips":null}]"#, Ok(vec![vec![]]))]
    #[case::folding(r#"[{"ıps":["a"],"İps":["b"],"ipſ":["c"],"\u0130ps":["d"]}]"#, Ok(vec![vec!["c"]]))]
    #[case::wrong_type_before_a_right_one(r#"[{"ips":5,"IPS":["a"]}]"#, Err(Error::Type))]
    #[case::not_an_int(r#"[{"bandwidth":{"ingressRate":1.0}}]"#, Err(Error::Type))]
    #[case::int_overflow(
        r#"[{"portMappings":[{"hostPort":9223372036854775808}]}]"#,
        Err(Error::Type)
    )]
    #[case::float_overflow_in_interface(r#"[{"cni-args":{"x":[1e400]}}]"#, Err(Error::Type))]
    #[case::float_underflow_is_zero(r#"[{"cni-args":{"x":1e-400}}]"#, Ok(vec![vec![]]))]
    #[case::unknown_field_unchecked(r#"[{"unknown":1e400}]"#, Ok(vec![vec![]]))]
    #[case::ips_empty_and_null(r#"[{"default-route":["10.0.0.1","",null]}]"#, Ok(vec![vec![]]))]
    #[case::bad_ip(r#"[{"default-route":["10.0.0.300"]}]"#, Err(Error::Type))]
    #[case::mac_a_number(r#"[{"mac":5}]"#, Err(Error::Type))]
    #[case::object_not_list(r#"{"name":"a"}"#, Err(Error::Type))]
    #[case::null_list("null", Ok(vec![]))]
    #[case::trailing_comma("[1,]", Err(Error::Syntax))]
    #[case::trailing_text("[] x", Err(Error::Syntax))]
    #[case::empty("", Err(Error::Syntax))]
    fn selections_as_go_decodes_them(
        #[case] text: &str,
        #[case] want: Result<Vec<Vec<&str>>, Error>,
    ) {
        let want = want.map(|l| {
            l.into_iter()
                .map(|s| s.into_iter().map(String::from).collect())
                .collect()
        });
        assert_eq!(ips(text), want);
    }

    #[test]
    fn strings_as_go_unquotes_them() {
        let name = |text: &[u8]| network_selections(text).unwrap()[0].clone().unwrap().name;
        assert_eq!(
            name(br#"[{"name":"\ud800\udc00\ud800x\udc00"}]"#),
            "\u{10000}\u{FFFD}x\u{FFFD}"
        );
        // Each byte of invalid UTF-8 on its own, as utf8.DecodeRune reads them.
        assert_eq!(
            name(b"[{\"name\":\"\xe2\x82a\xed\xa0\x80\"}]"),
            "\u{FFFD}\u{FFFD}a\u{FFFD}\u{FFFD}\u{FFFD}"
        );
        assert_eq!(name(br#"[{"name":"a","name":null}]"#), "a");
    }

    #[test]
    fn nesting_as_deep_as_go_allows() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        const ANY: Kind = Kind::Any;
        assert!(unmarshal(nested(MAX_DEPTH).as_bytes(), &ANY).is_ok());
        assert_eq!(
            unmarshal(nested(MAX_DEPTH + 1).as_bytes(), &ANY),
            Err(Error::Syntax)
        );
    }

    #[test]
    fn conf_lists_as_go_decodes_them() {
        let list = net_conf_list(
            br#"{"plugins":[{"type":"a"},{"type":"b"}],"Plugins":[{"ipam":{"type":"kube-ovn"}}]}"#,
        );
        let merged = PluginConf {
            kind: "a".into(),
            ipam_type: "kube-ovn".into(),
        };
        assert_eq!(
            list,
            Ok(NetConfList {
                plugins: Some(vec![Some(merged)])
            })
        );
        assert_eq!(
            net_conf_list(br#"{"plugins":[{"type":"a"}],"plugins":[null]}"#)
                .unwrap()
                .plugins,
            Some(vec![None])
        );
        assert_eq!(
            net_conf_list(br#"{"plugins":[]}"#).unwrap().plugins,
            Some(vec![])
        );
        assert_eq!(
            plugin_conf(br#"{"type":"x","dns":{"nameservers":"1.1.1.1"}}"#),
            Err(Error::Type)
        );
        assert_eq!(
            plugin_conf(br#"{"capabilities":{"x":null},"ipam":{"type":"kube-ovn"}}"#)
                .unwrap()
                .ipam_type,
            "kube-ovn"
        );
    }
}
