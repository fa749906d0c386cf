//! Generated inputs: network selection lists and NAD configs as a tenant
//! could write them, with Go's edges in every place: escapes, surrogate
//! pairs and lone surrogates, invalid UTF-8, keys in other cases and
//! folded (`ſ`, the Kelvin sign, the Turkish `ı` that does not fold),
//! repeated keys, wrong types, nulls, numbers at the edges of `int` and
//! `float64`, deep nesting, and byte-level damage.

/// A small deterministic generator (xorshift64*), so that a seed names a run.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const SELECTION_FIELDS: &[&str] = &[
    "name",
    "namespace",
    "ips",
    "mac",
    "interface",
    "infiniband-guid",
    "portMappings",
    "bandwidth",
    "cni-args",
    "default-route",
    "ipam-claim-reference",
    "unknown",
];
const CONF_FIELDS: &[&str] = &[
    "type",
    "ipam",
    "plugins",
    "name",
    "cniVersion",
    "capabilities",
    "dns",
    "prevResult",
    "cni.dev/valid-attachments",
    "disableCheck",
    "disableGC",
    "provider",
    "server_socket",
];
const WORDS: &[&str] = &[
    "kube-ovn",
    "macvlan",
    "a",
    "net1",
    "eth1",
    "ns1",
    "10.0.0.5",
    "fd00::1",
    "10.0.0.5/24",
    "::ffff:1.2.3.4",
    "1.2.3",
    "00:00:00:00:00:01",
    "",
    " ",
    "x y",
    "KUBE-OVN",
    "host-local",
];
const PIECES: &[&[u8]] = &[
    b"\\n",
    b"\\\"",
    b"\\\\",
    b"\\/",
    b"\\b\\f\\r\\t",
    b"\\u0041",
    b"\\u00e9",
    b"\\u0000",
    b"\\ud83d\\ude00",
    b"\\ud800",
    b"\\udc00",
    b"\\ud800\\u0041",
    b"\\ud800\\ud800\\udc00",
    b"\\uDBFF\\uDFFF",
    b"\\uD800x",
    b"\\u017f",
    b"\\u212a",
    "é".as_bytes(),
    "ſ".as_bytes(),
    "😀".as_bytes(),
    "\u{212A}".as_bytes(),
    b"\xff",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\xe2\x82",
    b"\xe2\x82a",
    b"\xf4\x90\x80\x80",
    b"\xf0\x9f\x98",
    b"\x80",
    b"\x7f",
];
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "1.5",
    "1e2",
    "1E+2",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e-400",
    "0e999999",
    "123456789012345678901234567890",
    "0.0",
    "2.5e308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "-0.0e-0",
];

/// A key naming `field` in some spelling Go may or may not match.
fn key(rng: &mut Rng, field: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in field.chars() {
        let choice = rng.below(40);
        match (choice, c) {
            (0..=3, c) if c.is_ascii_alphabetic() => {
                let flipped = if c.is_ascii_lowercase() {
                    c.to_ascii_uppercase()
                } else {
                    c.to_ascii_lowercase()
                };
                out.extend(flipped.to_string().as_bytes());
            }
            (4, 's' | 'S') => out.extend("ſ".as_bytes()),
            (4, 'k' | 'K') => out.extend("\u{212A}".as_bytes()),
            (4, 'i') => out.extend("ı".as_bytes()),
            (4, 'I') => out.extend("İ".as_bytes()),
            (5, c) if c.is_ascii() => out.extend(format!("\\u{:04x}", c as u32).as_bytes()),
            (6, 's') => out.extend(b"\\u017f"),
            _ => out.extend(c.to_string().as_bytes()),
        }
    }
    if rng.chance(2) {
        out.extend(*rng.pick(PIECES));
    }
    out.push(b'"');
}

fn ws(rng: &mut Rng, out: &mut Vec<u8>) {
    if rng.chance(10) {
        out.extend(*rng.pick(&[&b" "[..], b"\n", b"\t ", b"\r\n  "]));
    }
}

