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

/// Orders `items` by the name `name` gives each, as a stable `sort_by` on
/// the names would (equal names keep their order). Every caller shares one
/// sort of (name, position) pairs: the standard library's sorts are made
/// again for each element type and comparison, and six of them cost 23 KB
/// of the module (docs/measurements/2026-12-07-module-size.md).
pub fn sort_by_name<T>(items: &mut Vec<T>, name: fn(&T) -> &str) {
    let order = {
        let mut keys: Vec<(&str, usize)> = items
            .iter()
            .enumerate()
            .map(|(at, item)| (name(item), at))
            .collect();
        sort_keys(&mut keys);
        keys.into_iter().map(|(_, at)| at).collect::<Vec<_>>()
    };
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(
        order
            .into_iter()
            .filter_map(|at| slots.get_mut(at).and_then(Option::take)),
    );
}

/// The one sort behind [`sort_by_name`]: by name, then by position.
#[inline(never)]
fn sort_keys(keys: &mut [(&str, usize)]) {
    keys.sort_unstable();
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

    proptest::proptest! {
        /// The same order as the standard library's stable sort by name,
        /// duplicates included.
        #[test]
        fn sort_by_name_is_a_stable_sort(names in proptest::collection::vec("[a-c]{0,2}", 0..40)) {
            let items: Vec<(String, usize)> = names.into_iter().enumerate().map(|(i, n)| (n, i)).collect();
            let mut ours = items.clone();
            sort_by_name(&mut ours, |item| item.0.as_str());
            let mut std = items;
            std.sort_by(|a, b| a.0.cmp(&b.0));
            proptest::prop_assert_eq!(ours, std);
        }
    }
}
