"""The module through a real OCI registry, as users install it (`make e2e-oci`,
`python3 -m pytest e2e/suites/test_oci.py`).

A registry on 127.0.0.1: Distribution's (the CNCF reference registry, v3.1.2,
e2e/oci/registry, built by `make oci-bin` from e2e/oci/go.mod; filesystem
storage in the suite's folder, plain HTTP). Then:

- `push`: the module pushed with oras (v1.3.4, same go.mod) as `kwctl push`
  writes it: the config blob `{}` (application/vnd.wasm.config.v1+json), one
  layer, the module (application/vnd.wasm.content.layer.v1+wasm), no layer
  annotation, the manifest's annotations those of the module's metadata with
  the multi-line ones dropped, every value trimmed and
  org.opencontainers.image.source added from io.kubewarden.policy.source
  (crates/kwctl/src/push.rs, build_oci_annotations), the manifest JSON
  compact with its keys sorted (oci-client's serialisation), sent as
  application/vnd.oci.image.manifest.v1+json. The module is
  annotated-policy.wasm where kwctl is found (its annotations read from its
  io.kubewarden.metadata section), else policy.wasm with metadata.yml's
  annotations (what `kwctl annotate` embeds, less kwctl's own version);
- `pull`: the manifest and both blobs fetched back by a plain HTTP GET and by
  oras: bytes, digests (the registry's Docker-Content-Digest included),
  media types, sizes and annotations as pushed; metadata.yml's one-line
  annotations all there, the usage (multi-line) not;
- `kwctl` (kwctl found): `kwctl push` of the same module to another
  repository: its digest and manifest equal oras's byte for byte, its
  annotations metadata.yml's plus io.kubewarden.kwctl; `kwctl pull` of the
  oras-pushed module gives the module's bytes;
- `policy_server` (kwctl and policy-server found): deploy/'s policies
  rendered as Kubewarden's controller renders them, the module
  `registry://127.0.0.1:<port>/kube-ovn-policy:v1`, a sources.yaml naming the
  registry in `insecure_sources`: policy-server downloads the module (the
  file it stores has the module's digest) and refuses the seed's demo
  (test_data/pod-static.yaml, the cluster holding
  static-7584848b74-fw9dm.default) with the seed's message;
- `signature` (cosign found too: `make cosign-bin`, local only): a key pair
  made with `cosign generate-key-pair` (empty password), the pushed module
  signed by digest (`cosign sign --key`, no transparency log), its signature
  in the registry as the tag `sha256-<digest>.sig`; `kwctl verify` with a
  verification config naming the public key (`kind: pubKey`) passes, and
  policy-server started with it (`--verification-path`) serves the demo; the
  unsigned module (kwctl's push) is refused by both (`no signatures found`,
  policy-server exits at start); the tag re-pushed with one annotation more
  (the same layer, another manifest) is refused by both. Both are given a
  Sigstore trust config of a throwaway CA and Rekor key (`trust_config`):
  without one they fetch Sigstore's by TUF, which needs the internet.

Parts whose program is not found print one `SKIPPED: <test>: <program> not
found` line each. Paths of the programs: `E2E_OCI_BIN` (the registry and
oras, default target/oci/bin), `COSIGN` (default target/oci/cosign-bin/cosign),
kwctl and policy-server on PATH.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from e2e.harness import POLICY_FILES, ROOT
from e2e.harness.apiserver import Cluster
from e2e.harness.certificates import self_signed
from e2e.harness.checks import Checks
from e2e.harness.cluster import SEED_MESSAGE
from e2e.harness.processes import die_with_parent, free_port, stop_process, wait_for
from e2e.harness.servers import PolicyServer, route
from e2e.harness.wasm import custom_section
from e2e.harness.webhooks import load_cluster_admission_policies, policy_id, render_policies_yml

# kwctl's push (crates/policy-fetcher/src/registry/mod.rs, do_push, with
# oci-client's manifest constants).
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA_TYPE = "application/vnd.wasm.config.v1+json"
LAYER_MEDIA_TYPE = "application/vnd.wasm.content.layer.v1+wasm"
CONFIG = b"{}"
POLICY_SOURCE = "io.kubewarden.policy.source"
IMAGE_SOURCE = "org.opencontainers.image.source"
KWCTL_VERSION = "io.kubewarden.kwctl"
USAGE = "io.kubewarden.policy.usage"
METADATA_SECTION = "io.kubewarden.metadata"
REPO = "kube-ovn-policy"
KWCTL_REPO = "kube-ovn-policy-kwctl"
TAG = "v1"
SEED_CASE = ROOT / "tests/conformance/240-seed-example-conflict.json"


def plain(text):
    """Text without the terminal colours kwctl and policy-server write whatever NO_COLOR says."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def metadata_section(module):
    """The JSON of the module's io.kubewarden.metadata custom section (`kwctl annotate`), or None."""
    body = custom_section(module, METADATA_SECTION)
    return None if body is None else json.loads(body)


