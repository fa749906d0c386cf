//! Go's `strconv.Atoi`, `strconv.Quote` (what `%q` prints) and
//! `strconv.IsPrint`, and `unicode.IsUpper`, in Go 1.25's Unicode version
//! (15.0.0): the generated tables are in `go_strconv/go_unicode.rs`.

mod go_unicode;

use std::fmt::Write as _;

/// Go's `unicode.IsUpper` (src/unicode/letter.go): general category Lu, in
/// Go's Unicode version (15.0.0). Its Latin-1 fast path (`properties`) agrees
/// with the Lu table, so the table alone decides.
///
/// ```
/// use kube_ovn_policy::upstream::go_strconv::is_upper;
/// assert!(is_upper('A') && is_upper('Σ') && is_upper('Ж'));
/// assert!(!is_upper('a') && !is_upper('Ⅰ') && !is_upper('Ⓐ') && !is_upper('ǅ'));
/// ```
pub fn is_upper(c: char) -> bool {
    let r = u32::from(c);
    let i = go_unicode::UPPER.partition_point(|&(_, last, _)| last < r);
    go_unicode::UPPER
        .get(i)
        .is_some_and(|&(first, _, stride)| first <= r && (r - first) % stride == 0)
}

/// Go's `strconv.IsPrint` (src/strconv/quote.go), the same set as
/// `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the
/// ASCII space, in Go's Unicode version (15.0.0). Ported with Go's tables
/// and lookup (src/strconv/isprint.go, generated as Go's makeisprint.go
/// does by scripts/go-unicode-tables.py).
///
/// ```
/// use kube_ovn_policy::upstream::go_strconv::is_print;
/// assert!(is_print(' ') && is_print('é') && is_print('中') && is_print('😀'));
/// assert!(!is_print('\u{a0}') && !is_print('\u{ad}') && !is_print('\u{200b}'));
/// assert!(!is_print('\u{e000}') && !is_print('\u{378}'));
/// ```
pub fn is_print(c: char) -> bool {
    use go_unicode::{IS_NOT_PRINT16, IS_NOT_PRINT32, IS_PRINT16, IS_PRINT32};
    let r = u32::from(c);
    if r <= 0xFF {
        // Go's fast path: ASCII space through `~`, and `¡` through `ÿ`
        // except the soft hyphen.
        return (0x20..=0x7E).contains(&r) || ((0xA1..=0xFF).contains(&r) && r != 0xAD);
    }
    if let Ok(r16) = u16::try_from(r) {
        return in_print_ranges(IS_PRINT16, r16) && IS_NOT_PRINT16.binary_search(&r16).is_err();
    }
    if !in_print_ranges(IS_PRINT32, r) {
        return false;
    }
    // Go's tables hold no exception from U+20000 on.
    match u16::try_from(r - 0x10000) {
        Ok(low) => IS_NOT_PRINT32.binary_search(&low).is_err(),
        Err(_) => true,
    }
}

/// Go's range test in `IsPrint`: `i := bsearch(isPrint, x)`, the first
/// entry >= x, is the start or end of the pair that may hold x.
fn in_print_ranges<T: Ord + Copy>(pairs: &[T], x: T) -> bool {
    let i = pairs.partition_point(|&v| v < x);
    match (pairs.get(i & !1), pairs.get(i | 1)) {
        (Some(&first), Some(&last)) => first <= x && x <= last,
        _ => false,
    }
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits fitting an int64.
pub fn atoi(s: &str) -> Option<i64> {
    match go_atoi(s) {
        (n, None) => Some(n),
        _ => None,
    }
}

/// Why Go's `strconv.Atoi` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtoiError {
    /// `invalid syntax`: the value is 0.
    Syntax,
    /// `value out of range`: the value is clamped to `i64::MAX` or `i64::MIN`.
    Range,
}

