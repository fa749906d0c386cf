//! Every case of `e2e.bats`, run in this repository's waPC host with the
//! same request, replay session and settings files that `kwctl` is given, so
//! CI exercises the sessions even where `kwctl` is absent. A session that
//! does not match the policy's real calls, in order, fails here.

use std::path::PathBuf;
use testhost::Policy;
use testhost::e2e::cases;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn e2e_bats_cases_pass_in_the_wapc_host() {
    let wasm = std::env::var_os("POLICY_WASM")
        .map_or_else(|| workspace().join("policy.wasm"), PathBuf::from);
    let policy = Policy::load(&wasm)
        .unwrap_or_else(|e| panic!("{e}: build it first with `make policy.wasm`"));
    let cases = cases(
        &workspace().join("e2e.bats"),
        &workspace().join("test_data"),
    )
    .expect("e2e.bats");
    assert!(
        cases.len() >= 15,
        "only {} cases read from e2e.bats",
        cases.len()
    );
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let outcome = case
                .run(&policy)
                .unwrap_or_else(|e| panic!("{}: no answer: {e}", case.title));
            case.mismatch(&outcome)
                .map(|why| format!("{}: {why}", case.title))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!("{} e2e.bats cases passed in the waPC host", cases.len());
}