fn string(rng: &mut Rng, out: &mut Vec<u8>) {
    out.push(b'"');
    for _ in 0..rng.below(4) {
        if rng.chance(40) {
            out.extend(*rng.pick(PIECES));
        } else {
            out.extend(rng.pick(WORDS).as_bytes());
        }
    }
    out.push(b'"');
}

fn number(rng: &mut Rng, out: &mut Vec<u8>) {
    out.extend(rng.pick(NUMBERS).as_bytes());
}

/// Any JSON value, `depth` levels at most.
fn any(rng: &mut Rng, depth: usize, out: &mut Vec<u8>) {
    match rng.below(if depth == 0 { 5 } else { 7 }) {
        0 => string(rng, out),
        1 => number(rng, out),
        2 => out.extend(*rng.pick(&[&b"true"[..], b"false"])),
        3 | 4 => out.extend(b"null"),
        5 => {
            out.push(b'[');
            for i in 0..rng.below(3) {
                if i > 0 {
                    out.push(b',');
                }
                any(rng, depth - 1, out);
            }
            out.push(b']');
        }
        _ => {
            out.push(b'{');
            for i in 0..rng.below(3) {
                if i > 0 {
                    out.push(b',');
                }
                string(rng, out);
                out.push(b':');
                any(rng, depth - 1, out);
            }
            out.push(b'}');
        }
    }
}

/// A value for a field that wants `shape`, of the wrong type now and then.
fn field_value(rng: &mut Rng, shape: &str, out: &mut Vec<u8>) {
    if rng.chance(12) {
        return any(rng, 2, out);
    }
    if rng.chance(6) {
        out.extend(b"null");
        return;
    }
    let list = |rng: &mut Rng, out: &mut Vec<u8>, item: &dyn Fn(&mut Rng, &mut Vec<u8>)| {
        out.push(b'[');
        for i in 0..rng.below(5) {
            if i > 0 {
                out.push(b',');
            }
            ws(rng, out);
            if rng.chance(15) {
                out.extend(b"null");
            } else {
                item(rng, out);
            }
        }
        out.push(b']');
    };
    let object = |rng: &mut Rng,
                  out: &mut Vec<u8>,
                  fields: &[&str],
                  value: &dyn Fn(&mut Rng, &str, &mut Vec<u8>)| {
        out.push(b'{');
        for i in 0..rng.below(5) {
            if i > 0 {
                out.push(b',');
            }
            let f = *rng.pick(fields);
            key(rng, f, out);
            out.push(b':');
            ws(rng, out);
            value(rng, f, out);
        }
        out.push(b'}');
    };
    match shape {
        "ips" | "nameservers" | "search" | "options" => list(rng, out, &string),
        "default-route" => list(rng, out, &|rng, out| {
            let ip = *rng.pick(&[
                "10.0.0.1",
                "fd00::1",
                "",
                "300.1.1.1",
                "::ffff:1.2.3.4",
                "x",
            ]);
            out.extend(format!("\"{ip}\"").as_bytes());
        }),
        "portMappings" => list(rng, out, &|rng, out| {
            object(
                rng,
                out,
                &["hostPort", "containerPort", "protocol", "hostIP"],
                &|rng, f, out| {
                    field_value(rng, if f.ends_with("Port") { "int" } else { "string" }, out)
                },
            )
        }),
        "bandwidth" => object(
            rng,
            out,
            &["ingressRate", "ingressBurst", "egressRate", "egressBurst"],
            &|rng, _, out| field_value(rng, "int", out),
        ),
        "cni-args" | "prevResult" => {
            object(rng, out, &["a", "b", "c"], &|rng, _, out| any(rng, 2, out))
        }
        "capabilities" => object(rng, out, &["portMappings", "ips", "mac"], &|rng, _, out| {
            field_value(rng, "bool", out)
        }),
        "ipam" => object(rng, out, &["type", "subnet", "Type"], &|rng, f, out| {
            if f.eq_ignore_ascii_case("type") && rng.chance(50) {
                out.extend(b"\"kube-ovn\"");
            } else {
                field_value(rng, "string", out)
            }
        }),
        "dns" => object(
            rng,
            out,
            &["nameservers", "domain", "search", "options"],
            &|rng, f, out| field_value(rng, if f == "domain" { "string" } else { f }, out),
        ),
        "cni.dev/valid-attachments" => list(rng, out, &|rng, out| {
            object(rng, out, &["containerID", "ifname"], &|rng, _, out| {
                field_value(rng, "string", out)
            })
        }),
        "plugins" => list(rng, out, &|rng, out| conf(rng, out, false)),
        "disableCheck" | "disableGC" | "bool" => out.extend(*rng.pick(&[&b"true"[..], b"false"])),
        "int" => number(rng, out),
        "type" if rng.chance(50) => {
            out.extend(*rng.pick(&[&b"\"kube-ovn\""[..], b"\"kube-\\u006fvn\"", b"\"\""]))
        }
        _ => string(rng, out),
    }
}

