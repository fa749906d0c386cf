//! `host-vs-kwctl <sessions-dir> <cases-dir>...`: our waPC host's answers
//! against the real runtime's.
//!
//! For every case with a session recorded by `kwctl run
//! --record-host-capabilities-interactions` (`make conformance-kwctl` keeps
//! them), each recorded request is put to fakehost's `ClusterState` built
//! from the same case, and its answer must equal kwctl's: the same JSON (list
//! items compared in name order, since the policy-server's cache answers in
//! hash order) or the same error text. One line per difference, then
//! `N passed, N failed` over the cases.

use serde_json::Value;
use std::path::Path;
use std::process::ExitCode;
use testhost::BoxError;
use testhost::case::{Case, case_files_of, case_label};
use testhost::session::{Response, exchanges};

/// A list answer's items in (namespace, name) order.
fn normalised(mut answer: Value) -> Value {
    if let Some(items) = answer.get_mut("items").and_then(Value::as_array_mut) {
        let key = |o: &Value| {
            let meta = &o["metadata"];
            (
                meta["namespace"].as_str().unwrap_or("").to_string(),
                meta["name"].as_str().unwrap_or("").to_string(),
            )
        };
        items.sort_by_key(key);
    }
    answer
}

/// The differences for one case: one line per exchange that differs.
fn differences(case: &Path, session: &Path) -> Result<(usize, Vec<String>), BoxError> {
    let case = Case::load(case)?;
    let cluster = case.cluster_state()?;
    let recorded = exchanges(session)?;
    let mut out = Vec::new();
    for (i, (request, kwctl)) in recorded.iter().enumerate() {
        let (operation, payload) = request.to_host_call()?;
        let ours = cluster.answer(operation, &serde_json::to_vec(&payload)?);
        let same = match (kwctl, &ours) {
            (Response::Success { payload }, Ok(bytes)) => {
                normalised(serde_json::from_str(payload)?)
                    == normalised(serde_json::from_slice(bytes)?)
            }
            (Response::Error { message }, Err(e)) => *message == e.to_string(),
            _ => false,
        };
        if !same {
            let ours = match ours {
                Ok(bytes) => format!("success {}", String::from_utf8_lossy(&bytes)),
                Err(e) => format!("error {e:?}"),
            };
            out.push(format!(
                "exchange {i} ({operation} {payload}): kwctl {kwctl:?}, ours {ours}"
            ));
        }
    }
    Ok((recorded.len(), out))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: host-vs-kwctl <sessions-dir> <cases-dir>...");
        return ExitCode::from(2);
    }
    let sessions = Path::new(&args[0]);
    let files = match case_files_of(&args[1..]) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("host-vs-kwctl: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed, mut compared) = (0usize, 0usize, 0usize);
    for file in files {
        let stem = case_label(&file);
        let session = sessions.join(format!("{stem}.yml"));
        match differences(&file, &session) {
            Ok((n, diffs)) if diffs.is_empty() => {
                passed += 1;
                compared += n;
            }
            Ok((n, diffs)) => {
                failed += 1;
                compared += n;
                for d in diffs {
                    println!("DIFF {stem}: {d}");
                }
            }
            Err(e) => {
                failed += 1;
                println!("DIFF {stem}: {e}");
            }
        }
    }
    println!("host-vs-kwctl: {compared} recorded host calls compared");
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