/// Go's `strconv.Atoi` on a 64-bit machine, the value and the error as it
/// returns both (src/strconv/atoi.go). Texts of 1 to 18 bytes take its fast
/// path: any byte but a leading sign and digits is a syntax error. Longer
/// ones go through `ParseInt` and `ParseUint`, which read the digits in
/// order and stop at the first that overflows a uint64 (a range error,
/// whatever follows) or at the first byte that is no digit (a syntax
/// error); a uint64 past the int64 range is a range error too. So
/// `999999999999999999999x` is out of range (`i64::MAX`), while
/// `9999999999999999999x` is a syntax error (0).
pub fn go_atoi(s: &str) -> (i64, Option<AtoiError>) {
    let bytes = s.as_bytes();
    let (neg, digits) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    if bytes.is_empty() || digits.is_empty() {
        return (0, Some(AtoiError::Syntax));
    }
    if bytes.len() < 19 {
        if !digits.iter().all(u8::is_ascii_digit) {
            return (0, Some(AtoiError::Syntax));
        }
        let n = digits
            .iter()
            .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
        return (if neg { -n } else { n }, None);
    }
    // ParseUint(s, 10, 64).
    const CUTOFF: u64 = u64::MAX / 10 + 1;
    let mut n: u64 = 0;
    let mut overflow = false;
    for &c in digits {
        if !c.is_ascii_digit() {
            return (0, Some(AtoiError::Syntax));
        }
        let Some(next) = (n < CUTOFF)
            .then(|| n * 10)
            .and_then(|m| m.checked_add(u64::from(c - b'0')))
        else {
            overflow = true;
            break;
        };
        n = next;
    }
    // ParseInt: the uint64 against the int64 range.
    const HALF: u64 = 1 << 63;
    match (neg, overflow) {
        (false, true) => (i64::MAX, Some(AtoiError::Range)),
        (true, true) => (i64::MIN, Some(AtoiError::Range)),
        (false, false) if n >= HALF => (i64::MAX, Some(AtoiError::Range)),
        (true, false) if n > HALF => (i64::MIN, Some(AtoiError::Range)),
        (false, false) => (n as i64, None),
        (true, false) => ((n as i64).wrapping_neg(), None),
    }
}

/// Go's `%q` (`strconv.Quote`, src/strconv/quote.go `appendQuotedWith` and
/// `appendEscapedRune`) for the names and values echoed in messages: `"` and
/// `\` are backslashed; every rune that `is_print` accepts is kept; the
/// others are escaped as `\a \b \f \n \r \t \v`, as `\xNN` below U+0020
/// and for U+007F, as `\uNNNN` below U+10000, else as `\UNNNNNNNN`
/// (lower-case hex). So a zero width space, a no-break space or a soft
/// hyphen is escaped too, not only control characters. Go's `\xNN` for an
/// invalid UTF-8 byte cannot arise: a `str` is valid UTF-8, and the request
/// reader rejects text that is not.
///
/// ```
/// use kube_ovn_policy::upstream::go_strconv::go_quote;
/// assert_eq!(go_quote("pool-a"), r#""pool-a""#);
/// assert_eq!(go_quote("a\u{200b}b\u{1}"), r#""a\u200bb\x01""#);
/// ```
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if is_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if u32::from(c) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

