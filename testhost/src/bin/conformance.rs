//! `conformance [--answers FILE] <policy.wasm> <dir>...`: runs every case
//! file of the given directories through the policy; one line per failing
//! case, then `N passed, N failed`. Exits non-zero if any case fails.
//!
//! `--answers FILE` also writes the policy's answer to every case, one JSON
//! object a line (`file`, `allowed`, `code`, `message`, `warnings`), for
//! `scripts/fidelity.py` to hold against upstream's recorded answers.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use testhost::Policy;
use testhost::case::{Case, case_files_of, case_label};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut answers = match args.iter().position(|a| a == "--answers") {
        Some(i) if i + 1 < args.len() => {
            let path = args.remove(i + 1);
            args.remove(i);
            match std::fs::File::create(&path) {
                Ok(f) => Some(std::io::BufWriter::new(f)),
                Err(e) => {
                    eprintln!("conformance: cannot write {path}: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => None,
    };
    if args.len() < 2 {
        eprintln!("usage: conformance [--answers FILE] <policy.wasm> <cases-dir>...");
        return ExitCode::from(2);
    }
    let policy = match Policy::load(Path::new(&args[0])) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let files = match case_files_of(&args[1..]) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in files {
        let label = case_label(&file);
        let outcome = Case::load(&file).and_then(|case| {
            let expect = case.expect.clone().ok_or("the case has no expect")?;
            let got = case.run(&policy)?;
            if let Some(out) = answers.as_mut() {
                let line = serde_json::json!({
                    "file": file.display().to_string(),
                    "allowed": got.accepted,
                    "code": got.code,
                    "message": got.message,
                    "warnings": got.warnings.clone().unwrap_or_default(),
                });
                writeln!(out, "{line}")?;
            }
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
    if let Some(Err(e)) = answers.as_mut().map(Write::flush) {
        eprintln!("conformance: cannot write the answers: {e}");
        return ExitCode::from(2);
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
