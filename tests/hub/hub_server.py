#!/usr/bin/env python3
"""A small Hugging Face Hub for tests: the endpoints lerobot.cpp's hub client uses, served from
folders on disk, with the headers the real Hub sends (Python 3 standard library only).

  hub_server.py CONFIG.json PORT_FILE LOG_FILE

CONFIG: {"token": "...",                       # accepted bearer token (never logged)
         "repos": [{"type": "dataset"|"model", "id": "org/name",
                    "access": "public"|"private"|"gated",
                    "revisions": [{"commit": "<40 hex>", "dir": "/path",
                                   "branches": ["main"], "tags": ["v3.0"]}]}],
         "faults": {"<repo file path>": "slow_unranged"|"cut_once"|"corrupt"},
         "users": [{"token": "...", "name": "alice", "role": "write"|"read",
                    "orgs": [{"name": "acme", "roleInOrg": "write"}]}],   # whoami-v2 and uploads
         "multipart_threshold": 1048576,   # LFS objects above this go up in parts (optional)
         "refused_commits": {"<repo id>:<commit summary>": "<message>"}}   # such commits answer 403 (optional)
Files ending in .parquet, .mp4, .safetensors or .bin are LFS: resolve answers 302 to a blob host
(another origin: http://localhost:PORT/lfs/<sha256>) with X-Linked-Etag / X-Linked-Size; other
files answer 200 with their git blob sha1 as ETag. Every request is logged as one JSON line.

Uploads as the Hub takes them from huggingface_hub: POST /api/repos/create, /api/<type>s/<id>/
preupload/<rev> (LFS when the suffix is one of the above, the file is 10 MiB or more, or its sample
has a NUL byte), <id>.git/info/lfs/objects/batch (upload hrefs on the blob host, basic or
multipart, then verify), /api/<type>s/<id>/commit/<rev> (NDJSON: header with parentCommit, file,
lfsFile) and /tag/<rev>. A commit becomes a new revision that the download endpoints above serve;
GET /api/<type>s/<id>/commits/<rev> lists the commits of a branch, newest first.
"""
import base64
import hashlib
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

LFS_SUFFIXES = (".parquet", ".mp4", ".safetensors", ".bin")


