//! The comparison behind `make gojson-diff` and the `go_json` fuzz target:
//! what `upstream::go_json` (and the policy's readers built on it) make of
//! a text, against what Go makes of it (e2e/gojson, run as a child process
//! that answers one hex line with one JSON line).

pub mod generate;

use kube_ovn_policy::checks::static_ip::networks::{
    NETWORKS, NadKind, NadLoad, nad_load, null_selection, parse_network_annotation,
};
use kube_ovn_policy::upstream::go_json::{
    self, Error, PluginConf, net_conf_list, network_selections, plugin_conf,
};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

fn error(e: Error) -> Value {
    match e {
        Error::Syntax => json!("syntax"),
        Error::Type => json!("type"),
    }
}

fn plugin(p: &PluginConf) -> Value {
    json!({"type": p.kind, "ipam": p.ipam_type})
}

/// What the Rust side makes of one input, in the Go program's shape.
pub fn rust_outcome(input: &[u8]) -> Value {
    let sel = match network_selections(input) {
        Ok(list) => Value::Array(
            list.iter()
                .map(|s| match s {
                    None => Value::Null,
                    Some(s) => json!({
                        "name": s.name, "namespace": s.namespace, "interface": s.interface,
                        "ips": s.ips, "mac": s.mac,
                    }),
                })
                .collect(),
        ),
        Err(e) => error(e),
    };
    let conf = match plugin_conf(input) {
        Ok(p) => plugin(&p),
        Err(e) => error(e),
    };
    let list = match net_conf_list(input) {
        Ok(l) => {
            json!({"plugins": l.plugins.map(|ps| ps.iter().map(|p| p.as_ref().map_or(Value::Null, plugin)).collect::<Vec<_>>())})
        }
        Err(e) => error(e),
    };
    let mut outcome = json!({"sel": sel, "conf": conf, "list": list});
    // The policy's readers take annotations and configs as text: valid
    // UTF-8, and an empty annotation is never parsed (`networks::entries`).
    if let Ok(text) = std::str::from_utf8(input) {
        if !text.is_empty() {
            outcome["pna"] = selections(text);
        }
        outcome["nad"] = json!(match nad_load(text) {
            NadLoad::Error => "error",
            NadLoad::Panic => "panic",
            NadLoad::Kind(NadKind::Ovn) => "ovn",
            NadLoad::Kind(NadKind::Ipam) => "ipam",
            NadLoad::Other => "none",
        });
    }
    outcome
}

/// `networks::parse_network_annotation` and its crash guard, in the Go
/// program's `pna` shape (no `mac`: the policy's entries do not keep it).
fn selections(text: &str) -> Value {
    let annotations = [(NETWORKS.to_string(), text.to_string())]
        .into_iter()
        .collect();
    if null_selection(&annotations).is_some() {
        return json!("panic");
    }
    match parse_network_annotation(text, "pod-ns") {
        None => json!("error"),
        Some(entries) => Value::Array(
            entries
                .iter()
                .map(|e| json!({"name": e.name, "namespace": e.namespace, "interface": e.interface, "ips": e.ips}))
                .collect(),
        ),
    }
}

/// Go's answer with `null` string lists read as empty, as the policy
/// reads them (nil and empty are the same to every reader).
fn normalise(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "ips" && v.is_null() {
                    *v = json!([]);
                }
                if key == "pna" {
                    for entry in v.as_array_mut().into_iter().flatten() {
                        entry.as_object_mut().map(|e| e.remove("mac"));
                    }
                }
                normalise(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// The first field where Go and Rust differ on `input`, described.
pub fn compare(input: &[u8], mut go: Value) -> Result<(), String> {
    normalise(&mut go);
    let rust = rust_outcome(input);
    for key in ["sel", "conf", "list", "pna", "nad"] {
        if rust.get(key).is_none() {
            continue;
        }
        let (g, r) = (&go[key], &rust[key]);
        if g != r {
            return Err(format!(
                "input {:?} (hex {}): {key}: Go {g}, Rust {r}",
                String::from_utf8_lossy(input),
                hex(input)
            ));
        }
    }
    Ok(())
}

/// Lower-case hex, as the Go program reads its inputs.
pub fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// The Go program, running: one input in, one answer out.
pub struct Oracle {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Oracle {
    /// Starts the Go program at `path`, answering each line as it comes.
    pub fn start(path: &str) -> std::io::Result<Oracle> {
        let mut child = Command::new(path)
            .arg("-flush")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = BufWriter::new(child.stdin.take().ok_or(std::io::ErrorKind::BrokenPipe)?);
        let stdout = BufReader::new(child.stdout.take().ok_or(std::io::ErrorKind::BrokenPipe)?);
        Ok(Oracle {
            child,
            stdin,
            stdout,
        })
    }

    /// Go's answer for one input.
    pub fn ask(&mut self, input: &[u8]) -> std::io::Result<Value> {
        writeln!(self.stdin, "{}", hex(input))?;
        self.stdin.flush()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        serde_json::from_str(&line).map_err(std::io::Error::other)
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Go's answers for many inputs at once: the program reads them all from
/// a pipe a thread fills while its answers are read here.
pub fn ask_all(path: &str, inputs: &[Vec<u8>]) -> std::io::Result<Vec<Value>> {
    let mut child = Command::new(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdin = child.stdin.take().ok_or(std::io::ErrorKind::BrokenPipe)?;
    let stdout = child.stdout.take().ok_or(std::io::ErrorKind::BrokenPipe)?;
    let lines: Vec<String> = inputs.iter().map(|i| hex(i)).collect();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let mut stdin = BufWriter::new(stdin);
        for line in lines {
            writeln!(stdin, "{line}")?;
        }
        stdin.flush()
    });
    let answers = BufReader::new(stdout)
        .lines()
        .map(|line| serde_json::from_str(&line?).map_err(std::io::Error::other))
        .collect::<std::io::Result<Vec<Value>>>()?;
    writer
        .join()
        .map_err(|_| std::io::Error::other("writer thread panicked"))??;
    let status = child.wait()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "{path} exited with {status}"
        )));
    }
    if answers.len() != inputs.len() {
        return Err(std::io::Error::other(format!(
            "{path} answered {} of {} inputs",
            answers.len(),
            inputs.len()
        )));
    }
    Ok(answers)
}

/// Checks `go_json` on one input alone: no panic, and linear (a
/// sanity bound on the work per byte is left to the fuzzer's timeout).
pub fn decode_all(input: &[u8]) {
    let _ = go_json::unmarshal(input, &go_json::NETWORK_SELECTION_ELEMENT);
    let _ = rust_outcome(input);
}
