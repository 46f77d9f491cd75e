#!/usr/bin/env python3
"""Builds a redistributable tree like NVIDIA's (the real indexes: for cuDNN
https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.12.0.json, for CUDA components
https://developer.download.nvidia.com/compute/cuda/redist/redistrib_12.2.2.json):

  OUT/redistrib_<release>.json
  OUT/cudnn/<platform>/cudnn-<platform>-<version>_cuda<N>-archive.tar.xz          (--component cudnn, the default)
  OUT/<component>/<platform>/<component>-<platform>-<version>-archive.tar.xz     (CUDA components, no per-CUDA level)

Each archive is a real single-block .tar.xz with one top directory in NVIDIA's layout. cuDNN: include/cudnn_version.h,
lib/libcudnn.so.<version> (+ the .so.<major> and .so symlinks), LICENSE. CUDA components (the index is merged, so
several runs with one OUT build one release): cuda_cudart (include/cuda_runtime_api.h, lib/libcudart.so.<version>
+ links), cuda_nvcc (bin/nvcc, include/crt/host_defines.h, nvvm/libdevice/libdevice.10.bc), libcublas
(include/cublas_api.h, lib/libcublas.so.<version> and libcublasLt.so.<version> + links), others (lib/lib<name>.so).
Hostile cuDNN variants add one entry that an installer must refuse:
  traversal       "<top>/../../evil"                      absolute   "/tmp/gpuprep-redist-evil"
  symlink-escape  "<top>/lib/escape" -> "../../../../../tmp", then "<top>/lib/escape/evil" written through it
  link-climb      "<top>/lib/s" -> ".", then "<top>/lib/up" -> "s/../../../x"   (escapes only via the link)
  hardlink        "<top>/lib/hard" hard link to "/etc/passwd"
  hardlink-symlink "<top>/lib/a/.../h/up" -> "../../../../../../../../../include" (inside the prefix from there),
                  then "<top>/include2" hard link to it: the same link text, read from the top, climbs out
  bomb            after the good entries, --bomb-mib MiB of zeros in 4 MiB files (default 2048): each file one
                  more xz stream of the archive (xz streams concatenate), ~200 KB for 2 GiB; the index is right
  device          "<top>/lib/nvidia0", a character device
  tamper          the archive changed after the JSON was written (sha256 mismatch)
  short           the JSON's size is larger than the archive (truncated download)

make_redist.py OUT --release 9.12.0 --version 9.12.0.46 --cuda 12 [--platform linux-x86_64]
               [--variant NAME] [--lib FILE] [--pad-mb N]
make_redist.py OUT --release 12.2.2 --component cuda_cudart --version 12.2.140 [--lib FILE] [--bin FILE]
--lib: the shared library to ship as the component's main library (default: library-like filler)
--bin: cuda_nvcc's bin/nvcc (default: a script that prints nvcc's version banner)
--pad-mb: N MiB more of library-like data in 64 MiB "libraries" (the benchmark's archive, bench/redist.sh);
          see library_like() for what it is made of and how it was matched to real cuDNN libraries.
"""
import argparse
import hashlib
import io
import json
import lzma
import os
import random
import tarfile

MTIME = 1700000000
MIB = 1 << 20

# --- library-like data --------------------------------------------------------------------------------------
# Matched to real cuDNN shared objects: those of NVIDIA's nvidia-cudnn-cu13 9.19.0.56 wheel (libcudnn*.so.9 and
# the headers, 519,444,480 bytes as a tar) pack with `xz -6 -T1` to 328,882,200 bytes (0.633), and `xz -dc` spends
# 16.1 ms of CPU per unpacked MB on them on the build machine. Most of a cuDNN library is device code nvcc has
# already compressed (fatbins: random-looking, which xz stores as it is and decodes at memcpy speed); the rest is
# host code and symbol tables (LZ matches and low-entropy literals: the slow part to decode) and sparse tables.
# This mix, in runs of 1 MiB: 8 packed, 11 code, 1 sparse, packs to 0.633 and decodes at 16.8 ms/MB there.
_SPARSE = bytes((i if i >= 240 else 0) for i in range(256))  # ~6% random bytes among zeros
MIX = (("packed", 8), ("code", 11), ("sparse", 1))


def _code(n, rnd):
    # Host code and symbol tables: runs of low-entropy bytes (a 48-symbol alphabet) mixed with copies of
    # recent runs (what LZ matches find in code).
    sym = rnd.sample(range(256), 48)
    table = bytes(sym[i % 48] for i in range(256))
    out = bytearray()
    while len(out) < n:
        size = rnd.randint(16, 200)
        if len(out) > 4096 and rnd.random() < 0.5:
            start = rnd.randrange(max(0, len(out) - 65536), len(out) - size)
            out += out[start:start + size]
        else:
            out += rnd.randbytes(size).translate(table)
    return bytes(out[:n])


