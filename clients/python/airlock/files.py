"""Files inside a sandbox: upload and download (streamed from and to file
objects), list, stat, mkdir, rename, remove."""
from __future__ import annotations

import io
from typing import IO, Iterable, List, Optional, Union

from ._http import with_query
from ._resource import Resource, body_of, sandbox_path
from .types import FileInfo


class Files(Resource):
    def _target(self, sandbox_id: str, route: str, p: str, **query: Union[str, bool, None]) -> str:
        parts = ("files",) if not route else ("files", route)
        return with_query(sandbox_path(sandbox_id, *parts), {"path": p, **query})

    def upload(self, sandbox_id: str, path: str,
               data: Union[bytes, IO[bytes], Iterable[bytes]]) -> None:
        """Writes the file at path (absolute; replaced atomically, mode
        0644) from bytes, a binary file object (read and sent block by
        block: chunked, or with its length for a regular file) or an
        iterable of byte blocks."""
        self._t.call("PUT", self._target(sandbox_id, "", path), body=data)

    def download(self, sandbox_id: str, path: str, dest: IO[bytes]) -> int:
        """Writes the file's bytes into dest as they arrive; how many.
        A transfer that breaks raises AirlockError."""
        return self._t.copy_to(self._target(sandbox_id, "", path), dest)

    def read(self, sandbox_id: str, path: str) -> bytes:
        """The whole file."""
        buf = io.BytesIO()
        self.download(sandbox_id, path, buf)
        return buf.getvalue()

    def write(self, sandbox_id: str, path: str, data: Union[str, bytes]) -> None:
        self.upload(sandbox_id, path, data.encode("utf-8") if isinstance(data, str) else data)

    def list(self, sandbox_id: str, path: str) -> List[FileInfo]:
        """The entries of the directory at path."""
        doc = self._t.call("GET", self._target(sandbox_id, "list", path))
        return [FileInfo.from_json(e) for e in doc.get("entries", [])]

    def stat(self, sandbox_id: str, path: str) -> FileInfo:
        """The entry at path (a symlink itself, not what it points to)."""
        return FileInfo.from_json(self._t.call("GET", self._target(sandbox_id, "stat", path)))

    def exists(self, sandbox_id: str, path: str) -> bool:
        from .errors import AirlockError
        try:
            self.stat(sandbox_id, path)
            return True
        except AirlockError as e:
            if e.code == "not_found":
                return False
            raise

    def mkdir(self, sandbox_id: str, path: str, *, parents: Optional[bool] = None,
              mode: Optional[int] = None) -> None:
        """Makes the directory (mode default 0o755); parents: its missing
        parents too. One that exists: AirlockError conflict."""
        self._t.call("POST", sandbox_path(sandbox_id, "files", "mkdir"),
                     json_body=body_of(path=path, parents=parents, mode=mode))

    def rename(self, sandbox_id: str, src: str, dst: str) -> None:
        """Moves src to dst, replacing it like rename(2)."""
        self._t.call("POST", sandbox_path(sandbox_id, "files", "rename"),
                     json_body={"from": src, "to": dst})

    def remove(self, sandbox_id: str, path: str, *, recursive: bool = False) -> None:
        """Removes a file or directory; a non-empty directory needs
        recursive (else AirlockError conflict)."""
        self._t.call("DELETE", self._target(sandbox_id, "", path,
                                            recursive=True if recursive else None))
