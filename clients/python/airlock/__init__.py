"""A client of airlock's REST API (docs/api.md), standard library only.

    from airlock import Client
    c = Client("http://127.0.0.1:7070", api_key)
    sb = c.sandboxes.create()
    print(c.exec.run(sb.id, ["uname", "-a"]).stdout_text)
"""
from .client import Client
from .errors import AirlockError
from .sse import SseEvent, parse_sse
from .streams import ExecStream
from .types import (Checkpoint, ExecEvent, ExecResult, Exit, FileInfo, Output, Port, PortUrl,
                    Process, RestorePoint, Sandbox, Template, Volume, VolumeMount, WatchEvent)
from .watch import WatchStream

__all__ = [
    "AirlockError", "Checkpoint", "Client", "ExecEvent", "ExecResult", "ExecStream", "Exit",
    "FileInfo", "Output", "Port", "PortUrl", "Process", "RestorePoint", "Sandbox", "SseEvent",
    "Template", "Volume", "VolumeMount", "WatchEvent", "WatchStream", "parse_sse",
]
__version__ = "0.1.0"
