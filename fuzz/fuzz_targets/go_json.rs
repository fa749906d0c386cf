//! upstream/go_json.rs against Go itself on fuzzed bytes: the comparison of
//! `make gojson-diff`, each input asked of e2e/gojson (GOJSON_ORACLE names
//! the built program; `make fuzz-smoke` and `make fuzz` build and set it).
#![no_main]

use gojson_diff::{Oracle, compare};
use libfuzzer_sys::fuzz_target;
use std::sync::{Mutex, OnceLock};

static ORACLE: OnceLock<Mutex<Oracle>> = OnceLock::new();

fn oracle() -> &'static Mutex<Oracle> {
    ORACLE.get_or_init(|| {
        let Ok(path) = std::env::var("GOJSON_ORACLE") else {
            eprintln!("go_json: GOJSON_ORACLE names no Go program (make gojson-bin builds target/gojson/bin/gojson)");
            std::process::exit(2);
        };
        match Oracle::start(&path) {
            Ok(oracle) => Mutex::new(oracle),
            Err(e) => {
                eprintln!("go_json: {path}: {e}");
                std::process::exit(2);
            }
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let answer = oracle()
        .lock()
        .map_err(|_| "oracle lock")
        .and_then(|mut o| o.ask(data).map_err(|_| "the Go program did not answer"));
    let go = match answer {
        Ok(go) => go,
        Err(e) => {
            eprintln!("go_json: {e}");
            std::process::exit(2);
        }
    };
    if let Err(difference) = compare(data, go) {
        panic!("Go and Rust differ: {difference}");
    }
});
