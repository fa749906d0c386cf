//! A small HTTP/1.1 server on std's `TcpListener`, over rustls when given a
//! certificate: a thread per connection, keep-alive, `Content-Length` and
//! chunked request bodies, `Expect: 100-continue`.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A request as read.
#[derive(Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, percent-encoded as sent, without the query.
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body, or `None` when it is larger than the limit given to `serve`
    /// (then it was read and dropped).
    pub body: Option<Vec<u8>>,
}

impl Request {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response.
#[derive(Debug)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// `content-type`, if there is a body.
    pub content_type: Option<&'static str>,
    /// Other headers.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, body: Vec<u8>) -> Self {
        Response {
            status,
            content_type: Some("application/json"),
            headers: Vec::new(),
            body,
        }
    }

    /// A plain-text response.
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Response {
            status,
            content_type: Some("text/plain; charset=utf-8"),
            headers: Vec::new(),
            body: body.into().into_bytes(),
        }
    }

    /// A response without a body.
    pub fn empty(status: u16) -> Self {
        Response {
            status,
            content_type: None,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
}

/// What answers requests.
pub type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// A rustls server configuration from PEM files: the certificate chain and
/// its private key. HTTP/1.1 only.
pub fn tls_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read certificate file {}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read key file {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("invalid certificate or key: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serves the listener's connections until the process ends.
pub fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    body_limit: usize,
    handler: Handler,
) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let (tls, handler) = (tls.clone(), handler.clone());
        let spawned = std::thread::Builder::new()
            .name("connection".into())
            .spawn(move || connection(stream, tls, body_limit, &handler));
        if let Err(e) = spawned {
            eprintln!("kop-serve: cannot start a connection thread: {e}");
        }
    }
}

fn connection(
    stream: TcpStream,
    tls: Option<Arc<rustls::ServerConfig>>,
    body_limit: usize,
    handler: &Handler,
) {
    // An idle keep-alive connection is closed after this long.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let _ = stream.set_nodelay(true);
    match tls {
        Some(config) => {
            let Ok(conn) = rustls::ServerConnection::new(config) else {
                return;
            };
            exchange(rustls::StreamOwned::new(conn, stream), body_limit, handler);
        }
        None => exchange(stream, body_limit, handler),
    }
}

/// Requests and answers on one connection, until either side closes it.
fn exchange<S: Read + Write>(stream: S, body_limit: usize, handler: &Handler) {
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader, body_limit) {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(status) => {
                let _ = write_response(reader.get_mut(), &Response::empty(status), true);
                return;
            }
        };
        let close = request
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        let response = handler(&request);
        if write_response(reader.get_mut(), &response, close).is_err() || close {
            return;
        }
    }
}

const MAX_HEAD: usize = 64 * 1024;

/// One request; `Ok(None)` at the end of the connection, `Err(status)` for
/// one that cannot be read.
fn read_request<S: Read + Write>(
    reader: &mut BufReader<S>,
    body_limit: usize,
) -> Result<Option<Request>, u16> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .take(MAX_HEAD as u64)
            .read_until(b'\n', &mut line)
            .map_err(|_| 400u16);
        match n {
            Ok(0) if head.is_empty() => return Ok(None),
            Ok(0) => return Err(400),
            Err(_) if head.is_empty() => return Ok(None),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        if head.is_empty() && (line == b"\r\n" || line == b"\n") {
            continue; // stray CRLF between requests
        }
        let end = line == b"\r\n" || line == b"\n";
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return Err(431);
        }
        if end {
            break;
        }
    }
    let text = String::from_utf8(head).map_err(|_| 400u16)?;
    let mut lines = text.lines();
    let mut first = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version)) = (first.next(), first.next(), first.next())
    else {
        return Err(400);
    };
    if !version.starts_with("HTTP/1.") {
        return Err(505);
    }
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(400u16)?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut request = Request {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("").to_string(),
        headers,
        body: Some(Vec::new()),
    };
    if request
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        let _ = reader.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        let _ = reader.get_mut().flush();
    }
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    request.body = if chunked {
        read_chunked(reader, body_limit)?
    } else {
        let length: usize = match request.header("content-length") {
            Some(l) => l.parse().map_err(|_| 400u16)?,
            None => 0,
        };
        if length > body_limit {
            // Read and dropped, so that the client hears the answer.
            std::io::copy(&mut reader.take(length as u64), &mut std::io::sink())
                .map_err(|_| 400u16)?;
            None
        } else {
            let mut body = vec![0; length];
            reader.read_exact(&mut body).map_err(|_| 400u16)?;
            Some(body)
        }
    };
    Ok(Some(request))
}

fn read_chunked<R: BufRead>(reader: &mut R, body_limit: usize) -> Result<Option<Vec<u8>>, u16> {
    let mut body = Vec::new();
    let mut over = false;
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line).map_err(|_| 400u16)?;
        let size_text = size_line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_text, 16).map_err(|_| 400u16)?;
        if size == 0 {
            // trailers, up to the empty line
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).map_err(|_| 400u16)? == 0 || line.trim().is_empty() {
                    return Ok((!over).then_some(body));
                }
            }
        }
        if over || body.len() + size > body_limit {
            // Read and dropped, so that the client hears the answer.
            over = true;
            body.clear();
            std::io::copy(&mut reader.take(size as u64), &mut std::io::sink())
                .map_err(|_| 400u16)?;
        } else {
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).map_err(|_| 400u16)?;
        }
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).map_err(|_| 400u16)?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

fn write_response<W: Write>(out: &mut W, response: &Response, close: bool) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    if let Some(t) = response.content_type {
        head.push_str(&format!("content-type: {t}\r\n"));
    }
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n", response.body.len()));
    if close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.write_all(&response.body)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stream reading from a buffer and writing to another.
    struct Duplex {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.output.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn reader(text: &str) -> BufReader<Duplex> {
        BufReader::new(Duplex {
            input: Cursor::new(text.as_bytes().to_vec()),
            output: Vec::new(),
        })
    }

    #[test]
    fn reads_requests_in_a_row() {
        let mut r = reader(
            "POST /validate/p?x=1 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}\
             POST /v HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
        );
        let first = read_request(&mut r, 100).unwrap().unwrap();
        assert_eq!(
            (first.method.as_str(), first.path.as_str()),
            ("POST", "/validate/p")
        );
        assert_eq!(first.header("content-type"), Some("application/json"));
        assert_eq!(first.body.as_deref(), Some(&b"{}"[..]));
        let second = read_request(&mut r, 100).unwrap().unwrap();
        assert_eq!(second.body.as_deref(), Some(&b"abc"[..]));
        assert!(String::from_utf8_lossy(&r.get_ref().output).contains("100 Continue"));
        assert!(read_request(&mut r, 100).unwrap().is_none());
    }

    #[test]
    fn a_body_over_the_limit_is_dropped() {
        let mut r = reader(
            "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789\
             POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n\
             GET /next HTTP/1.1\r\n\r\n",
        );
        assert!(read_request(&mut r, 5).unwrap().unwrap().body.is_none());
        assert!(read_request(&mut r, 5).unwrap().unwrap().body.is_none());
        assert_eq!(read_request(&mut r, 5).unwrap().unwrap().path, "/next");
    }
}