/// A NAD config (or, inside `plugins`, one plugin).
fn conf(rng: &mut Rng, out: &mut Vec<u8>, top: bool) {
    out.push(b'{');
    for i in 0..rng.below(6) {
        if i > 0 {
            out.push(b',');
        }
        let mut f = *rng.pick(CONF_FIELDS);
        if !top && f == "plugins" {
            f = "type";
        }
        key(rng, f, out);
        out.push(b':');
        ws(rng, out);
        field_value(rng, f, out);
    }
    out.push(b'}');
}

fn selection(rng: &mut Rng, out: &mut Vec<u8>) {
    out.push(b'{');
    let fields = rng.below(7);
    for i in 0..fields {
        if i > 0 {
            out.push(b',');
            ws(rng, out);
        }
        let f = *rng.pick(SELECTION_FIELDS);
        key(rng, f, out);
        out.push(b':');
        field_value(rng, f, out);
    }
    // The same list under several spellings: each decodes into the last.
    let repeats = if rng.chance(25) { 1 + rng.below(3) } else { 0 };
    for i in 0..repeats {
        if fields + i > 0 {
            out.push(b',');
        }
        key(rng, "ips", out);
        out.push(b':');
        field_value(rng, "ips", out);
    }
    out.push(b'}');
}

/// Damage a text at the byte level: a byte changed, inserted or dropped,
/// the text cut short.
fn damage(rng: &mut Rng, out: &mut Vec<u8>) {
    if out.is_empty() {
        return;
    }
    let at = rng.below(out.len());
    match rng.below(4) {
        0 => out[at] = *rng.pick(b"[]{}\",:\\ \x00\xffa0-en"),
        1 => out.insert(at, *rng.pick(b"[]{}\",:\\ \x00\xffa0-e")),
        2 => {
            out.remove(at);
        }
        _ => out.truncate(at),
    }
}

/// One generated input.
pub fn input(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.below(100) {
        0..=44 => {
            ws(rng, &mut out);
            out.push(b'[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(b',');
                }
                match rng.below(20) {
                    0 => out.extend(b"null"),
                    1 => any(rng, 2, &mut out),
                    _ => selection(rng, &mut out),
                }
            }
            out.push(b']');
            ws(rng, &mut out);
        }
        45..=79 => conf(rng, &mut out, true),
        80..=87 => {
            // The text form, or what is nearly it.
            for _ in 0..rng.below(4) {
                out.extend(
                    rng.pick(&[
                        "net1",
                        "ns/net1",
                        "a@eth1",
                        ",",
                        " ",
                        "Net",
                        "a/b/c",
                        "\u{a0}",
                        "-x",
                        "ns1/net-2@if0",
                    ])
                    .as_bytes(),
                );
            }
        }
        88 => {
            // Deep nesting around Go's limit of 10 000.
            let depth = *rng.pick(&[9_999, 10_000, 10_001]);
            let (open, close): (&[u8], &[u8]) = if rng.chance(50) {
                (b"[", b"]")
            } else {
                (b"{\"plugins\":", b"}")
            };
            for _ in 0..depth {
                out.extend(open);
            }
            out.extend(b"null");
            for _ in 0..depth {
                out.extend(close);
            }
        }
        _ => any(rng, 4, &mut out),
    }
    if rng.chance(12) {
        damage(rng, &mut out);
    }
    out
}
