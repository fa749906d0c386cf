//! Kubernetes' rules for names and label values, and the "not found"
//! message upstream's informer cache gives.

/// A valid Kubernetes label value: at most 63 characters, alphanumerics
/// with `-`, `_` and `.` inside. Only such a value may go into a selector: the
/// policy-server's watch retries an invalid one forever.
pub fn is_label_value(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b.first().is_none_or(u8::is_ascii_alphanumeric)
        && b.last().is_none_or(u8::is_ascii_alphanumeric)
}

/// A Kubernetes object name (DNS-1123 subdomain): at most 253 characters of
/// lower-case alphanumerics, `-` and `.`, starting and ending alphanumeric.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 253
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'.')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names() {
        for ok in ["pool-a", "a", "a.b-c", "0abc"] {
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in ["", "Pool", "a;b", "-a", "a-", "a b", &"a".repeat(254)] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }
}
