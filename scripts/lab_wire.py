"""The handoff wire format for the lab's hostile-peer scripts (docs/PROTOCOL.md): binary
property-list values, frames, and a TLS 1.3 client context with a device's identity.

Imported by scripts/lab-hostile-pairer.py and scripts/lab-stream-abuser.py (Python puts the
script's own folder on the import path).
"""
import ssl
import struct

u32 = lambda n: struct.pack(">I", n)


def S(s):
    """A string (UTF-8; lone surrogates kept, so tests can send any code point)."""
    b = s.encode("utf-8", "surrogatepass")
    return b"\x05" + u32(len(b)) + b


def D(b): return b"\x06" + u32(len(b)) + b
def I(n): return b"\x03" + struct.pack(">q", n)
def B(v): return b"\x02" if v else b"\x01"  # true 0x02, false 0x01
def U(u): return b"\x09" + u.bytes
def A(*v): return b"\x0a" + u32(len(v)) + b"".join(v)


def M(**kv):
    """A dictionary, keys sorted as the agent writes them."""
    out = b"\x0b" + u32(len(kv))
    for k in sorted(kv):
        kb = k.encode()
        out += u32(len(kb)) + kb + kv[k]
    return out


def frame(kind, payload): return bytes([kind]) + u32(len(payload)) + payload


def hello(name):
    """A `hello` frame for protocol version 2 under `name`."""
    return frame(0x01, M(protocol=S("handoff"), versions=A(I(2)), agentID=S("hostile"), name=S(name)))


def tls_context(cert, key):
    """A TLS 1.3 client presenting the identity (cert, key); it accepts any server certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(cert, key)
    return context
