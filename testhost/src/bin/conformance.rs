//! `conformance <policy.wasm> <dir>...`: runs every case file of the given
//! directories through the policy; one line per failing case, then
//! `N passed, N failed`. Exits non-zero if any case fails.

use std::path::Path;
use std::process::ExitCode;
use testhost::Policy;
use testhost::case::{Case, case_files};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: conformance <policy.wasm> <cases-dir>...");
        return ExitCode::from(2);
    }
    let policy = match Policy::load(Path::new(&args[0])) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for dir in &args[1..] {
        let files = match case_files(Path::new(dir)) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("conformance: {e}");
                return ExitCode::from(2);
            }
        };
        for file in files {
            let label = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let outcome = Case::load(&file).and_then(|case| {
                let expect = case.expect.clone().ok_or("the case has no expect")?;
                let got = case.run(&policy)?;
                Ok(expect
                    .mismatch(&got)
                    .map(|m| format!("FAIL {label}: expected {}, got {m}", expect.describe())))
            });
            match outcome {
                Ok(None) => passed += 1,
                Ok(Some(line)) => {
                    failed += 1;
                    println!("{line}");
                }
                Err(e) => {
                    failed += 1;
                    println!("FAIL {label}: the policy did not answer: {e}");
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
