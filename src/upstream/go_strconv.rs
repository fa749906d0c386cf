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
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
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
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(text)
        ));
    }
    atoi(text).ok_or_else(|| {
        format!(
            "strconv.Atoi: parsing {}: value out of range",
            go_quote(text)
        )
    })
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