def library_like(n, seed):
    rnd = random.Random(seed)
    runs = [kind for kind, weight in MIX for _ in range(weight)]
    out = bytearray()
    i = 0
    while len(out) < n:
        kind = runs[i % len(runs)]
        i += 1
        if kind == "packed":
            out += rnd.randbytes(MIB)
        elif kind == "code":
            out += _code(MIB, rnd)
        else:
            out += rnd.randbytes(MIB).translate(_SPARSE)
    return bytes(out[:n])


# --- tar members --------------------------------------------------------------------------------------------
def add_dir(tar, name):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.DIRTYPE
    ti.mode = 0o755
    ti.mtime = MTIME
    tar.addfile(ti)


def add_file(tar, name, data, mode=0o644):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = mode
    ti.mtime = MTIME
    tar.addfile(ti, io.BytesIO(data))


def add_link(tar, name, target, kind=tarfile.SYMTYPE):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = target
    ti.mtime = MTIME
    tar.addfile(ti)


def add_library(tar, top, stem, version, data):
    """lib/<stem>.so.<version> with the .so.<major> and .so links, as NVIDIA ships them."""
    major = version.split(".")[0]
    so = f"{stem}.so.{version}"
    add_file(tar, f"{top}/lib/{so}", data, 0o755)
    add_link(tar, f"{top}/lib/{stem}.so.{major}", so)
    add_link(tar, f"{top}/lib/{stem}.so", f"{stem}.so.{major}")


def cudnn_members(tar, top, a, lib):
    major, minor, patch = a.version.split(".")[:3]
    header = (f"#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n#define CUDNN_MAJOR {major}\n"
              f"#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n"
              "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n#endif\n").encode()
    for d in ("", "/include", "/lib"):
        add_dir(tar, top + d)
    add_file(tar, f"{top}/include/cudnn_version.h", header)
    add_library(tar, top, "libcudnn", a.version, lib)


def cuda_members(tar, top, a, lib, release):
    comp, v = a.component, a.version
    major, minor = release.split(".")[:2]
    add_dir(tar, top)
    if comp == "cuda_cudart":
        add_dir(tar, top + "/include")
        add_dir(tar, top + "/lib")
        add_file(tar, f"{top}/include/cuda_runtime_api.h",
                 f"#define CUDART_VERSION {int(major) * 1000 + int(minor) * 10}\n".encode())
        add_library(tar, top, "libcudart", v, lib)
    elif comp == "cuda_nvcc":
        for d in ("/bin", "/include", "/include/crt", "/nvvm", "/nvvm/libdevice"):
            add_dir(tar, top + d)
        nvcc = open(a.bin, "rb").read() if a.bin else (
            "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
            f"echo 'Cuda compilation tools, release {major}.{minor}, V{v}'\n").encode()
        add_file(tar, f"{top}/bin/nvcc", nvcc, 0o755)
        add_file(tar, f"{top}/include/crt/host_defines.h", b"#pragma once\n")
        add_file(tar, f"{top}/nvvm/libdevice/libdevice.10.bc", library_like(64 * 1024, 2))
    elif comp == "libcublas":
        add_dir(tar, top + "/include")
        add_dir(tar, top + "/lib")
        add_file(tar, f"{top}/include/cublas_api.h", f"#define CUBLAS_VER_MAJOR {v.split('.')[0]}\n".encode())
        add_library(tar, top, "libcublas", v, lib)
        add_library(tar, top, "libcublasLt", v, library_like(64 * 1024, 3))
    else:
        add_dir(tar, top + "/lib")
        add_library(tar, top, "lib" + comp.split("_")[-1], v, lib)


def hostile(tar, top, v):
    if v == "traversal":
        add_file(tar, f"{top}/../../gpuprep-redist-evil", b"escaped\n")
    elif v == "absolute":
        add_file(tar, "/tmp/gpuprep-redist-evil", b"escaped\n")
    elif v == "symlink-escape":
        add_link(tar, f"{top}/lib/escape", "../../../../../../../../tmp")
        add_file(tar, f"{top}/lib/escape/gpuprep-redist-evil", b"escaped\n")
    elif v == "link-climb":
        add_link(tar, f"{top}/lib/s", ".")
        add_link(tar, f"{top}/lib/up", "s/../../../gpuprep-redist-evil")
    elif v == "hardlink":
        add_link(tar, f"{top}/lib/hard", "/etc/passwd", tarfile.LNKTYPE)
    elif v == "hardlink-symlink":
        deep = "lib/a/b/c/d/e/f/g/h"
        for i in range(len("lib/a"), len(deep) + 1, 2):
            add_dir(tar, f"{top}/{deep[:i]}")
        add_link(tar, f"{top}/{deep}/up", "../" * 9 + "include")
        add_link(tar, f"{top}/include2", f"{top}/{deep}/up", tarfile.LNKTYPE)
    elif v == "device":
        ti = tarfile.TarInfo(f"{top}/lib/nvidia0")
        ti.type = tarfile.CHRTYPE
        ti.devmajor, ti.devminor = 195, 0
        tar.addfile(ti)