class Hub:
    def __init__(self, config):
        self.config = config
        self.token = config.get("token", "")
        self.faults = dict(config.get("faults", {}))
        self.cut_done = set()
        self.lock = threading.RLock()
        self.blobs = {}  # sha256 -> (path, fault key)
        self.repos = {}
        self.users = {u["token"]: u for u in config.get("users", [])}
        self.multipart_threshold = config.get("multipart_threshold")
        self.store = config.get("upload_dir", "")
        self.uploads = {}  # sha256 -> path of a verified LFS object
        self.parts = {}    # sha256 -> {part number: bytes}
        self.counter = 0
        for repo in config["repos"]:
            key = (repo["type"], repo["id"])
            revs = []
            for rev in repo["revisions"]:
                files = {}
                root = rev["dir"]
                for dirpath, _, names in os.walk(root):
                    for n in names:
                        full = os.path.join(dirpath, n)
                        rel = os.path.relpath(full, root).replace(os.sep, "/")
                        data = open(full, "rb").read()
                        lfs = rel.endswith(LFS_SUFFIXES)
                        sha256 = hashlib.sha256(data).hexdigest()
                        git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                        files[rel] = {"path": full, "size": len(data), "lfs": lfs, "sha256": sha256, "git": git}
                        if lfs:
                            self.blobs[sha256] = (full, rel)
                revs.append(dict(rev, files=files))
            for rev in revs:
                rev.setdefault("summary", "initial commit")
                rev.setdefault("parent", None)
            self.repos[key] = dict(repo, revisions=revs)

    def save_blob(self, data):
        sha = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.store, "objects", sha)
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.rename(path + ".tmp", path)
        return sha, path

    def file_entry(self, rel, path, data=None, lfs=None):
        data = open(path, "rb").read() if data is None else data
        sha256 = hashlib.sha256(data).hexdigest()
        git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        lfs = rel.endswith(LFS_SUFFIXES) if lfs is None else lfs
        if lfs:
            self.blobs[sha256] = (path, rel)
        return {"path": path, "size": len(data), "lfs": lfs, "sha256": sha256, "git": git}

    def new_commit_id(self, *parts):
        self.counter += 1
        h = hashlib.sha1(("%d:%f:" % (self.counter, time.time()) + ":".join(parts)).encode())
        return h.hexdigest()

    def find_revision(self, repo, revision):
        for rev in repo["revisions"]:
            if revision == rev["commit"] or revision in rev.get("branches", []) or revision in rev.get("tags", []):
                return rev
        return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub = None
    log_file = None

    def log_message(self, *args):  # the JSON log below replaces the default one
        pass

    def record(self, status):
        auth = self.headers.get("Authorization", "")
        valid = auth == "Bearer " + self.hub.token or (auth.startswith("Bearer ") and auth[7:] in self.hub.users)
        entry = {"method": self.command, "path": self.path, "status": status,
                 "range": self.headers.get("Range", ""),
                 "auth": "valid" if valid else ("other" if auth else "none")}
        with self.hub.lock, open(self.log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, status, body=b"", headers=None, content_type="application/json"):
        self.record(status)
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error(self, status, code, message):
        self.send(status, json.dumps({"error": message}).encode(), {"X-Error-Code": code})

    def authorized(self, repo):
        access = repo.get("access", "public")
        if access == "public":
            return True
        if self.headers.get("Authorization", "") == "Bearer " + self.hub.token or self.user() is not None:
            return True
        if access == "private":
            self.error(401, "RepoNotFound", "Repository not found or invalid credentials")
        else:
            self.error(403, "GatedRepo", "Access to this gated repository is restricted")
        return False

    def lookup(self, kind, org, name):
        repo = self.hub.repos.get((kind, org + "/" + name))
        if repo is None:
            self.error(404, "RepoNotFound", "Repository not found")
        elif not self.authorized(repo):
            return None
        return repo

    def do_HEAD(self):
        self.route()

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route_write()

    def do_PUT(self):
        self.route_write()

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n else b""

    def user(self):
        auth = self.headers.get("Authorization", "")
        return self.hub.users.get(auth[7:]) if auth.startswith("Bearer ") else None

    def can_write(self, repo_id):
        """The token's user may write to repo_id's namespace; else sends 401/403 and returns False."""
        u = self.user()
        if u is None:
            self.error(401, "Unauthorized", "Invalid credentials in Authorization header")
            return False
        ns = repo_id.split("/")[0]
        roles = {o["name"]: o.get("roleInOrg", "write") for o in u.get("orgs", [])}
        if u.get("role", "write") == "read" or (ns != u["name"] and roles.get(ns, "read") == "read"):
            self.error(403, "Forbidden", "You don't have the rights to write to " + repo_id)
            return False
        return True

    def write_repo(self, kind, repo_id):
        repo = self.hub.repos.get((kind, repo_id))
        if repo is None:
            self.error(404, "RepoNotFound", "Repository not found")
            return None
        return repo if self.can_write(repo_id) else None

    def route_write(self):
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        data = self.body()
        try:
            if parts[0] == "lfs-upload":
                return self.lfs_put(parts[1:], data)
            if parts[:3] == ["api", "repos", "create"]:
                return self.create_repo(json.loads(data))
            if parts[0] == "api" and parts[1] in ("models", "datasets") and len(parts) >= 6:
                kind, repo_id, op, rev = parts[1][:-1], parts[2] + "/" + parts[3], parts[4], "/".join(parts[5:])
                if op == "preupload":
                    return self.preupload(kind, repo_id, rev, json.loads(data))
                if op == "commit":
                    return self.commit(kind, repo_id, rev, data)
                if op == "tag":
                    return self.tag(kind, repo_id, rev, json.loads(data))
            kind = "model"
            if parts[0] == "datasets":
                kind, parts = "dataset", parts[1:]
            if len(parts) == 6 and parts[1].endswith(".git") and parts[2:5] == ["info", "lfs", "objects"]:
                repo_id = parts[0] + "/" + parts[1][:-4]
                if parts[5] == "batch":
                    return self.lfs_batch(kind, repo_id, json.loads(data))
                if parts[5] == "verify":
                    return self.lfs_verify(kind, repo_id, json.loads(data))
        except (IndexError, KeyError, ValueError) as e:
            return self.error(400, "BadRequest", "malformed request: %s" % e)
        self.error(404, "EntryNotFound", "no such endpoint")

    def whoami(self):
        u = self.user()
        if u is None:
            return self.error(401, "Unauthorized", "Invalid credentials in Authorization header")
        info = {"type": "user", "name": u["name"],
                "orgs": [{"name": o["name"], "roleInOrg": o.get("roleInOrg", "write")} for o in u.get("orgs", [])],
                "auth": {"type": "access_token", "accessToken": {"displayName": "test", "role": u.get("role", "write")}}}
        self.send(200, json.dumps(info).encode())

    def create_repo(self, payload):
        kind = payload.get("type") or "model"
        repo_id = (payload.get("organization") or (self.user() or {}).get("name", "")) + "/" + payload["name"]
        if not self.can_write(repo_id):
            return
        prefix = "" if kind == "model" else kind + "s/"
        url = "http://127.0.0.1:%d/%s%s" % (self.server.server_address[1], prefix, repo_id)
        with self.hub.lock:
            if (kind, repo_id) in self.hub.repos:
                return self.send(409, json.dumps({"error": "You already created this %s repo" % kind, "url": url}).encode(),
                                 {"X-Error-Code": "RepoExists"})
            attrs = b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.bin filter=lfs diff=lfs merge=lfs -text\n"
            _, path = self.hub.save_blob(attrs)
            rev = {"commit": self.hub.new_commit_id(repo_id), "branches": ["main"], "tags": [], "summary": "initial commit",
                   "parent": None, "files": {".gitattributes": self.hub.file_entry(".gitattributes", path, attrs, False)}}
            access = "private" if payload.get("visibility") == "private" else "public"
            self.hub.repos[(kind, repo_id)] = {"type": kind, "id": repo_id, "access": access, "revisions": [rev]}
        self.send(200, json.dumps({"url": url, "name": repo_id, "id": "x" * 24}).encode())

    def preupload(self, kind, repo_id, rev, payload):
        repo = self.write_repo(kind, repo_id)
        if repo is None:
            return
        head = self.hub.find_revision(repo, rev)
        out = []
        for f in payload["files"]:
            sample = base64.b64decode(f["sample"])
            lfs = f["path"].endswith(LFS_SUFFIXES) or f["size"] >= 10 * 1024 * 1024 or b"\0" in sample
            entry = {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
            meta = head["files"].get(f["path"]) if head else None
            if meta:
                entry["oid"] = meta["sha256"] if meta["lfs"] else meta["git"]
            out.append(entry)
        self.send(200, json.dumps({"files": out, "commitOid": head["commit"] if head else None}).encode())

    def lfs_batch(self, kind, repo_id, payload):
        if self.write_repo(kind, repo_id) is None:
            return
        if self.headers.get("Content-Type") != "application/vnd.git-lfs+json":
            return self.error(415, "BadRequest", "LFS batch requests are application/vnd.git-lfs+json")
        blob_host = "http://localhost:%d" % self.server.server_address[1]
        hub = "http://127.0.0.1:%d" % self.server.server_address[1]
        prefix = "" if kind == "model" else "datasets/"
        objects = []
        for o in payload["objects"]:
            oid, size = o["oid"], o["size"]
            entry = {"oid": oid, "size": size, "authenticated": True}
            if oid in self.hub.uploads:
                objects.append(entry)  # already stored: no actions
                continue
            upload = {"href": blob_host + "/lfs-upload/" + oid}
            threshold = self.hub.multipart_threshold
            if threshold and size > threshold:
                chunk = threshold
                header = {"chunk_size": str(chunk)}
                for i in range((size + chunk - 1) // chunk):
                    header[str(i + 1)] = blob_host + "/lfs-upload/%s/part/%d" % (oid, i + 1)
                upload = {"href": blob_host + "/lfs-upload/%s/complete" % oid, "header": header}
            entry["actions"] = {"upload": upload,
                                "verify": {"href": hub + "/" + prefix + repo_id + ".git/info/lfs/objects/verify"}}
            objects.append(entry)
        self.send(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                  content_type="application/vnd.git-lfs+json")

    def lfs_put(self, parts, data):
        oid = parts[0]
        if self.command == "PUT" and len(parts) == 1:
            if hashlib.sha256(data).hexdigest() != oid:
                return self.error(400, "BadDigest", "the body's sha256 is not the object id")
            self.hub.save_blob(data)
            return self.send(200, b"")
        if self.command == "PUT" and len(parts) == 3 and parts[1] == "part":
            self.hub.parts.setdefault(oid, {})[int(parts[2])] = data
            return self.send(200, b"", {"ETag": '"%s"' % hashlib.md5(data).hexdigest()})
        if self.command == "POST" and len(parts) == 2 and parts[1] == "complete":
            payload = json.loads(data)
            got = self.hub.parts.get(oid, {})
            etags = {p["partNumber"]: p["etag"] for p in payload["parts"]}
            if sorted(etags) != sorted(got) or any(etags[n] != '"%s"' % hashlib.md5(got[n]).hexdigest() for n in got):
                return self.error(400, "BadRequest", "parts do not match the uploaded ones")
            whole = b"".join(got[n] for n in sorted(got))
            if hashlib.sha256(whole).hexdigest() != oid:
                return self.error(400, "BadDigest", "the parts' sha256 is not the object id")
            self.hub.save_blob(whole)
            return self.send(200, b"{}")
        self.error(404, "EntryNotFound", "no such upload")

    def lfs_verify(self, kind, repo_id, payload):
        if self.write_repo(kind, repo_id) is None:
            return
        oid = payload["oid"]
        path = os.path.join(self.hub.store, "objects", oid)
        if not os.path.exists(path) or os.path.getsize(path) != payload["size"]:
            return self.error(404, "EntryNotFound", "object %s was not uploaded" % oid)
        self.hub.uploads[oid] = path
        self.send(200, b"{}")

    def commit(self, kind, repo_id, rev, data):
        repo = self.write_repo(kind, repo_id)
        if repo is None:
            return
        if self.headers.get("Content-Type") != "application/x-ndjson":
            return self.error(415, "BadRequest", "a commit is application/x-ndjson")
        lines = [json.loads(l) for l in data.decode().splitlines() if l.strip()]
        if not lines or lines[0]["key"] != "header":
            return self.error(400, "BadRequest", "the first line must be the header")
        header = lines[0]["value"]
        refusal = self.hub.config.get("refused_commits", {}).get(repo_id + ":" + header.get("summary", ""))
        if refusal is not None:
            return self.error(403, "Forbidden", refusal)
        with self.hub.lock:
            head = self.hub.find_revision(repo, rev)
            if head is None:
                return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
            parent = header.get("parentCommit")
            if parent and parent != head["commit"]:
                return self.error(412, "PreconditionFailed", "A commit has happened since. Please refresh and try again.")
            files = dict(head["files"])
            ops = []
            for line in lines[1:]:
                v = line["value"]
                if line["key"] == "file":
                    content = base64.b64decode(v["content"])
                    _, path = self.hub.save_blob(content)
                    files[v["path"]] = self.hub.file_entry(v["path"], path, content, False)
                    ops.append({"key": "file", "path": v["path"], "size": len(content)})
                elif line["key"] == "lfsFile":
                    path = self.hub.uploads.get(v["oid"])
                    if path is None or os.path.getsize(path) != v["size"]:
                        return self.error(400, "BadRequest", "LFS object %s of %s is not uploaded" % (v["oid"], v["path"]))
                    files[v["path"]] = self.hub.file_entry(v["path"], path, None, True)
                    ops.append({"key": "lfsFile", "path": v["path"], "oid": v["oid"], "size": v["size"]})
                elif line["key"] == "deletedFile":
                    files.pop(v["path"], None)
                else:
                    return self.error(400, "BadRequest", "unknown operation " + line["key"])
            commit = self.hub.new_commit_id(repo_id, header["summary"])
            branches = [b for b in head.get("branches", []) if b == rev] or ["main"]
            head["branches"] = [b for b in head.get("branches", []) if b not in branches]
            repo["revisions"].insert(0, {"commit": commit, "branches": branches, "tags": [], "files": files,
                                         "summary": header["summary"], "description": header.get("description", ""),
                                         "parent": head["commit"], "operations": ops})
        prefix = "" if kind == "model" else "datasets/"
        url = "http://127.0.0.1:%d/%s%s/commit/%s" % (self.server.server_address[1], prefix, repo_id, commit)
        self.send(200, json.dumps({"success": True, "commitOid": commit, "commitUrl": url}).encode())

    def tag(self, kind, repo_id, rev, payload):
        repo = self.write_repo(kind, repo_id)
        if repo is None:
            return
        with self.hub.lock:
            target = self.hub.find_revision(repo, rev)
            if target is None:
                return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
            if self.hub.find_revision(repo, payload["tag"]) is not None:
                return self.error(409, "Conflict", "Tag reference exists already")
            target.setdefault("tags", []).append(payload["tag"])
        self.send(200, b"{}")

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        try:
            if parts[0] == "api":
                return self.api(parts[1:], urllib.parse.parse_qs(url.query))
            if parts[0] == "lfs":
                return self.serve_blob(parts[1])
            kind = "model"
            if parts[0] == "datasets":
                kind, parts = "dataset", parts[1:]
            if len(parts) >= 5 and parts[2] == "resolve":
                return self.resolve(kind, parts[0], parts[1], parts[3], "/".join(parts[4:]))
        except (IndexError, KeyError):
            pass
        self.error(404, "EntryNotFound", "no such endpoint")

    def api(self, parts, query):
        if parts[0] == "whoami-v2":
            return self.whoami()
        kind = {"models": "model", "datasets": "dataset"}.get(parts[0])
        repo = self.lookup(kind, parts[1], parts[2]) if kind else None
        if repo is None:
            return
        if parts[3] == "refs":
            refs = {"branches": [], "tags": [], "converts": []}
            for rev in repo["revisions"]:
                for b in rev.get("branches", []):
                    refs["branches"].append({"name": b, "ref": "refs/heads/" + b, "targetCommit": rev["commit"]})
                for t in rev.get("tags", []):
                    refs["tags"].append({"name": t, "ref": "refs/tags/" + t, "targetCommit": rev["commit"]})
            return self.send(200, json.dumps(refs).encode())
        rev = self.hub.find_revision(repo, parts[4])
        if rev is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + parts[4])
        if parts[3] == "commits":
            out, rev_ = [], rev
            while rev_ is not None:
                out.append({"id": rev_["commit"], "title": rev_.get("summary", ""), "message": rev_.get("description", ""),
                            "operations": rev_.get("operations", [])})
                parent = rev_.get("parent")
                rev_ = next((r for r in repo["revisions"] if r["commit"] == parent), None) if parent else None
            return self.send(200, json.dumps(out).encode())
        if parts[3] == "revision":
            info = {"id": repo["id"], "sha": rev["commit"], "private": repo.get("access") == "private",
                    "siblings": [{"rfilename": f} for f in sorted(rev["files"])]}
            return self.send(200, json.dumps(info).encode())
        if parts[3] == "tree":
            prefix = "/".join(parts[5:])
            out, dirs = [], set()
            for f, meta in sorted(rev["files"].items()):
                if prefix and not f.startswith(prefix + "/"):
                    continue
                d = os.path.dirname(f)
                while d and d != prefix:
                    dirs.add(d)
                    d = os.path.dirname(d)
                entry = {"type": "file", "oid": meta["git"], "size": meta["size"], "path": f}
                if meta["lfs"]:
                    entry["lfs"] = {"oid": meta["sha256"], "size": meta["size"], "pointerSize": 134}
                out.append(entry)
            out += [{"type": "directory", "oid": "0" * 40, "size": 0, "path": d} for d in sorted(dirs)]
            return self.send(200, json.dumps(out).encode())
        self.error(404, "EntryNotFound", "no such endpoint")

    def resolve(self, kind, org, name, revision, filename):
        repo = self.lookup(kind, org, name)
        if repo is None:
            return
        rev = self.hub.find_revision(repo, revision)
        if rev is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + revision)
        meta = rev["files"].get(filename)
        if meta is None:
            return self.error(404, "EntryNotFound", filename + " does not exist")
        headers = {"X-Repo-Commit": rev["commit"]}
        if meta["lfs"]:
            host = "http://localhost:%d" % self.server.server_address[1]
            headers.update({"X-Linked-Etag": '"%s"' % meta["sha256"], "X-Linked-Size": str(meta["size"]),
                            "ETag": '"%s"' % meta["git"], "Location": host + "/lfs/" + meta["sha256"]})
            return self.send(302, b"", headers)
        headers["ETag"] = '"%s"' % meta["git"]
        self.serve_bytes(meta["path"], filename, headers)

    def serve_blob(self, sha256):
        if sha256 not in self.hub.blobs:
            return self.error(404, "EntryNotFound", "no such blob")
        path, rel = self.hub.blobs[sha256]
        self.serve_bytes(path, rel, {"ETag": '"%s"' % sha256})

    def serve_bytes(self, path, rel, headers):
        data = open(path, "rb").read()
        fault = self.hub.faults.get(rel)
        if fault == "corrupt" and data:
            data = data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[len(data) // 2 + 1:]
        start, status = 0, 200
        rng = self.headers.get("Range", "")
        if rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                return self.send(416, b"", {"Content-Range": "bytes */%d" % len(data)})
            status = 206
            headers["Content-Range"] = "bytes %d-%d/%d" % (start, len(data) - 1, len(data))
        body = data[start:]
        if self.command == "HEAD":
            headers["Content-Length"] = str(len(body))
            self.record(status)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            return
        self.record(status)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if fault == "cut_once" and rel not in self.hub.cut_done:
            self.hub.cut_done.add(rel)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "slow_unranged" and status == 200:
            for i in range(0, len(body), 4096):
                self.wfile.write(body[i:i + 4096])
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(body)


def main():
    config_path, port_file, log_file = sys.argv[1:4]
    config = json.load(open(config_path))
    config.setdefault("upload_dir", os.path.join(os.path.dirname(os.path.abspath(log_file)), "uploads"))
    Handler.hub = Hub(config)
    Handler.log_file = log_file
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
