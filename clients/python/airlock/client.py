"""Client: the API at one URL with one key, its routes grouped by
resource."""
from __future__ import annotations

import ssl
from typing import Optional

from ._http import Transport
from .checkpoints import Checkpoints
from .exec import Exec
from .files import Files
from .ports import Ports
from .processes import Processes
from .sandboxes import Sandboxes
from .templates import Templates
from .volumes import Volumes
from .watch import Watch


class Client:
    """airlock's REST API (docs/api.md) at url with api_key (`ak_…`).

    client.sandboxes, .exec, .processes, .files, .checkpoints, .templates,
    .ports, .watch, .volumes hold the calls; each raises AirlockError for an error answer. timeout:
    seconds a plain call may wait for the gateway (streams have none).
    ca_file: a private CA for an https:// gateway."""

    def __init__(self, url: str, api_key: str, *, timeout: Optional[float] = 600.0,
                 ca_file: Optional[str] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        if ssl_context is None and ca_file is not None:
            ssl_context = ssl.create_default_context(cafile=ca_file)
        self.transport = Transport(url, api_key, timeout, ssl_context)
        self.sandboxes = Sandboxes(self.transport)
        self.exec = Exec(self.transport)
        self.processes = Processes(self.transport)
        self.files = Files(self.transport)
        self.checkpoints = Checkpoints(self.transport)
        self.templates = Templates(self.transport)
        self.ports = Ports(self.transport)
        self.watch = Watch(self.transport)
        self.volumes = Volumes(self.transport)
