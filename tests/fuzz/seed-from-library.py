#!/usr/bin/env python3
"""Writes a small fuzz seed from a real ELF library: its ELF header, its
section header table and the bytes of its small sections (dynsym, dynstr,
symtab, notes, ...), with device-code sections (.nv_fatbin, __nv_relfatbin,
.nvFatBinSegment) cut to their first CUT bytes, laid out again so every
offset is consistent. The fuzzer then starts from the headers real CUDA
libraries carry (their section layout, their fatbin headers, compressed
entries) instead of only from what our fixtures look like.

usage: seed-from-library.py LIBRARY OUT [CUT]   (CUT default 65536)
"""
import struct
import sys

SMALL = 16384  # other sections up to this size are kept whole; larger ones are dropped (size 0)
DEVICE = {b".nv_fatbin", b"__nv_relfatbin", b".nvFatBinSegment"}


def main():
    src, out = sys.argv[1], sys.argv[2]
    cut = int(sys.argv[3]) if len(sys.argv) > 3 else 65536
    data = open(src, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{src}: not a little-endian ELF64 file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [list(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)) for i in range(shnum)]
    names_at = headers[shstrndx][4]

    def name(h):
        end = data.index(b"\0", names_at + h[0])
        return data[names_at + h[0] : end]

    body = bytearray(data[:64])  # the ELF header; program headers are not kept
    body[0x20:0x28] = struct.pack("<Q", 0)  # e_phoff
    body[0x36:0x3A] = struct.pack("<HH", 0, 0)  # e_phentsize, e_phnum
    for h in headers:
        kind, offset, size = h[1], h[4], h[5]
        if kind == 8 or size == 0:  # SHT_NOBITS or empty
            h[4] = len(body)
            continue
        keep = min(size, cut) if name(h) in DEVICE else (size if size <= SMALL else 0)
        while len(body) % 8:
            body.append(0)
        h[4], h[5] = len(body), keep
        body += data[offset : offset + keep]
    while len(body) % 8:
        body.append(0)
    body[0x28:0x30] = struct.pack("<Q", len(body))
    for h in headers:
        body += struct.pack("<IIQQQQIIQQ", *h)
    open(out, "wb").write(body)
    print(f"{out}: {len(body)} bytes from {src} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
