"""The public gRPC API's Python client, generated at test time by
python3-grpc-tools from protos/ into the build tree (one copy per test,
so parallel tests never share a half-written one)."""
import os
import sys

from grpc_tools import protoc


def generate(proto_dir, stub_dir, protos):
    """Generates protos (paths under proto_dir) into stub_dir and makes
    them importable (from airlock.v1 import ...)."""
    os.makedirs(stub_dir, exist_ok=True)
    rc = protoc.main(["grpc_tools.protoc", "-I" + proto_dir, "--python_out=" + stub_dir,
                      "--grpc_python_out=" + stub_dir] + [os.path.join(proto_dir, p) for p in protos])
    if rc != 0:
        sys.exit("grpc_tools.protoc failed (%d)" % rc)
    sys.path.insert(0, stub_dir)
