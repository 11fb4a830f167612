"""The API's answers as dataclasses (docs/api.md, docs/openapi.yaml).
Each keeps the whole JSON object it was made from in `raw`, so a field the
client does not know yet is still reachable."""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union


def _str(d: Mapping[str, Any], k: str, default: str = "") -> str:
    v = d.get(k)
    return v if isinstance(v, str) else default


def _int(d: Mapping[str, Any], k: str, default: int = 0) -> int:
    v = d.get(k)
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _opt_int(d: Mapping[str, Any], k: str) -> Optional[int]:
    v = d.get(k)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _bool(d: Mapping[str, Any], k: str) -> bool:
    return d.get(k) is True


def _str_map(d: Mapping[str, Any], k: str) -> Dict[str, str]:
    v = d.get(k)
    return {str(a): str(b) for a, b in v.items()} if isinstance(v, dict) else {}


def _bytes(d: Mapping[str, Any], k: str) -> bytes:
    """The field k (UTF-8 text) or k_b64 (base64, bytes that are not
    UTF-8), as the gateway sends output, names and data."""
    if isinstance(d.get(k + "_b64"), str):
        return base64.b64decode(d[k + "_b64"])
    v = d.get(k)
    return v.encode("utf-8") if isinstance(v, str) else b""


@dataclass
class RestorePoint:
    checkpoint: str
    created_at: str


@dataclass
class Port:
    """A TCP port something in a running sandbox listens on (GET
    …/ports). reachable: bound to every address or the guest's own, so
    the gateway reaches it; url: its address through the gateway
    (unsigned)."""
    port: int
    address: str = ""
    reachable: bool = False
    url: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Port":
        return cls(port=_int(d, "port"), address=_str(d, "address"),
                   reachable=_bool(d, "reachable"), url=_str(d, "url"))


@dataclass
class PortUrl:
    """A port's URL through the gateway; expires_at (RFC 3339) when it is
    signed, else None."""
    url: str
    expires_at: Optional[str] = None


@dataclass
class WatchEvent:
    """A change in a watched directory: type create, write, remove,
    rename (the old name), chmod, or overflow (events were lost here;
    path is the watched directory). path: absolute, bytes when it is not
    UTF-8."""
    type: str
    path: Union[str, bytes]
    is_dir: bool = False
    time: str = ""


@dataclass
class Sandbox:
    """A sandbox (POST/GET /v1/sandboxes…). state: creating, running,
    paused, suspending, suspended, resuming, migrating, deleting, deleted,
    error or lost."""
    id: str
    state: str
    template: str = ""
    node: str = ""
    cpus: int = 0
    memory_mb: int = 0
    metadata: Dict[str, str] = field(default_factory=dict)
    idle_timeout_s: int = 0
    ttl_s: int = 0
    checkpoint_every_s: int = 0
    created_at: str = ""
    updated_at: str = ""
    error: Optional[str] = None
    network: Optional[Dict[str, Any]] = None
    restore_point: Optional[RestorePoint] = None
    public_ports: bool = False
    traffic_token: str = ""
    ports: List[Port] = field(default_factory=list)
    volumes: List[VolumeMount] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Sandbox":
        rp = d.get("restore_point")
        net = d.get("network")
        return cls(id=_str(d, "id"), state=_str(d, "state"), template=_str(d, "template"),
                   node=_str(d, "node"), cpus=_int(d, "cpus"), memory_mb=_int(d, "memory_mb"),
                   metadata=_str_map(d, "metadata"), idle_timeout_s=_int(d, "idle_timeout_s"),
                   ttl_s=_int(d, "ttl_s"), checkpoint_every_s=_int(d, "checkpoint_every_s"),
                   created_at=_str(d, "created_at"), updated_at=_str(d, "updated_at"),
                   error=d.get("error") if isinstance(d.get("error"), str) else None,
                   network=dict(net) if isinstance(net, dict) else None,
                   restore_point=RestorePoint(_str(rp, "checkpoint"), _str(rp, "created_at"))
                   if isinstance(rp, dict) else None,
                   public_ports=_bool(d, "public_ports"),
                   traffic_token=_str(d, "traffic_token"),
                   ports=[Port.from_json(p) for p in d.get("ports") or [] if isinstance(p, dict)],
                   volumes=[VolumeMount.from_json(v) for v in d.get("volumes") or []
                            if isinstance(v, dict)],
                   raw=dict(d))


@dataclass
class ExecResult:
    """A command run to completion (POST …/exec, JSON). stdout and stderr
    are the bytes as produced (the gateway keeps at most 16 MiB of each:
    `truncated`)."""
    exit_code: int
    signal: int
    timed_out: bool
    stdout: bytes
    stderr: bytes
    truncated: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.signal == 0 and not self.timed_out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ExecResult":
        return cls(exit_code=_int(d, "exit_code"), signal=_int(d, "signal"),
                   timed_out=_bool(d, "timed_out"), stdout=_bytes(d, "stdout"),
                   stderr=_bytes(d, "stderr"), truncated=_bool(d, "truncated"), raw=dict(d))


