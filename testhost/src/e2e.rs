//! The cases of `e2e.bats`, run in this host instead of `kwctl`.
//!
//! `e2e.bats` keeps to a small grammar (see its header): each `@test` calls
//! `evaluate <request> <session> [<settings>]` and one `assert_*` helper.
//! [`cases`] reads it, and [`E2eCase::run`] does what `kwctl run
//! --replay-host-capabilities-interactions` does: settings validated first,
//! then the request evaluated with every lookup answered from the session,
//! in order.

use crate::session::Session;
use crate::{BoxError, Policy, Verdict};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a case expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// `assert_allowed`
    Allowed,
    /// `assert_allowed_with_warnings '<warning>'...`: these warnings, in order.
    AllowedWithWarnings(Vec<String>),
    /// `assert_denied <code> '<message>'`
    Denied(u16, String),
    /// `assert_denied_containing <code> '<text>'`
    DeniedContaining(u16, String),
    /// `assert_settings_rejected '<text>'`
    SettingsRejected(String),
}

/// One `@test` of `e2e.bats`.
#[derive(Clone, Debug)]
pub struct E2eCase {
    /// The test's title.
    pub title: String,
    /// `test_data/<request>`
    pub request: PathBuf,
    /// `test_data/<session>`
    pub session: PathBuf,
    /// `test_data/<settings>`, if given.
    pub settings: Option<PathBuf>,
    /// The expected outcome.
    pub expect: Expect,
}

/// What `kwctl run` would report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The policy's answer, and how many recorded exchanges were left unused.
    Answered(Verdict, usize),
    /// `Provided settings are not valid: …`
    SettingsRejected(String),
}

/// Splits a line into words as the shell would, for the quoting used in
/// `e2e.bats`: single quotes (literal) and double quotes (with `\"`, `\\`).
fn shell_words(line: &str) -> Result<Vec<String>, BoxError> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            match c {
                c if c.is_whitespace() => break,
                '\'' => {
                    chars.next();
                    loop {
                        match chars.next() {
                            Some('\'') => break,
                            Some(c) => word.push(c),
                            None => return Err(format!("unterminated quote: {line}").into()),
                        }
                    }
                }
                '"' => {
                    chars.next();
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('\\') => match chars.next() {
                                Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                                Some(c) => {
                                    word.push('\\');
                                    word.push(c);
                                }
                                None => return Err(format!("unterminated quote: {line}").into()),
                            },
                            Some(c) => word.push(c),
                            None => return Err(format!("unterminated quote: {line}").into()),
                        }
                    }
                }
                '\\' => {
                    chars.next();
                    if let Some(c) = chars.next() {
                        word.push(c);
                    }
                }
                c => {
                    chars.next();
                    word.push(c);
                }
            }
        }
        words.push(word);
    }
    Ok(words)
}

/// A `@test` block being read: its title, `evaluate` arguments and assertion.
struct Block {
    title: String,
    evaluate: Option<[Option<String>; 3]>,
    expect: Option<Expect>,
}

