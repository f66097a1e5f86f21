"""A stand-in for the `wandb` package, for lerobot.cpp's W&B tests (the W&B service is not reachable
from the tests). It has the calls LeRobot's WandBLogger makes (init, log, Artifact, log_artifact,
Video, finish, run) and records each into $STANDIN_WANDB_DIR/run-<pid>.json, rewritten after every
call: the init arguments, every logged key and step, the artifacts with their files, finish.

$STANDIN_WANDB_KILL_AT_LOG=N: the process kills itself (SIGKILL) at its N-th log call, as a W&B
side that dies mid-run.
"""
import json
import os
import signal

_record = {"init": None, "logs": [], "artifacts": [], "finished": False, "env_silent": None}
run = None


def _save():
    out = os.environ.get("STANDIN_WANDB_DIR")
    if not out:
        return
    path = os.path.join(out, f"run-{os.getpid()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(_record, f, indent=1, default=str)
    os.replace(path + ".tmp", path)


class _Run:
    def __init__(self, run_id, mode):
        self.id = run_id
        self._mode = mode

    def get_url(self):
        return None if self._mode == "offline" else f"https://wandb.invalid/runs/{self.id}"


def init(**kwargs):
    global run
    _record["init"] = kwargs
    _record["env_silent"] = os.environ.get("WANDB_SILENT")
    run = _Run(kwargs.get("id") or "standin0", kwargs.get("mode"))
    _save()
    return run


class Video:
    def __init__(self, path, fps=None, format=None):
        self.path, self.fps, self.format = path, fps, format

    def as_record(self):
        return {"video": self.path, "fps": self.fps, "format": self.format, "exists": os.path.isfile(self.path)}


def log(data=None, step=None, **kwargs):
    data = {k: (v.as_record() if isinstance(v, Video) else v) for k, v in (data or {}).items()}
    _record["logs"].append({"step": step, "data": data})
    _save()
    kill_at = int(os.environ.get("STANDIN_WANDB_KILL_AT_LOG", "0"))
    if kill_at and len(_record["logs"]) >= kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


class Artifact:
    def __init__(self, name, type=None):
        self.name, self.type, self.files = name, type, []

    def add_file(self, path):
        path = str(path)
        with open(path, "rb") as f:  # wandb reads (hashes) the file when it is added
            size = len(f.read())
        self.files.append({"path": path, "size": size})


def log_artifact(artifact):
    _record["artifacts"].append({"name": artifact.name, "type": artifact.type, "files": artifact.files})
    _save()


def finish():
    _record["finished"] = True
    _save()