@dataclass(frozen=True)
class Output:
    """Output of a command as produced: stream is "stdout" or "stderr"
    (a tty's output is all stdout)."""
    stream: str
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Exit:
    """The last event of a command: how it ended."""
    exit_code: int
    signal: int
    timed_out: bool


ExecEvent = Union[Output, Exit]


@dataclass
class Process:
    """A background process (…/processes). exit_code and signal once it
    has exited (running false)."""
    pid: int
    running: bool
    cmd: List[str] = field(default_factory=list)
    tty: bool = False
    started_at: str = ""
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Process":
        cmd = d.get("cmd")
        if not isinstance(cmd, list) and isinstance(d.get("cmd_b64"), list):
            cmd = [base64.b64decode(a).decode("utf-8", errors="replace") for a in d["cmd_b64"]]
        return cls(pid=_int(d, "pid"), running=_bool(d, "running"),
                   cmd=[str(a) for a in cmd] if isinstance(cmd, list) else [],
                   tty=_bool(d, "tty"), started_at=_str(d, "started_at"),
                   exit_code=_opt_int(d, "exit_code"), signal=_opt_int(d, "signal"), raw=dict(d))


@dataclass
class FileInfo:
    """A directory entry or a stat: type is file, dir, symlink or other;
    name_bytes the name as stored (name is its UTF-8 reading);
    link_target for a symlink's stat."""
    name: str
    type: str
    size: int
    mode: int
    mtime: str
    name_bytes: bytes = b""
    link_target: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_dir(self) -> bool:
        return self.type == "dir"

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "FileInfo":
        name = _bytes(d, "name")
        target = None
        if "link_target" in d or "link_target_b64" in d:
            target = _bytes(d, "link_target").decode("utf-8", errors="replace")
        return cls(name=name.decode("utf-8", errors="replace"), type=_str(d, "type"),
                   size=_int(d, "size"), mode=_int(d, "mode"), mtime=_str(d, "mtime"),
                   name_bytes=name, link_target=target, raw=dict(d))


@dataclass
class Checkpoint:
    """A checkpoint of a sandbox: kind disk or full; stored: in the
    shared snapshot store (outlives its node)."""
    name: str
    kind: str
    created_at: str = ""
    stored: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Checkpoint":
        return cls(name=_str(d, "name"), kind=_str(d, "kind"), created_at=_str(d, "created_at"),
                   stored=_bool(d, "stored"), raw=dict(d))


@dataclass
class VolumeMount:
    """One volume of a sandbox (docs/api.md "Volumes"): name is a volume
    ("repo") or its snapshot ("repo@s1", read-only); slot: its VM disk."""
    name: str
    path: str
    read_only: bool = False
    slot: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "VolumeMount":
        return cls(name=_str(d, "name"), path=_str(d, "path"), read_only=_bool(d, "read_only"),
                   slot=_int(d, "slot"))


@dataclass
class Volume:
    """A project's persistent volume (GET /v1/volumes/{name}). node is ""
    until a sandbox first uses it; used_bytes None unless its node told;
    attached_sandbox None when no sandbox holds it; snapshots by name
    (only GET of one volume lists them)."""
    name: str
    id: str = ""
    size_mb: int = 0
    used_bytes: Optional[int] = None
    node: str = ""
    attached_sandbox: Optional[str] = None
    attached_read_only: List[str] = field(default_factory=list)
    snapshots: List[str] = field(default_factory=list)
    created_at: str = ""
    from_snapshot: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Volume":
        holder = d.get("attached_sandbox")
        return cls(name=_str(d, "name"), id=_str(d, "id"), size_mb=_int(d, "size_mb"),
                   used_bytes=_opt_int(d, "used_bytes"), node=_str(d, "node"),
                   attached_sandbox=holder if isinstance(holder, str) else None,
                   attached_read_only=[str(s) for s in d.get("attached_read_only") or []],
                   snapshots=[_str(s, "name") for s in d.get("snapshots") or []
                              if isinstance(s, dict)],
                   created_at=_str(d, "created_at"), from_snapshot=_str(d, "from_snapshot"),
                   raw=dict(d))


@dataclass
class Template:
    """A template version (docs/templates.md); ref is name:version."""
    name: str
    version: int
    ref: str = ""
    cpus: int = 0
    memory_mb: int = 0
    node: str = ""
    created_at: str = ""
    build_ms: int = 0
    spec: Dict[str, Any] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Template":
        spec = d.get("spec")
        return cls(name=_str(d, "name"), version=_int(d, "version"), ref=_str(d, "ref"),
                   cpus=_int(d, "cpus"), memory_mb=_int(d, "memory_mb"), node=_str(d, "node"),
                   created_at=_str(d, "created_at"), build_ms=_int(d, "build_ms"),
                   spec=dict(spec) if isinstance(spec, dict) else {}, raw=dict(d))