def oci_annotations(annotations):
    """build_oci_annotations of kwctl's push.rs: one-line values only, trimmed (Rust's
    trim: Unicode white space), the image source added from the policy source."""
    kept = {k: v.strip() for k, v in annotations.items() if len(v.splitlines()) <= 1}
    if POLICY_SOURCE in kept and IMAGE_SOURCE not in kept:
        kept[IMAGE_SOURCE] = kept[POLICY_SOURCE]
    return kept


def trust_config(folder):
    """A Sigstore ClientTrustConfig of a throwaway Fulcio CA and Rekor key (openssl), signing
    nothing: with none, kwctl and policy-server fetch the public-good instance's trust root by
    TUF, which needs the internet, and sigstore-rs wants a CA and a Rekor key in any root even
    when a public key, not a certificate, is verified. The file's path."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", folder / "unused-ca.key", "-out", folder / "unused-ca.pem", "-days", "2",
                    "-subj", "/CN=kop-e2e-oci unused Fulcio CA"], check=True, capture_output=True)
    ca = subprocess.run(["openssl", "x509", "-in", folder / "unused-ca.pem", "-outform", "DER"], check=True,
                        capture_output=True).stdout
    rekor = subprocess.run(["openssl", "pkey", "-in", folder / "unused-ca.key", "-pubout", "-outform", "DER"],
                           check=True, capture_output=True).stdout

    def b64(data):
        return base64.b64encode(data).decode()

    since = {"start": "2020-01-01T00:00:00Z"}
    config = {
        "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
        "trustedRoot": {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [{"baseUrl": "https://rekor.invalid", "hashAlgorithm": "SHA2_256",
                       "publicKey": {"rawBytes": b64(rekor), "keyDetails": "PKIX_ECDSA_P256_SHA_256", "validFor": since},
                       "logId": {"keyId": b64(hashlib.sha256(rekor).digest())}}],
            "certificateAuthorities": [{"subject": {"organization": "kop-e2e-oci", "commonName": "unused"},
                                        "uri": "https://fulcio.invalid", "validFor": since,
                                        "certChain": {"certificates": [{"rawBytes": b64(ca)}]}}],
            "ctlogs": [], "timestampAuthorities": [],
        },
        "signingConfig": {
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": [], "oidcUrls": [], "rekorTlogUrls": [], "tsaUrls": [],
            "rekorTlogConfig": {"selector": "ANY"}, "tsaConfig": {"selector": "ANY"},
        },
    }
    path = folder / "sigstore-trust-config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def kwctl_manifest(module, annotations):
    """The manifest `kwctl push` writes for the module, byte for byte (oci-client's
    OciImageManifest::build, serialised by serde_json: compact, keys sorted, no
    top-level mediaType, no layer annotations; no annotations key when there are none)."""
    manifest = {
        "schemaVersion": 2,
        "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": sha256(CONFIG), "size": len(CONFIG)},
        "layers": [{"mediaType": LAYER_MEDIA_TYPE, "digest": sha256(module), "size": len(module)}],
    }
    if annotations:
        manifest["annotations"] = annotations
    return json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class Registry:
    """Distribution's registry on 127.0.0.1, storing in `folder`."""

    def __init__(self, binary, folder):
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        config = {
            "version": 0.1,
            "log": {"level": "info", "formatter": "text"},
            "storage": {"filesystem": {"rootdirectory": str(folder / "storage")}, "delete": {"enabled": True}},
            "http": {"addr": self.host, "secret": "kop-e2e-oci"},
        }
        (folder / "registry.yml").write_text(yaml.safe_dump(config))
        self.log = folder / "registry.log"
        # No OpenTelemetry exporter: nothing listens for one here.
        env = dict(os.environ, OTEL_TRACES_EXPORTER="none", OTEL_SDK_DISABLED="true")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([binary, "serve", str(folder / "registry.yml")], stdout=out,
                                         stderr=subprocess.STDOUT, env=env, preexec_fn=die_with_parent)
        wait_for("the registry", lambda: self.get("/v2/")[0] == 200, 30, {"registry": (self.proc, self.log)})

    def get(self, path, accept=MANIFEST_MEDIA_TYPE):
        """GET http://<registry><path>: (status, body, headers); (None, b"", {}) when nothing answers."""
        req = urllib.request.Request(f"http://{self.host}{path}", headers={"Accept": accept})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers
        except OSError:
            return None, b"", {}

    def stop(self):
        stop_process(self.proc)


