"""elf_sections_differ.py A B: prints the names of the sections whose contents
differ between ELF64 files A and B (a section only one of them has counts
as differing), one line: "differ: NAME...".  For cubins, which binutils
does not know."""
import struct
import sys


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("%s: not an ELF64 file" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    out = {}
    for name, kind, _, _, off, size, *_ in heads:
        end = data.index(b"\0", strtab[4] + name)
        key = data[strtab[4] + name:end].decode()
        out[key] = b"" if kind == 8 else data[off:off + size]  # SHT_NOBITS: no bytes
    return out


a, b = sections(sys.argv[1]), sections(sys.argv[2])
print("differ:", *sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n)))
