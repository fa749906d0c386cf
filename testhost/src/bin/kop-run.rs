//! `kop-run <policy.wasm> <request.json>`: evaluates one request the way
//! `kwctl run` does, answering lookups from the file's `cluster` objects, and
//! prints the AdmissionResponse. The file holds `request`, `cluster` and
//! `settings` (the conformance case format; `expect` is ignored).

use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use testhost::Policy;
use testhost::case::Case;
use testhost::cluster::ClusterState;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [wasm, file] = args.as_slice() else {
        eprintln!("usage: kop-run <policy.wasm> <request.json>");
        return ExitCode::from(2);
    };
    let run = || -> Result<serde_json::Value, testhost::BoxError> {
        let policy = Policy::load(Path::new(wasm))?;
        let case = Case::load(Path::new(file))?;
        let settings = if case.settings.is_null() {
            json!({})
        } else {
            case.settings.clone()
        };
        let (verdict, _) = policy.validate(
            &case.request,
            &settings,
            ClusterState::from_json(&case.cluster)?,
        )?;
        let mut response = json!({"uid": case.request["uid"], "allowed": verdict.accepted});
        if !verdict.accepted {
            response["status"] = json!({"message": verdict.message, "code": verdict.code});
        }
        Ok(response)
    };
    match run() {
        Ok(response) => {
            println!("{response}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kop-run: {e}");
            ExitCode::FAILURE
        }
    }
}
