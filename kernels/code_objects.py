"""Reads what a compiled kernel object says about itself.

Used by the build (kernel names, resources, argument lists for the embedded
tables) and by the CI checks. Pure Python, no vendor tools needed:

- ELF64 images: sections, symbols, notes.
- NVIDIA cubins: per-kernel registers, stack (local memory, spills
  included), static shared memory, declared max threads per block and the
  parameter layout, from the .nv.info attributes the driver also reads.
- PTX: the .param list of every .entry.
- AMD HSACO: the kernel metadata note (MessagePack), which holds VGPR/SGPR
  counts, spills, LDS, scratch, wave size and the kernel-argument layout.
- Clang offload bundles: their entries.
"""

import re
import struct

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


class CodeObjectError(Exception):
    pass


# ---------------------------------------------------------------------- ELF

class Elf:
    def __init__(self, blob):
        if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] != 1:
            raise CodeObjectError("not a 64-bit little-endian ELF image")
        self.blob = blob
        shoff, = struct.unpack_from("<Q", blob, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
        raw = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
        names_off = raw[shstrndx][4] if shnum else 0
        self.sections = []
        for (name, stype, flags, _addr, off, size, link, info, _align, entsize) in raw:
            self.sections.append({"name": self._str(names_off, name), "type": stype, "flags": flags,
                                  "offset": off, "size": size, "link": link, "info": info,
                                  "entsize": entsize})

    def _str(self, table_off, off):
        start = table_off + off
        return self.blob[start:self.blob.index(b"\0", start)].decode()

    def section(self, name):
        for s in self.sections:
            if s["name"] == name:
                return s
        return None

    def data(self, s):
        return self.blob[s["offset"]:s["offset"] + s["size"]]

    def symbols(self):
        """(name, value, size, type, st_other, section index) of every symbol."""
        out = []
        for s in self.sections:
            if s["type"] != 2:  # SHT_SYMTAB
                continue
            strtab = self.sections[s["link"]]["offset"]
            for j in range(s["size"] // s["entsize"]):
                name, info, other, shndx, value, size = struct.unpack_from(
                    "<IBBHQQ", self.blob, s["offset"] + j * s["entsize"])
                out.append((self._str(strtab, name), value, size, info & 0xF, other, shndx))
        return out

    def notes(self):
        """(owner, type, descriptor bytes) of every note."""
        out = []
        for s in self.sections:
            if s["type"] != 7:  # SHT_NOTE
                continue
            pos, end = s["offset"], s["offset"] + s["size"]
            while pos + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", self.blob, pos)
                pos += 12
                owner = self.blob[pos:pos + namesz].rstrip(b"\0").decode()
                pos += (namesz + 3) & ~3
                out.append((owner, ntype, self.blob[pos:pos + descsz]))
                pos += (descsz + 3) & ~3
        return out


# ------------------------------------------------------------ NVIDIA cubins

# .nv.info attribute ids (the driver's EIATTR_* numbering).
EIATTR_MAX_THREADS = 0x05
EIATTR_FRAME_SIZE = 0x11
EIATTR_MIN_STACK_SIZE = 0x12
EIATTR_KPARAM_INFO = 0x17
EIATTR_MAX_STACK_SIZE = 0x23
EIATTR_REGCOUNT = 0x2F
EIFMT_SVAL = 0x04
RESERVED_SMEM_BYTES = 1024


def nv_info_attributes(data):
    """(attribute, payload bytes) of one .nv.info section."""
    out, pos = [], 0
    while pos + 4 <= len(data):
        fmt, attr = data[pos], data[pos + 1]
        if fmt == EIFMT_SVAL:
            size, = struct.unpack_from("<H", data, pos + 2)
            out.append((attr, data[pos + 4:pos + 4 + size]))
            pos += 4 + size
        else:  # NVAL, BVAL, HVAL: the value sits in the 2 bytes after the header
            out.append((attr, data[pos + 2:pos + 4]))
            pos += 4
    return out


def _words(payload):
    return [struct.unpack_from("<I", payload, k)[0] for k in range(0, len(payload) - 3, 4)]


# Registers per thread are allocated per warp in units of 256.
def _max_threads(registers, declared):
    limit = declared or 1024
    if registers:
        per_warp = -(-registers * 32 // 256) * 256
        limit = min(limit, 65536 // per_warp * 32)
    return limit


def cubin_kernels(blob):
    """name -> resources of every kernel entry in a cubin."""
    elf = Elf(blob)
    syms = elf.symbols()
    by_index = {i: s for i, s in enumerate(syms)}
    per_symbol = {}  # symbol index -> {attr: value}
    glob = elf.section(".nv.info")
    if glob:
        for attr, payload in nv_info_attributes(elf.data(glob)):
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE, EIATTR_MIN_STACK_SIZE, EIATTR_MAX_STACK_SIZE):
                sym, value = _words(payload)[:2]
                per_symbol.setdefault(sym, {})[attr] = value
    reserved_smem = any(n.startswith(".nv.reservedSmem") for n, *_ in syms)
    kernels = {}
    for s in elf.sections:
        if not s["name"].startswith(".nv.info."):
            continue
        name = s["name"][len(".nv.info."):]
        sym_index = s["info"]  # the kernel's symbol
        if by_index.get(sym_index, ("",))[0] != name:
            sym_index = next((i for i, x in by_index.items() if x[0] == name and x[3] == 2), None)
        declared, params = 0, []
        for attr, payload in nv_info_attributes(elf.data(s)):
            if attr == EIATTR_MAX_THREADS:
                x, y, z = _words(payload)[:3]
                declared = x * y * z
            elif attr == EIATTR_KPARAM_INFO:
                _index, ordinal_offset, flags = _words(payload)[:3]
                params.append((ordinal_offset & 0xFFFF, ordinal_offset >> 16, (flags >> 18) & 0x3FFF))
        attrs = per_symbol.get(sym_index, {})
        registers = attrs.get(EIATTR_REGCOUNT, 0)
        stack = max(attrs.get(EIATTR_MAX_STACK_SIZE, 0), attrs.get(EIATTR_FRAME_SIZE, 0),
                    attrs.get(EIATTR_MIN_STACK_SIZE, 0))
        local = elf.section(".nv.local." + name)
        shared = elf.section(".nv.shared." + name)
        shared_bytes = shared["size"] if shared else 0
        if shared and reserved_smem:
            # From sm_90 on the section starts with the 1 KiB the hardware
            # reserves per block; ptxas and the driver count only the rest.
            shared_bytes = max(0, shared_bytes - RESERVED_SMEM_BYTES)
        kernels[name] = {
            "registers": registers,
            "sgprs": 0,
            "local_bytes": stack + (local["size"] if local else 0),
            "spill_bytes": None,  # not in a cubin: compile_target.py takes ptxas's count
            "shared_bytes": shared_bytes,
            "max_threads": _max_threads(registers, declared),
            "wave_size": 32,
            "params": [(off, size) for _ord, off, size in sorted(params)],
        }
    return kernels


# --------------------------------------------------------------------- PTX

_PTX_SIZES = {"8": 1, "16": 2, "32": 4, "64": 8}


def ptx_params(text):
    """name -> [(offset, size, align)] of every .entry in a PTX text."""
    out = {}
    for m in re.finditer(r"\.entry\s+([A-Za-z_][A-Za-z0-9_$]*)\s*\(([^)]*)\)", text):
        params, offset = [], 0
        for decl in filter(None, (d.strip() for d in m.group(2).split(","))):
            # ".param [.align A] .tN [.ptr [.space] [.align P]] name[[count]]";
            # the .ptr attributes describe the pointee, not the parameter.
            pm = re.match(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.[busf](8|16|32|64)"
                          r"(?:\s+\.ptr(?:\s+\.(?:global|const|shared|local))?(?:\s+\.align\s+\d+)?)?"
                          r"\s+[^\s\[]+(?:\[(\d+)\])?$", decl)
            if not pm:
                raise CodeObjectError("cannot read PTX parameter '%s' of %s" % (decl, m.group(1)))
            elem = _PTX_SIZES[pm.group(2)]
            size = elem * int(pm.group(3) or 1)
            align = int(pm.group(1) or elem)
            offset = -(-offset // align) * align
            params.append((offset, size, align))
            offset += size
        out[m.group(1)] = params
    return out


# ---------------------------------------------------------------- AMD HSACO

def _msgpack(data, pos=0):
    """Decodes one MessagePack value at pos; returns (value, next pos)."""
    b = data[pos]
    pos += 1
    if b <= 0x7F:
        return b, pos
    if b >= 0xE0:
        return b - 0x100, pos
    if 0x80 <= b <= 0x8F or b in (0xDE, 0xDF):
        n = b & 0x0F if b <= 0x8F else struct.unpack_from(">H" if b == 0xDE else ">I", data, pos)[0]
        pos += 0 if b <= 0x8F else (2 if b == 0xDE else 4)
        out = {}
        for _ in range(n):
            k, pos = _msgpack(data, pos)
            v, pos = _msgpack(data, pos)
            out[k] = v
        return out, pos
    if 0x90 <= b <= 0x9F or b in (0xDC, 0xDD):
        n = b & 0x0F if b <= 0x9F else struct.unpack_from(">H" if b == 0xDC else ">I", data, pos)[0]
        pos += 0 if b <= 0x9F else (2 if b == 0xDC else 4)
        out = []
        for _ in range(n):
            v, pos = _msgpack(data, pos)
            out.append(v)
        return out, pos
    if 0xA0 <= b <= 0xBF or b in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        if b <= 0xBF:
            n = b & 0x1F
        else:
            width = {0xD9: 1, 0xC4: 1, 0xDA: 2, 0xC5: 2, 0xDB: 4, 0xC6: 4}[b]
            n = int.from_bytes(data[pos:pos + width], "big")
            pos += width
        raw = data[pos:pos + n]
        return (raw if b in (0xC4, 0xC5, 0xC6) else raw.decode()), pos + n
    fixed = {0xC0: (0, None), 0xC2: (0, False), 0xC3: (0, True)}
    if b in fixed:
        return fixed[b][1], pos
    fmt = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
           0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}.get(b)
    if fmt is None:
        raise CodeObjectError("unsupported MessagePack byte 0x%02x" % b)
    return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)


NT_AMDGPU_METADATA = 32


def hsaco_kernels(blob):
    """name -> resources and explicit arguments of every kernel in an HSACO."""
    for owner, ntype, desc in Elf(blob).notes():
        if owner == "AMDGPU" and ntype == NT_AMDGPU_METADATA:
            meta, _ = _msgpack(desc)
            break
    else:
        raise CodeObjectError("no AMDGPU metadata note")
    kernels = {}
    for k in meta.get("amdhsa.kernels", []):
        args = [(a[".offset"], a[".size"]) for a in k.get(".args", [])
                if not a.get(".value_kind", "").startswith("hidden_")]
        kernels[k[".name"]] = {
            "registers": k.get(".vgpr_count", 0),
            "agprs": k.get(".agpr_count", 0),
            "sgprs": k.get(".sgpr_count", 0),
            "local_bytes": k.get(".private_segment_fixed_size", 0),
            # VGPRs spill to scratch memory, 4 bytes per lane each; SGPRs
            # spill into VGPR lanes, which costs registers, not memory.
            "spill_bytes": 4 * k.get(".vgpr_spill_count", 0),
            "sgpr_spills": k.get(".sgpr_spill_count", 0),
            "shared_bytes": k.get(".group_segment_fixed_size", 0),
            "max_threads": k.get(".max_flat_workgroup_size", 0),
            "wave_size": k.get(".wavefront_size", 0),
            "params": args,
            "kernarg_align": k.get(".kernarg_segment_align", 0),
        }
    return kernels


# ------------------------------------------------------- clang offload bundles

def split_bundle(blob):
    """(target id, bytes) of every entry of a clang offload bundle."""
    if not blob.startswith(BUNDLE_MAGIC):
        raise CodeObjectError("not a clang offload bundle")
    count, = struct.unpack_from("<Q", blob, 24)
    pos, entries = 32, []
    for _ in range(count):
        off, size, idlen = struct.unpack_from("<QQQ", blob, pos)
        pos += 24
        target = blob[pos:pos + idlen].decode()
        pos += idlen
        entries.append((target, blob[off:off + size]))
    return entries
