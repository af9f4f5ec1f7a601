"""A minimal LSP client over an `oomlint server` subprocess's stdio, for the benchmarks."""
import json
import subprocess


class LspClient:
    def __init__(self, server):
        self.p = subprocess.Popen([server, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, obj):
        b = json.dumps(obj).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.p.stdin.flush()

    def recv(self):
        h = b""
        while not h.endswith(b"\r\n\r\n"):
            h += self.p.stdout.read(1)
        n = int(h.split(b":")[1].split(b"\r")[0])
        return json.loads(self.p.stdout.read(n))

    def diagnostics(self, uri=None):
        """The next publishDiagnostics (for `uri`, when given)."""
        while True:
            m = self.recv()
            if m.get("method") == "textDocument/publishDiagnostics" and (uri is None or m["params"]["uri"] == uri):
                return m["params"]["diagnostics"]

    def initialize(self):
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        self.recv()

    def shutdown(self):
        self.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        self.recv()
        self.send({"jsonrpc": "2.0", "method": "exit"})
        self.p.wait()
