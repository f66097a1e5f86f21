#!/usr/bin/env python3
"""A small Hugging Face Hub for tests: the endpoints lerobot.cpp's hub client uses, served from
folders on disk, with the headers the real Hub sends (Python 3 standard library only).

  hub_server.py CONFIG.json PORT_FILE LOG_FILE

CONFIG: {"token": "...",                       # accepted bearer token (never logged)
         "repos": [{"type": "dataset"|"model", "id": "org/name",
                    "access": "public"|"private"|"gated",
                    "revisions": [{"commit": "<40 hex>", "dir": "/path",
                                   "branches": ["main"], "tags": ["v3.0"]}]}],
         "faults": {"<repo file path>": "slow_unranged"|"cut_once"|"corrupt"}}
Files ending in .parquet, .mp4, .safetensors or .bin are LFS: resolve answers 302 to a blob host
(another origin: http://localhost:PORT/lfs/<sha256>) with X-Linked-Etag / X-Linked-Size; other
files answer 200 with their git blob sha1 as ETag. Every request is logged as one JSON line.
"""
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
        self.lock = threading.Lock()
        self.blobs = {}  # sha256 -> (path, fault key)
        self.repos = {}
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
            self.repos[key] = dict(repo, revisions=revs)

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
        entry = {"method": self.command, "path": self.path, "status": status,
                 "range": self.headers.get("Range", ""),
                 "auth": "valid" if auth == "Bearer " + self.hub.token else ("other" if auth else "none")}
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
        if self.headers.get("Authorization", "") == "Bearer " + self.hub.token:
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
    Handler.hub = Hub(json.load(open(config_path)))
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