/// Go's `strconv.Atoi` with its error text.
pub fn atoi_or_error(text: &str) -> Result<i64, String> {
    let why = match go_atoi(text) {
        (n, None) => return Ok(n),
        (_, Some(AtoiError::Syntax)) => "invalid syntax",
        (_, Some(AtoiError::Range)) => "value out of range",
    };
    Err(format!("strconv.Atoi: parsing {}: {why}", go_quote(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_follows_go() {
        let cases: &[(&str, Option<i64>)] = &[
            ("3", Some(3)),
            ("+3", Some(3)),
            ("-1", Some(-1)),
            ("-0", Some(0)),
            ("a3", None),
            ("10m", None),
            ("", None),
            ("+", None),
            ("1_000", None),
            (" 1", None),
            ("9223372036854775807", Some(i64::MAX)),
            ("9223372036854775808", None),
            ("-9223372036854775808", Some(i64::MIN)),
        ];
        for (input, want) in cases {
            assert_eq!(atoi(input), *want, "atoi({input:?})");
        }
    }

    /// Each expectation is Go 1.26's `strconv.Atoi` (value, error) on amd64.
    #[test]
    fn go_atoi_values_and_errors() {
        use AtoiError::{Range, Syntax};
        let cases: &[(&str, (i64, Option<AtoiError>))] = &[
            ("123456789012345678", (123_456_789_012_345_678, None)),
            ("12345678901234567x", (0, Some(Syntax))),
            ("+", (0, Some(Syntax))),
            ("-", (0, Some(Syntax))),
            ("9223372036854775807", (i64::MAX, None)),
            ("+9223372036854775807", (i64::MAX, None)),
            ("9223372036854775808", (i64::MAX, Some(Range))),
            ("-9223372036854775808", (i64::MIN, None)),
            ("-9223372036854775809", (i64::MIN, Some(Range))),
            ("18446744073709551615", (i64::MAX, Some(Range))),
            ("18446744073709551616", (i64::MAX, Some(Range))),
            // The uint64 overflows before the non-digit: out of range.
            ("999999999999999999999x", (i64::MAX, Some(Range))),
            ("-999999999999999999999x", (i64::MIN, Some(Range))),
            ("18446744073709551616x", (i64::MAX, Some(Range))),
            // The non-digit comes first: a syntax error.
            ("9999999999999999999x", (0, Some(Syntax))),
            ("1844674407370955161x5", (0, Some(Syntax))),
            ("1_000000000000000000000", (0, Some(Syntax))),
        ];
        for (input, want) in cases {
            assert_eq!(go_atoi(input), *want, "go_atoi({input:?})");
        }
        assert_eq!(
            atoi_or_error("999999999999999999999x"),
            Err(r#"strconv.Atoi: parsing "999999999999999999999x": value out of range"#.into())
        );
        assert_eq!(
            atoi_or_error("9999999999999999999x"),
            Err(r#"strconv.Atoi: parsing "9999999999999999999x": invalid syntax"#.into())
        );
    }

    /// Go's `strconv.Quote` (what `%q` prints); each expectation is Go 1.25's
    /// output, which follows `appendEscapedRune` and `IsPrint` (Unicode 15.0.0).
    #[test]
    fn quote_follows_go() {
        let cases: &[(&str, &str)] = &[
            ("pool-a", r#""pool-a""#),
            ("", r#""""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("it's", r#""it's""#),
            // Go: strconv.Quote("\a\b\f\n\r\t\v") = "\a\b\f\n\r\t\v"
            ("\u{7}\u{8}\u{c}\n\r\t\u{b}", r#""\a\b\f\n\r\t\v""#),
            // Go: other C0 controls and DEL are \xNN, not \u00NN.
            ("a\u{1}b", r#""a\x01b""#),
            ("\u{0}", r#""\x00""#),
            ("\u{1b}[31m", r#""\x1b[31m""#),
            ("\u{7f}", r#""\x7f""#),
            // Go: a C1 control is above ' ', so \u0085.
            ("\u{85}", r#""\u0085""#),
            // Go: format characters (Cf) are not printable.
            ("pod\u{200b}name", r#""pod\u200bname""#),
            ("\u{ad}", r#""\u00ad""#),
            ("\u{200d}", r#""\u200d""#),
            ("\u{feff}", r#""\ufeff""#),
            ("\u{61c}", r#""\u061c""#),
            // Go: spaces other than U+0020 are not printable.
            ("a\u{a0}b", r#""a\u00a0b""#),
            ("\u{3000}", r#""\u3000""#),
            ("\u{2028}", r#""\u2028""#),
            // Go: private use and unassigned code points.
            ("\u{e000}", r#""\ue000""#),
            ("\u{378}", r#""\u0378""#),
            ("\u{f0000}", r#""\U000f0000""#),
            ("\u{e0001}", r#""\U000e0001""#),
            ("\u{10ffff}", r#""\U0010ffff""#),
            // Go 1.25 is Unicode 15.0.0: Nag Mundari (new in 15.0) is
            // printed as is; CJK Extension I (new in 15.1) is escaped.
            ("\u{1e4d0}", "\"\u{1e4d0}\""),
            ("\u{2ebf0}", r#""\U0002ebf0""#),
            // Go: letters, marks, symbols of any script stay as they are.
            ("é中😀\u{301}\u{fffd}", "\"é中😀\u{301}\u{fffd}\""),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote(input), *want, "go_quote({input:?})");
        }
    }

    /// `unicode.IsPrint` and `unicode.IsUpper` in Go 1.25 (Unicode 15.0.0).
    #[test]
    fn unicode_classes_follow_go() {
        let print: &[(char, bool)] = &[
            (' ', true),
            ('~', true),
            ('\u{a1}', true),
            ('\u{ff}', true),
            ('\u{301}', true),   // Mn
            ('\u{fffd}', true),  // So
            ('\u{1f600}', true), // So
            ('\u{1e4d0}', true), // Lo, new in 15.0
            ('\u{31350}', true), // Lo, CJK Extension H (15.0)
            ('\u{1f}', false),
            ('\u{7f}', false),
            ('\u{a0}', false),    // Zs
            ('\u{ad}', false),    // Cf
            ('\u{1680}', false),  // Zs
            ('\u{200b}', false),  // Cf
            ('\u{2029}', false),  // Zp
            ('\u{e000}', false),  // Co
            ('\u{378}', false),   // Cn
            ('\u{fffe}', false),  // Cn
            ('\u{2ebf0}', false), // Cn in 15.0 (Lo from 15.1)
            ('\u{e0001}', false), // Cf
            ('\u{10ffff}', false),
        ];
        for &(c, want) in print {
            assert_eq!(is_print(c), want, "is_print(U+{:04X})", u32::from(c));
        }
        let upper: &[(char, bool)] = &[
            ('A', true),
            ('Z', true),
            ('\u{c4}', true), // Ä
            ('\u{de}', true), // Þ
            ('Σ', true),
            ('Ж', true),
            ('\u{ff21}', true),  // fullwidth A
            ('\u{1d400}', true), // mathematical bold capital A
            ('\u{a7c0}', true),  // Lu, new in 14.0
            ('\u{1e900}', true), // Adlam capital alif
            ('a', false),
            ('\u{d7}', false),    // ×, Sm
            ('\u{df}', false),    // ß, Ll
            ('\u{1c5}', false),   // ǅ, Lt
            ('\u{2160}', false),  // Ⅰ, Nl (Other_Uppercase)
            ('\u{2161}', false),  // Ⅱ
            ('\u{24b6}', false),  // Ⓐ, So (Other_Uppercase)
            ('\u{1f130}', false), // 🄰, So (Other_Uppercase)
            ('\u{a7cb}', false),  // Lu only from Unicode 16.0
            ('\u{1e922}', false),
        ];
        for &(c, want) in upper {
            assert_eq!(is_upper(c), want, "is_upper(U+{:04X})", u32::from(c));
        }
    }

    /// Whole-range consistency with what Rust knows (a newer Unicode):
    /// Lu is inside Rust's Uppercase, and nothing Go prints is a control.
    /// Latin-1 follows Go's `properties` table exactly.
    #[test]
    fn unicode_tables_agree_with_std_where_they_must() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if is_upper(c) {
                assert!(
                    c.is_uppercase(),
                    "U+{:04X} Lu but not Uppercase",
                    u32::from(c)
                );
            }
            if is_print(c) {
                assert!(!c.is_control(), "U+{:04X} printable control", u32::from(c));
            }
            if u32::from(c) <= 0xFF {
                let latin_upper =
                    c.is_ascii_uppercase() || ('\u{c0}'..='\u{de}').contains(&c) && c != '\u{d7}';
                assert_eq!(is_upper(c), latin_upper, "U+{:04X}", u32::from(c));
            }
        }
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Go's `strconv.Unquote` for what `Quote` writes, strict about the
        /// form: outside escapes only runes that `IsPrint` accepts (and no
        /// bare `"` or `\`); an escape only for a rune it does not accept
        /// (or for `"` and `\`), in the one form Go picks for it.
        fn go_unquote(quoted: &str) -> Option<String> {
            let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
            let mut out = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    if c == '"' || !is_print(c) {
                        return None;
                    }
                    out.push(c);
                    continue;
                }
                let kind = chars.next()?;
                let decoded = match kind {
                    '"' | '\\' => kind,
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    'x' | 'u' | 'U' => {
                        let width = match kind {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = chars.by_ref().take(width).collect();
                        if hex.len() != width || hex.to_lowercase() != hex {
                            return None;
                        }
                        let c = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
                        let named = "\u{7}\u{8}\u{c}\n\r\t\u{b}".contains(c);
                        let form = if c < ' ' || c == '\u{7f}' {
                            'x'
                        } else if u32::from(c) < 0x10000 {
                            'u'
                        } else {
                            'U'
                        };
                        if is_print(c) || named || form != kind {
                            return None;
                        }
                        c
                    }
                    _ => return None,
                };
                out.push(decoded);
            }
            Some(out)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            #[test]
            fn quote_escapes_exactly_what_go_does(
                s in any::<String>(),
                extra in prop::sample::select(vec![
                    '\u{200b}', '\u{a0}', '\u{ad}', '\u{7f}', '\u{1}', '\u{e000}', '\u{10ffff}', '"', '\\', 'é',
                ]),
                at in any::<prop::sample::Index>(),
            ) {
                // Arbitrary text with one rune Go treats specially put in.
                let mut s = s;
                let cut = s
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(at.index(s.chars().count() + 1))
                    .unwrap_or(s.len());
                s.insert(cut, extra);
                let quoted = go_quote(&s);
                let unquoted = go_unquote(&quoted);
                prop_assert_eq!(unquoted.as_deref(), Some(s.as_str()), "{}", quoted);
            }
        }
    }
}