/// Reads the cases of an `e2e.bats` file; paths are under `test_data`.
pub fn cases(bats: &Path, test_data: &Path) -> Result<Vec<E2eCase>, BoxError> {
    let text = std::fs::read_to_string(bats)
        .map_err(|e| format!("cannot read {}: {e}", bats.display()))?;
    let mut cases = Vec::new();
    let mut current: Option<Block> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("@test ") {
            let title = shell_words(rest.trim_end_matches('{'))?
                .into_iter()
                .next()
                .unwrap_or_default();
            current = Some(Block {
                title,
                evaluate: None,
                expect: None,
            });
            continue;
        }
        let Some(Block {
            title,
            evaluate,
            expect,
        }) = current.as_mut()
        else {
            continue;
        };
        if line == "}" {
            let (title, evaluate, expect) = (title.clone(), evaluate.take(), expect.take());
            current = None;
            let ([Some(request), Some(session), settings], Some(expect)) = (
                evaluate.ok_or_else(|| format!("{title}: no evaluate line"))?,
                expect,
            ) else {
                return Err(format!("{title}: needs an evaluate and an assert_* line").into());
            };
            cases.push(E2eCase {
                title,
                request: test_data.join(request),
                session: test_data.join(session),
                settings: settings.map(|s| test_data.join(s)),
                expect,
            });
            continue;
        }
        let words = shell_words(line)?;
        let code = |w: Option<&String>| -> Result<u16, BoxError> {
            Ok(w.ok_or_else(|| format!("{title}: a code is missing"))?
                .parse()?)
        };
        match words.first().map(String::as_str) {
            Some("evaluate") => {
                let arg = |i: usize| words.get(i).cloned();
                *evaluate = Some([arg(1), arg(2), arg(3)]);
            }
            Some("assert_allowed") => *expect = Some(Expect::Allowed),
            Some("assert_allowed_with_warnings") => {
                *expect = Some(Expect::AllowedWithWarnings(
                    words.get(1..).unwrap_or_default().to_vec(),
                ))
            }
            Some("assert_denied") => {
                *expect = Some(Expect::Denied(
                    code(words.get(1))?,
                    words.get(2).cloned().unwrap_or_default(),
                ))
            }
            Some("assert_denied_containing") => {
                *expect = Some(Expect::DeniedContaining(
                    code(words.get(1))?,
                    words.get(2).cloned().unwrap_or_default(),
                ))
            }
            Some("assert_settings_rejected") => {
                *expect = Some(Expect::SettingsRejected(
                    words.get(1).cloned().unwrap_or_default(),
                ))
            }
            _ => {}
        }
    }
    Ok(cases)
}

/// The AdmissionRequest of a request file: bare, or inside an AdmissionReview.
pub fn admission_request(path: &Path) -> Result<Value, BoxError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(if file["kind"] == "AdmissionReview" {
        file["request"].clone()
    } else {
        file
    })
}

impl E2eCase {
    /// Runs the case as `kwctl run` with a replay session would.
    pub fn run(&self, policy: &Policy) -> Result<Outcome, BoxError> {
        let settings: Value = match &self.settings {
            Some(path) => yaml_serde::from_str(
                &std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            )?,
            None => Value::Object(Default::default()),
        };
        let check = policy.validate_settings(&settings)?;
        if !check.valid {
            return Ok(Outcome::SettingsRejected(format!(
                "Provided settings are not valid: {}",
                check.message.unwrap_or_default()
            )));
        }
        let request = admission_request(&self.request)?;
        let instance = policy.instance(Session::load(&self.session)?)?;
        let verdict = instance.validate(&request, &settings)?;
        Ok(Outcome::Answered(verdict, instance.unused_exchanges()))
    }

    /// `None` when the outcome is what the case expects, else why not.
    pub fn mismatch(&self, outcome: &Outcome) -> Option<String> {
        let ok = match (&self.expect, outcome) {
            (Expect::Allowed, Outcome::Answered(v, _)) => v.accepted,
            (Expect::AllowedWithWarnings(want), Outcome::Answered(v, _)) => {
                v.accepted && v.warnings.as_deref().unwrap_or_default() == want.as_slice()
            }
            (Expect::Denied(code, message), Outcome::Answered(v, _)) => {
                !v.accepted && v.code == Some(*code) && v.message.as_deref() == Some(message)
            }
            (Expect::DeniedContaining(code, part), Outcome::Answered(v, _)) => {
                !v.accepted
                    && v.code == Some(*code)
                    && v.message
                        .as_deref()
                        .is_some_and(|m| m.contains(part.as_str()))
            }
            (Expect::SettingsRejected(part), Outcome::SettingsRejected(message)) => {
                message.contains(part.as_str())
            }
            _ => false,
        };
        match outcome {
            _ if !ok => Some(format!("expected {:?}, got {outcome:?}", self.expect)),
            Outcome::Answered(_, unused) if *unused > 0 => Some(format!(
                "{unused} recorded exchange(s) were never asked for: the session does not match the policy's calls"
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_follow_the_shell() {
        assert_eq!(
            shell_words(r#"assert_denied 403 'a "b" c' "can't \"x\"" d\e"#).unwrap(),
            ["assert_denied", "403", "a \"b\" c", "can't \"x\"", "de"]
        );
        assert!(shell_words("x 'open").is_err());
    }
}
