#!/usr/bin/env python3
"""Registers and instruction mix of the compute programs NVIDIA's GL driver compiled.

    test/nv_isa.py CACHE_DIR...

CACHE_DIR is a driver shader cache (__GL_SHADER_DISK_CACHE_PATH) that a run of the tools filled:
`test/device.sh isa` makes one on the device and brings it back as isa_cache.tgz. GL shows
neither a program's registers nor its machine code; the cache holds both. Each program there is
its `!!NVcp5.0` text (GROUP_SIZE, SHARED_MEMORY: which dispatch it is) followed by a zstd frame
that unpacks to an "NVuc" block: a table of records, the one at 0x20 pointing (u32 at 0x28) to
the register count, the one at 0x40 giving the code's size and offset (u32 at 0x44, 0x48). The
code is sm_90 machine code, 16 bytes an instruction, the opcode in the low 12 bits; local-memory
loads and stores (LDL, STL) mean the registers spilled. The layout was read off the H100's
driver 580 (2026-11-24); `nvdisasm -b SM90` on the code block gives the assembly.

Needs python3 and the zstd program (Debian: python3, zstd).
"""
import collections
import glob
import os
import re
import struct
import subprocess
import sys

# sm_90 opcodes (low 12 bits; 0x2xx register operands, 0x8xx an immediate, 0xaxx a constant).
FLOAT = {0x220, 0x221, 0x223, 0x820, 0x821, 0x823, 0xa20, 0xa21, 0xa23}  # FMUL FADD FFMA
CONTROL = {0x947, 0x945, 0x941}  # BRA BSSY BSYNC
NAMED = {0x388: 'sts', 0x984: 'lds', 0xb66: 'tld', 0x981: 'ldg', 0xb1d: 'bar', 0x387: 'stl', 0x983: 'ldl'}


def programs(path):
    """(group size, shared bytes, registers, opcode counts) of each program in one cache file."""
    data = open(path, 'rb').read()
    for m in re.finditer(rb'!!NVcp5\.0', data):
        end = data.find(b'\nEND\n', m.start())
        text = data[m.start():end].decode('latin1')
        frame = data.find(b'\x28\xb5\x2f\xfd', end)  # zstd magic
        if end < 0 or frame < 0:
            continue
        nvuc = subprocess.run(['zstd', '-d', '-c', '-q'], input=data[frame:frame + (1 << 21)], capture_output=True).stdout
        if nvuc[:4] != b'NVuc':
            continue
        u32 = lambda at: struct.unpack_from('<I', nvuc, at)[0]
        registers, size, code = u32(u32(0x28)), u32(0x44), u32(0x48)
        ops = collections.Counter(struct.unpack_from('<H', nvuc, code + 16 * k)[0] & 0xfff for k in range(size // 16))
        group = re.search(r'GROUP_SIZE (\d+)', text)
        shared = re.search(r'SHARED_MEMORY (\d+)', text)
        yield (int(group.group(1)) if group else 0, int(shared.group(1)) if shared else 0, registers, ops)


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: test/nv_isa.py CACHE_DIR...')
    columns = ['threads', 'shared', 'regs', 'instr', 'float', 'other', 'branch'] + sorted(set(NAMED.values()))
    for cache in sys.argv[1:]:
        files = sorted(glob.glob(os.path.join(cache, '**', '*.bin'), recursive=True))
        if not files:
            sys.exit(f'nv_isa.py: {cache}: no driver cache files (*.bin)')
        print(f'== {cache}: one line a program, in the order the driver cached them')
        print(' '.join(f'{c:>7}' for c in columns))
        for path in files:
            for group, shared, registers, ops in programs(path):
                total = sum(ops.values())
                fp = sum(ops[o] for o in FLOAT)
                branch = sum(ops[o] for o in CONTROL)
                named = collections.Counter()
                for o, name in NAMED.items():
                    named[name] += ops[o]
                other = total - fp - branch - sum(named.values()) - ops[0]  # 0: padding after EXIT
                row = [group, shared, registers, total, fp, other, branch] + [named[c] for c in columns[7:]]
                print(' '.join(f'{v:7d}' for v in row))


if __name__ == '__main__':
    main()