class Suite(Checks):
    SHOWN = 140

    def __init__(self, args, folder):
        super().__init__(args, None, folder)
        self.registry = Registry(args.registry, folder)
        self.ref = f"{self.registry.host}/{REPO}:{TAG}"
        self.sources = folder / "sources.yaml"
        # kwctl and policy-server: plain HTTP (and TLS unverified) to this registry only.
        self.sources.write_text(yaml.safe_dump({"insecure_sources": [self.registry.host]}))
        self.kwctl_found = shutil.which(args.kwctl) is not None
        self.metadata = yaml.safe_load((ROOT / "metadata.yml").read_text())
        annotated = Path(args.annotated)
        if self.kwctl_found and annotated.is_file():
            self.module_path = annotated
            self.module = annotated.read_bytes()
            section = metadata_section(self.module)
            if section is None:
                raise RuntimeError(f"{annotated}: no {METADATA_SECTION} section (make annotated-policy.wasm)")
            self.annotations = oci_annotations(section.get("annotations") or {})
        else:
            self.module_path = Path(args.module)
            self.module = self.module_path.read_bytes()
            self.annotations = oci_annotations(self.metadata.get("annotations") or {})
        self.manifest = kwctl_manifest(self.module, self.annotations)
        self.digest = sha256(self.manifest)
        self.note(f"module {self.module_path.name}, {len(self.module)} bytes, {sha256(self.module)}; "
                  f"manifest {self.digest}")

    def note(self, text):
        print(f"# {text}", flush=True)

    def run(self, *cmd, env=None, timeout=120, input=None):
        """A program's CompletedProcess, whatever its exit status."""
        return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, input=input,
                              cwd=self.folder, env=dict(os.environ, NO_COLOR="1", **(env or {})))

    def oras(self, *args, **kw):
        return self.run(self.args.oras, *args, **kw)

    def kwctl(self, *args, **kw):
        return self.run(self.args.kwctl, *args, **kw)

    def oras_push(self, ref, module, manifest):
        """The module's two blobs, then the manifest, pushed with oras; oras's output for the manifest."""
        blobs = self.folder / "blobs"
        blobs.mkdir(exist_ok=True)
        (blobs / "config.json").write_bytes(CONFIG)
        (blobs / "module.wasm").write_bytes(module)
        (blobs / "manifest.json").write_bytes(manifest)
        repo = ref.rsplit(":", 1)[0]
        for name in ("config.json", "module.wasm"):
            done = self.oras("blob", "push", "--plain-http", repo, blobs / name)
            if done.returncode != 0:
                raise RuntimeError(f"oras blob push {name}: {done.stderr.strip()}")
        done = self.oras("manifest", "push", "--plain-http", "--media-type", MANIFEST_MEDIA_TYPE, ref,
                         blobs / "manifest.json")
        if done.returncode != 0:
            raise RuntimeError(f"oras manifest push: {done.stderr.strip()}")
        return done.stdout

    # --- the tests ------------------------------------------------------------

    def test_push(self):
        out = self.oras_push(self.ref, self.module, self.manifest)
        self.check("push: oras names the manifest's digest", self.digest in out, out.strip())
        status, body, headers = self.registry.get(f"/v2/{REPO}/tags/list", accept="application/json")
        self.check("push: the registry lists the tag", status == 200 and json.loads(body).get("tags") == [TAG],
                   f"{status} {body[:200]!r}")

    def test_pull(self):
        reg = self.registry
        status, body, headers = reg.get(f"/v2/{REPO}/manifests/{TAG}")
        self.check("pull: the manifest by tag, byte for byte as pushed", status == 200 and body == self.manifest,
                   f"{status}, {len(body)} bytes" if status == 200 else f"{status} {body[:200]!r}")
        self.check("pull: the registry's Docker-Content-Digest", headers.get("Docker-Content-Digest") == self.digest,
                   str(headers.get("Docker-Content-Digest")))
        self.check("pull: served as an OCI image manifest", headers.get("Content-Type") == MANIFEST_MEDIA_TYPE,
                   str(headers.get("Content-Type")))
        status, by_digest, _ = reg.get(f"/v2/{REPO}/manifests/{self.digest}")
        self.check("pull: the manifest by digest", status == 200 and by_digest == self.manifest, str(status))
        manifest = json.loads(body or b"{}")
        config, layers = manifest.get("config") or {}, manifest.get("layers") or []
        self.check("pull: config media type, digest, size",
                   config == {"mediaType": CONFIG_MEDIA_TYPE, "digest": sha256(CONFIG), "size": 2}, json.dumps(config))
        expected_layer = {"mediaType": LAYER_MEDIA_TYPE, "digest": sha256(self.module), "size": len(self.module)}
        self.check("pull: one layer, the module's media type, digest, size", layers == [expected_layer],
                   json.dumps(layers))
        status, blob, headers = reg.get(f"/v2/{REPO}/blobs/{sha256(self.module)}", accept="*/*")
        self.check("pull: the layer blob is the module", status == 200 and blob == self.module
                   and headers.get("Docker-Content-Digest") == sha256(self.module), f"{status}, {len(blob)} bytes")
        status, blob, _ = reg.get(f"/v2/{REPO}/blobs/{sha256(CONFIG)}", accept="*/*")
        self.check("pull: the config blob is {}", status == 200 and blob == CONFIG, f"{status} {blob[:40]!r}")

        # The same through oras, another client.
        done = self.oras("manifest", "fetch", "--plain-http", self.ref)
        self.check("pull: oras manifest fetch, byte for byte", done.returncode == 0
                   and done.stdout.encode() == self.manifest, done.stderr.strip()[-300:])
        out = self.folder / "oras-pulled.wasm"
        done = self.oras("blob", "fetch", "--plain-http", "--output", out,
                         f"{self.registry.host}/{REPO}@{sha256(self.module)}")
        self.check("pull: oras blob fetch, the module's bytes", done.returncode == 0 and out.is_file()
                   and out.read_bytes() == self.module, done.stderr.strip()[-300:])

        # The metadata: metadata.yml's one-line annotations, the usage left out.
        annotations = manifest.get("annotations") or {}
        ours = {k: v.strip() for k, v in (self.metadata.get("annotations") or {}).items()}
        one_line = {k: v for k, v in ours.items() if len(v.splitlines()) <= 1}
        missing = {k: v for k, v in one_line.items() if annotations.get(k) != v}
        self.check("pull: metadata.yml's one-line annotations, as written", bool(one_line) and not missing,
                   f"{len(one_line)} annotations" if not missing else f"differ: {missing}")
        multi = sorted(set(ours) - set(one_line))
        self.check("pull: no multi-line annotation (kwctl drops them)",
                   not any(k in annotations for k in multi) and USAGE not in annotations,
                   f"left out: {', '.join(multi) or 'none'}; usage absent")
        self.check("pull: org.opencontainers.image.source is the policy's source",
                   annotations.get(IMAGE_SOURCE) == ours.get(POLICY_SOURCE) is not None,
                   str(annotations.get(IMAGE_SOURCE)))

    def test_kwctl(self):
        reg = self.registry
        done = self.kwctl("push", "--sources-path", self.sources, self.module_path,
                          f"registry://{reg.host}/{KWCTL_REPO}:{TAG}")
        expected = f"Policy successfully pushed: {reg.host}/{KWCTL_REPO}@{self.digest}"
        self.check("kwctl: kwctl push names oras's digest", done.returncode == 0 and expected in done.stdout,
                   (done.stdout.strip() or done.stderr.strip())[-400:])
        status, body, headers = reg.get(f"/v2/{KWCTL_REPO}/manifests/{TAG}")
        self.check("kwctl: its manifest equals oras's byte for byte", status == 200 and body == self.manifest,
                   f"{len(body)} bytes" if body == self.manifest else f"{status}\nkwctl: {body!r}\noras:  {self.manifest!r}")
        self.check("kwctl: the registry's content type is oras's", headers.get("Content-Type") == MANIFEST_MEDIA_TYPE,
                   str(headers.get("Content-Type")))
        # io.kubewarden.kwctl: the version of the kwctl that annotated the module.
        annotated_by = (metadata_section(self.module).get("annotations") or {}).get(KWCTL_VERSION)
        annotations = json.loads(body or b"{}").get("annotations") or {}
        ours = oci_annotations(self.metadata.get("annotations") or {})
        extra = {k: v for k, v in annotations.items() if k not in ours}
        self.check("kwctl: its annotations are metadata.yml's and io.kubewarden.kwctl",
                   {k: v for k, v in annotations.items() if k in ours} == ours
                   and extra == {KWCTL_VERSION: annotated_by}
                   and re.fullmatch(r"\d+\.\d+\.\d+\S*", annotated_by or "") is not None,
                   f"kwctl {extra.get(KWCTL_VERSION)}" if extra.keys() == {KWCTL_VERSION} else json.dumps(extra))
        out = self.folder / "kwctl-pulled.wasm"
        done = self.kwctl("pull", "--sources-path", self.sources, "-o", out, f"registry://{self.ref}")
        self.check("kwctl: kwctl pull of the oras-pushed module gives its bytes",
                   done.returncode == 0 and out.is_file() and sha256(out.read_bytes()) == sha256(self.module),
                   (done.stderr.strip())[-400:])

    def serve_seed(self, name, module_ref, verification=None, trust=None):
        """policy-server serving deploy/'s policies from `module_ref` (a registry:// reference),
        with a verification config if given: (its answer to the seed's demo, the server's folder),
        or (the RuntimeError's text, folder) when it does not start."""
        case = json.loads(SEED_CASE.read_text())
        folder = self.folder / name
        folder.mkdir()
        cert, key = self_signed(folder)
        caps = load_cluster_admission_policies(POLICY_FILES)
        policies = render_policies_yml(caps, module_ref)
        rules = {policy_id(c): c["spec"].get("rules") or [] for c in caps}
        extra = ["--sources-path", self.sources]
        if verification:
            extra += ["--verification-path", verification, "--sigstore-trust-config", trust]
        try:
            server = PolicyServer(self.args.policy_server, folder, policies, Cluster(case["cluster"]), cert, key,
                                  extra_args=extra)
        except RuntimeError as e:
            return str(e), folder
        try:
            answer, _ = server.review(route(case["request"], rules), case["request"])
        finally:
            server.stop()
        return answer, folder

    def check_seed(self, what, answer, folder):
        demo = yaml.safe_load((ROOT / "test_data/pod-static.yaml").read_text())
        request = json.loads(SEED_CASE.read_text())["request"]["object"]
        same = all(request["metadata"].get(k) == demo["metadata"].get(k) for k in ("name", "namespace", "annotations"))
        ok = isinstance(answer, dict) and same and answer.get("allowed") is False \
            and (answer.get("status") or {}).get("message") == SEED_MESSAGE
        self.check(f"{what}: the seed's demo refused with the seed's message", ok,
                   answer.get("status", {}).get("message", "") if isinstance(answer, dict) else answer[-600:])
        stored = [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size == len(self.module)
                  and sha256(p.read_bytes()) == sha256(self.module)]
        self.check(f"{what}: the module it downloaded has the module's digest", bool(stored),
                   str(stored[0].relative_to(folder)) if stored else f"no such file under {folder}")

    def test_policy_server(self):
        answer, folder = self.serve_seed("policy-server", f"registry://{self.ref}")
        self.check_seed("policy_server", answer, folder)

    def test_signature(self):
        cosign = self.args.cosign
        env = {"COSIGN_PASSWORD": ""}
        done = self.run(cosign, "generate-key-pair", env=env)
        pub = self.folder / "cosign.pub"
        if not self.check("signature: cosign generate-key-pair", done.returncode == 0 and pub.is_file(),
                          "cosign.key, cosign.pub" if done.returncode == 0 else done.stderr.strip()[-300:]):
            return
        signed = f"{self.registry.host}/{REPO}@{self.digest}"
        started = time.monotonic()
        done = self.run(cosign, "sign", "--key", self.folder / "cosign.key", "--tlog-upload=false",
                        "--allow-http-registry", "--allow-insecure-registry", "--yes", signed, env=env)
        self.check("signature: cosign sign of the pushed module", done.returncode == 0,
                   f"{time.monotonic() - started:.1f} s" if done.returncode == 0 else done.stderr.strip()[-600:])
        sig_tag = self.digest.replace(":", "-") + ".sig"
        status, body, _ = self.registry.get(f"/v2/{REPO}/manifests/{sig_tag}")
        layers = json.loads(body).get("layers", []) if status == 200 else []
        self.check("signature: the signature is in the registry", status == 200 and len(layers) == 1
                   and "dev.cosignproject.cosign/signature" in (layers[0].get("annotations") or {}),
                   f"{REPO}:{sig_tag}" if status == 200 else str(status))

        trust = trust_config(self.folder)
        verification = self.folder / "verification.yml"
        verification.write_text(yaml.safe_dump({
            "apiVersion": "v1",
            "allOf": [{"kind": "pubKey", "owner": "kop-e2e-oci", "key": pub.read_text()}],
        }))

        def verify(ref):
            return self.kwctl("verify", "--sources-path", self.sources, "--verification-config-path", verification,
                              "--sigstore-trust-config", trust, f"registry://{ref}")

        done = verify(self.ref)
        self.check("signature: kwctl verify passes the signed module", done.returncode == 0
                   and "Policy successfully verified" in plain(done.stderr),
                   "Policy successfully verified" if done.returncode == 0 else plain(done.stderr)[-600:])
        unsigned = f"{self.registry.host}/{KWCTL_REPO}:{TAG}"
        self.refused_by_kwctl("the unsigned module", verify(unsigned), unsigned)
        if self.args.policy_server:
            answer, folder = self.serve_seed("verified", f"registry://{self.ref}", verification, trust)
            self.check_seed("signature: policy-server verifying", answer, folder)
            answer, _ = self.serve_seed("unsigned", f"registry://{unsigned}", verification, trust)
            self.refused_by_policy_server("the unsigned module", answer, unsigned)

        # The tag re-pushed: the same layer, one annotation more, so another manifest.
        annotations = dict(self.annotations, **{"io.kubewarden.policy.version": "0.0.0-repushed"})
        manifest = kwctl_manifest(self.module, annotations)
        self.oras_push(self.ref, self.module, manifest)
        status, body, _ = self.registry.get(f"/v2/{REPO}/manifests/{TAG}")
        self.check("signature: the tag re-pushed names another manifest", body == manifest
                   and sha256(manifest) != self.digest, sha256(body))
        self.refused_by_kwctl("the re-pushed module", verify(self.ref), self.ref)
        if self.args.policy_server:
            answer, _ = self.serve_seed("repushed", f"registry://{self.ref}", verification, trust)
            self.refused_by_policy_server("the re-pushed module", answer, self.ref)

    def refused_by_kwctl(self, what, done, ref):
        why = f"no signatures found for image: {ref}"
        self.check(f"signature: kwctl verify refuses {what}", done.returncode != 0 and why in plain(done.stderr),
                   why if done.returncode else "exit 0")

    def refused_by_policy_server(self, what, answer, ref):
        """policy-server exits at start, naming a policy it cannot verify (serve_seed gave the
        error's text)."""
        why = f"cannot be verified: no signatures found for image: {ref}"
        self.check(f"signature: policy-server refuses {what}", isinstance(answer, str) and why in plain(answer),
                   why if isinstance(answer, str) else f"it served: {answer}")


