# boringssl-pages.py PID BINARY: resident pages of handoffd's own mapping that hold each vendored BoringSSL copy's code.
import sys, subprocess, struct, collections
pid, binary = int(sys.argv[1]), sys.argv[2]
PAGE = 4096
# symbol -> [start, end) virtual addresses relative to the ELF's load (nm prints link-time addresses)
out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout
groups = collections.defaultdict(set); sizes = collections.Counter()
for line in out.splitlines():
    parts = line.split()
    if len(parts) != 4: continue
    addr, size, kind, name = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
    if kind not in "tTrRdDbB": continue
    g = "CCryptoBoringSSL (swift-crypto)" if name.startswith("CCryptoBoringSSL_") else "CNIOBoringSSL (swift-nio-ssl)" if name.startswith("CNIOBoringSSL_") else "other"
    sizes[g] += size
    for p in range(addr // PAGE, (addr + size - 1) // PAGE + 1): groups[g].add(p)
# load base: the first mapping of the binary with offset 0
base = None; maps = []
for l in open(f"/proc/{pid}/maps"):
    f = l.split()
    if len(f) >= 6 and f[5] == binary:
        lo, hi = (int(x, 16) for x in f[0].split("-")); maps.append((lo, hi, int(f[2], 16)))
base = min(lo - off for lo, hi, off in maps)
pm = open(f"/proc/{pid}/pagemap", "rb")
def present(vpage):
    pm.seek(vpage * 8); v = struct.unpack("<Q", pm.read(8))[0]
    return bool(v >> 63)
for g in sorted(groups):
    pages = {p for p in groups[g] if any(lo <= base + p * PAGE < hi for lo, hi, _ in maps)}
    res = sum(present(base // PAGE + p) for p in pages)
    print(f"{g}: symbols {sizes[g] / 1048576:.1f} MiB, on {len(pages)} pages, resident {res} pages = {res * PAGE / 1048576:.1f} MiB")
