//! `make gojson-diff`: generated inputs through the Go program (e2e/gojson)
//! and through upstream/go_json.rs, compared field by field.
//!
//!     gojson-diff <go program> [--count N] [--seed S]
//!
//! Prints `N passed, 0 failed` or the first input where they differ (exit 1).

use gojson_diff::generate::{Rng, input};
use gojson_diff::{ask_all, compare};
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let Some(go) = args.first() else {
        eprintln!("usage: gojson-diff <go program> [--count N] [--seed S]");
        return ExitCode::from(2);
    };
    let (count, seed) = (flag("--count", 100_000), flag("--seed", 1));
    let started = Instant::now();
    let mut rng = Rng::new(seed);
    let inputs: Vec<Vec<u8>> = (0..count).map(|_| input(&mut rng)).collect();
    let bytes: usize = inputs.iter().map(Vec::len).sum();
    let answers = match ask_all(go, &inputs) {
        Ok(answers) => answers,
        Err(e) => {
            eprintln!("gojson-diff: {go}: {e}");
            return ExitCode::from(2);
        }
    };
    let go_done = started.elapsed();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for (i, (text, answer)) in inputs.iter().zip(answers).enumerate() {
        for key in ["sel", "conf", "list", "nad"] {
            let kind = match &answer[key] {
                serde_json::Value::String(e) => e.clone(),
                _ => "decoded".to_string(),
            };
            *outcomes.entry(format!("{key} {kind}")).or_default() += 1;
        }
        if let Err(difference) = compare(text, answer) {
            println!("gojson-diff: seed {seed}, input {i}: {difference}");
            println!("{i} passed, 1 failed");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "gojson-diff: seed {seed}: {count} inputs ({bytes} bytes), Go and Rust agree on every field \
         ({:.1} s, of which Go {:.1} s)",
        started.elapsed().as_secs_f64(),
        go_done.as_secs_f64()
    );
    let outcomes: Vec<String> = outcomes.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!("gojson-diff: Go's outcomes: {}", outcomes.join(", "));
    println!("{count} passed, 0 failed");
    ExitCode::SUCCESS
}