def arguments():
    """Where the programs are (the suite's settings)."""
    bin_dir = Path(os.environ.get("E2E_OCI_BIN", ROOT / "target/oci/bin"))
    return types.SimpleNamespace(
        registry=str(bin_dir / "registry"), oras=str(bin_dir / "oras"),
        module=str(ROOT / "policy.wasm"), annotated=str(ROOT / "annotated-policy.wasm"),
        kwctl="kwctl", policy_server=shutil.which("policy-server"),
        cosign=os.environ.get("COSIGN", str(ROOT / "target/oci/cosign-bin/cosign")),
    )


@pytest.fixture(scope="module")
def oci():
    """The registry, started once for the module's tests, which build on each other in order."""
    args = arguments()
    for program in (args.registry, args.oras):
        if not Path(program).is_file():
            pytest.fail(f"{program}: not found (make oci-bin)")
    folder = Path(tempfile.mkdtemp(prefix="kop-oci-e2e-"))
    started = time.monotonic()
    suite = Suite(args, folder)
    try:
        yield suite
    finally:
        if suite.failed:
            print(f"--- registry\n{suite.registry.log.read_text(errors='replace')[-2000:]}", file=sys.stderr)
        suite.registry.stop()
        shutil.rmtree(folder, ignore_errors=True)
        print(f"# {time.monotonic() - started:.0f} s in all")


def test_push(oci, counted):
    counted(oci).test_push()


def test_pull(oci, counted):
    counted(oci).test_pull()


@pytest.mark.requires("kwctl")
def test_kwctl(oci, counted):
    counted(oci).test_kwctl()


@pytest.mark.requires("kwctl", "policy-server")
def test_policy_server(oci, counted):
    counted(oci).test_policy_server()


@pytest.mark.requires("kwctl")
def test_signature(oci, counted):
    if not (Path(oci.args.cosign).is_file() or shutil.which(oci.args.cosign)):
        pytest.skip("cosign not found (make cosign-bin)")
    if not oci.args.policy_server:
        print("SKIPPED: test_oci.py::test_signature (its policy-server part): policy-server not found", flush=True)
    counted(oci).test_signature()
