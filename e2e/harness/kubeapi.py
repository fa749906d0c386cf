"""A small Kubernetes API client for the tests: JSON over HTTPS, by kubeconfig.

Reads the current context of a kubeconfig (server, CA, and a client
certificate or a bearer token, inline or as files), and sends requests with
optional impersonation. Standard library only.
"""

import base64
import http.client
import json
import ssl
import tempfile
import urllib.parse
from pathlib import Path

import yaml


def _material(entry, key, folder):
    """A file path for `<key>` or `<key>-data` of a kubeconfig entry, or None."""
    if entry.get(f"{key}-data"):
        path = Path(folder) / key
        path.write_bytes(base64.b64decode(entry[f"{key}-data"]))
        return str(path)
    return entry.get(key)


class Api:
    """Requests to the API server a kubeconfig names, as its current user."""

    def __init__(self, kubeconfig, keep_alive=False):
        """`keep_alive`: one connection for every request (one thread's client)."""
        config = yaml.safe_load(Path(kubeconfig).read_text())
        context_name = config.get("current-context") or config["contexts"][0]["name"]
        context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
        self._folder = tempfile.TemporaryDirectory(prefix="kop-kubeapi-")
        self.server = cluster["server"].rstrip("/")
        self.tls = ssl.create_default_context(cafile=_material(cluster, "certificate-authority", self._folder.name))
        cert = _material(user, "client-certificate", self._folder.name)
        if cert:
            self.tls.load_cert_chain(cert, _material(user, "client-key", self._folder.name))
        self.token = user.get("token")
        self.keep_alive = keep_alive
        self._kept = None

    def request(self, method, path, body=None, *, params=None, user=None, groups=(), content_type=None, timeout=30):
        """(code, JSON body or text, warnings) of one request; an HTTP error is a code, not an exception.

        `user` and `groups` impersonate (the kubeconfig's user needs that right:
        system:masters has it).
        """
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = [("Accept", "application/json"), ("Content-Length", str(len(data)))]
        if body is not None:
            headers.append(("Content-Type", content_type or "application/json"))
        if self.token:
            headers.append(("Authorization", f"Bearer {self.token}"))
        if user:
            headers.append(("Impersonate-User", user))
            headers.extend(("Impersonate-Group", g) for g in groups)
        parsed = urllib.parse.urlsplit(self.server)
        if self.keep_alive:
            headers.append(("Connection", "keep-alive"))
        for attempt in (1, 2):
            connection = self._kept or http.client.HTTPSConnection(
                parsed.hostname, parsed.port, context=self.tls, timeout=timeout)
            reused, self._kept = self._kept is not None, None
            try:
                connection.timeout = timeout
                if connection.sock is not None:
                    connection.sock.settimeout(timeout)
                connection.putrequest(method, parsed.path + target, skip_accept_encoding=True)
                for name, value in headers:
                    connection.putheader(name, value)
                connection.endheaders(data)
                response = connection.getresponse()
                raw = response.read()
                code, warnings = response.status, response.headers.get_all("Warning") or []
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                connection.close()
                if reused and attempt == 1:
                    continue  # the server closed a kept connection: once more on a new one
                raise
            except BaseException:
                connection.close()
                raise
            if self.keep_alive and not response.will_close:
                self._kept = connection
            else:
                connection.close()
            break
        warnings = [_warning_text(w) for w in warnings]
        try:
            return code, json.loads(raw) if raw else None, warnings
        except ValueError:
            return code, raw.decode(errors="replace"), warnings


def _warning_text(header):
    """The text of a `Warning: 299 - "text"` header."""
    parts = header.split(" ", 2)
    if len(parts) == 3 and parts[2].startswith('"') and parts[2].endswith('"'):
        return parts[2][1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return header