def write_bomb(path, top, mib):
    """Rewrites `path` as a decompression bomb: the tar's members (the good archive's, then `mib` MiB of zeros in
    4 MiB files) as concatenated xz streams, the zeros compressed once and repeated. Built at run time: a few
    hundred KB that unpack to GiBs."""
    with lzma.open(path) as f:
        good = f.read()
    end = len(good)
    while end >= 512 and good[end - 512:end] == bytes(512):  # drop the end-of-archive blocks
        end -= 512
    chunk = 4 * MIB
    zeros = lzma.compress(bytes(chunk), format=lzma.FORMAT_XZ, preset=6)
    with open(path, "wb") as out:
        out.write(lzma.compress(good[:end], format=lzma.FORMAT_XZ, preset=0))
        for i in range(mib * MIB // chunk):
            ti = tarfile.TarInfo(f"{top}/lib/zeros{i}.bin")
            ti.size = chunk
            ti.mode = 0o644
            ti.mtime = MTIME
            out.write(lzma.compress(ti.tobuf(format=tarfile.GNU_FORMAT), format=lzma.FORMAT_XZ, preset=0))
            out.write(zeros)
        out.write(lzma.compress(bytes(1024), format=lzma.FORMAT_XZ, preset=0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--release", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--component", default="cudnn")
    ap.add_argument("--cuda", type=int)
    ap.add_argument("--platform", default="linux-x86_64")
    ap.add_argument("--variant", default="good")
    ap.add_argument("--lib")
    ap.add_argument("--bin")
    ap.add_argument("--pad-mb", type=int, default=0)
    ap.add_argument("--bomb-mib", type=int, default=2048)
    a = ap.parse_args()
    cudnn = a.component == "cudnn"
    if cudnn and a.cuda is None:
        ap.error("--cuda is required for cudnn")

    if cudnn:
        top = f"cudnn-{a.platform}-{a.version}_cuda{a.cuda}-archive"
    else:
        top = f"{a.component}-{a.platform}-{a.version}-archive"
    rel = f"{a.component}/{a.platform}/{top}.tar.xz"
    path = os.path.join(a.out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lib = open(a.lib, "rb").read() if a.lib else library_like(64 * 1024, 1)
    # NVIDIA's archives are single-block xz streams: decompression cannot be spread over threads. The stream is
    # compressed as the tar is written (a benchmark archive never sits whole in memory). LZMA2 at preset 6's
    # dictionary and literal coding; the fast match finder only makes building it quicker.
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 6, "mode": lzma.MODE_FAST, "mf": lzma.MF_HC4, "nice_len": 64}]
    with lzma.open(path, "wb", format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, filters=filters) as xz, \
            tarfile.open(fileobj=xz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        if cudnn:
            cudnn_members(tar, top, a, lib)
        else:
            cuda_members(tar, top, a, lib, a.release)
        for i in range(0, a.pad_mb, 64):  # 64 MiB per "library", like libcudnn_engines_*.so
            stem = "libcudnn_part" if cudnn else f"lib{a.component}_part"
            add_file(tar, f"{top}/lib/{stem}{i // 64}.so.{a.version}",
                     library_like(min(64, a.pad_mb - i) * MIB, 100 + i), 0o755)
        hostile(tar, top, a.variant)
        add_file(tar, f"{top}/LICENSE", b"test licence (not NVIDIA's)\n")

    if a.variant == "bomb":
        write_bomb(path, top, a.bomb_mib)

    h = hashlib.sha256()
    md5 = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            h.update(block)
            md5.update(block)
    size = os.path.getsize(path)
    if a.variant == "tamper":
        with open(path, "r+b") as f:
            f.seek(size // 2)
            byte = f.read(1)[0]
            f.seek(size // 2)
            f.write(bytes([byte ^ 0x55]))
    if a.variant == "short":
        size += 4096
    entry = {"relative_path": rel, "sha256": h.hexdigest(), "md5": md5.hexdigest(), "size": str(size)}

    index_path = os.path.join(a.out, f"redistrib_{a.release}.json")
    index = {"release_date": "2025-08-04", "release_label": a.release, "release_product": "cudnn" if cudnn else "cuda"}
    if not cudnn and os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
    if cudnn:
        index["cudnn"] = {
            "name": "NVIDIA CUDA Deep Neural Network library",
            "license": "cudnn",
            "license_path": "cudnn/LICENSE.txt",
            "version": a.version,
            a.platform: {f"cuda{a.cuda}": entry},
            "cuda_variant": [str(a.cuda)],
        }
    else:
        index[a.component] = {
            "name": a.component,
            "license": "CUDA Toolkit",
            "license_path": f"{a.component}/LICENSE.txt",
            "version": a.version,
            a.platform: entry,
        }
    with open(index_path, "w") as f:
        json.dump(index, f, indent=4)
    print(path)


if __name__ == "__main__":
    main()
