"""Throwaway certificates, made with openssl in a test's folder."""

import subprocess


def openssl(folder, *args, input=None, check=False):
    """openssl with these arguments in `folder`: the CompletedProcess (text);
    with check, a non-zero exit raises CalledProcessError."""
    return subprocess.run(["openssl", *map(str, args)], capture_output=True, text=True, input=input, cwd=folder,
                          check=check)


def self_signed(folder, cn="policy-server"):
    """A self-signed RSA certificate for 127.0.0.1, valid a day: (cert.pem, key.pem) in `folder`.

    An end-entity certificate: rustls (kube-rs in policy-server, ureq in
    kop-serve) refuses a CA as a server's certificate."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    openssl(folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", key, "-out", cert,
            "-subj", f"/CN={cn}", "-addext", "subjectAltName=IP:127.0.0.1",
            "-addext", "basicConstraints=critical,CA:FALSE", check=True)
    return cert, key


def signed_server_certificate(folder, dns, name="tls", ca="ca"):
    """An EC key and a server certificate for DNS name `dns` and 127.0.0.1,
    signed by <ca>.crt and <ca>.key of `folder`: <name>.crt and <name>.key there."""
    openssl(folder, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{name}.key", check=True)
    openssl(folder, "req", "-new", "-key", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={dns}", check=True)
    (folder / f"{name}.ext").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage=serverAuth\nsubjectAltName=DNS:{dns},IP:127.0.0.1\n")
    openssl(folder, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-days", "2", "-sha256", "-extfile", f"{name}.ext", "-out", f"{name}.crt", check=True)
    return folder / f"{name}.crt", folder / f"{name}.key"
