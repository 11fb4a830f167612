"""The public gRPC API's Python client, generated at test time by
python3-grpc-tools from protos/ into the build tree (one copy per test,
so parallel tests never share a half-written one)."""
import os
import re
import sys

from grpc_tools import protoc


def with_imports(proto_dir, protos):
    """protos and every proto they import, transitively: a generated
    module imports its imports' modules, which must be generated too."""
    found, todo = [], list(protos)
    while todo:
        p = todo.pop(0)
        if p in found:
            continue
        found.append(p)
        with open(os.path.join(proto_dir, p)) as f:
            todo += re.findall(r'^import "([^"]+)";', f.read(), re.M)
    return found


def generate(proto_dir, stub_dir, protos):
    """Generates protos (paths under proto_dir) and what they import into
    stub_dir and makes them importable (from airlock.v1 import ...)."""
    protos = with_imports(proto_dir, protos)
    os.makedirs(stub_dir, exist_ok=True)
    rc = protoc.main(["grpc_tools.protoc", "-I" + proto_dir, "--python_out=" + stub_dir,
                      "--grpc_python_out=" + stub_dir] + [os.path.join(proto_dir, p) for p in protos])
    if rc != 0:
        sys.exit("grpc_tools.protoc failed (%d)" % rc)
    sys.path.insert(0, stub_dir)
