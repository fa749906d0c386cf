//! `kop-serve`: a stand-in for Kubewarden's policy-server (see
//! the `kop_serve` library), for tests where policy-server is not available.
//!
//! ```text
//! KUBECONFIG=kubeconfig kop-serve --addr 127.0.0.1 --port 8443 --readiness-probe-port 8081 \
//!     --policies policies.yml --cert-file cert.pem --key-file key.pem
//! ```

fn main() -> std::process::ExitCode {
    kop_serve::main()
}
