#!/usr/bin/env python3
"""Builds a redistributable tree like NVIDIA's cuDNN one (see
https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.12.0.json for the real index):

  OUT/redistrib_<release>.json
  OUT/cudnn/<platform>/cudnn-<platform>-<version>_cuda<N>-archive.tar.xz

The archive is a real single-block .tar.xz with one top directory holding include/cudnn_version.h,
lib/libcudnn.so.<version> (+ the .so.<major> and .so symlinks) and LICENSE. Hostile variants add one entry
that an installer must refuse:
  traversal       "<top>/../../evil"                      absolute   "/tmp/gpuprep-redist-evil"
  symlink-escape  "<top>/lib/escape" -> "../../../../../tmp", then "<top>/lib/escape/evil" written through it
  link-climb      "<top>/lib/s" -> ".", then "<top>/lib/up" -> "s/../../../x"   (escapes only via the link)
  hardlink        "<top>/lib/hard" hard link to "/etc/passwd"
  device          "<top>/lib/nvidia0", a character device
  tamper          the archive changed after the JSON was written (sha256 mismatch)
  short           the JSON's size is larger than the archive (truncated download)

make_redist.py OUT --release 9.12.0 --version 9.12.0.46 --cuda 12 [--platform linux-x86_64]
               [--variant NAME] [--lib FILE] [--pad-mb N]
--lib: the shared library to ship as lib/libcudnn.so.<version> (default: filler bytes)
--pad-mb: N MiB of library-like filler (a quarter random, the rest repeated words; xz packs it to ~40%, as it
          does shared libraries), for the
          benchmark.
"""
import argparse
import hashlib
import io
import json
import lzma
import os
import random
import tarfile


def filler(n, seed):
    rnd = random.Random(seed)
    out = bytearray()
    words = [rnd.randbytes(8) for _ in range(256)]
    while len(out) < n:
        out += rnd.randbytes(1024)  # incompressible part (constants, packed tables)
        out += b"".join(rnd.choices(words, k=384))  # repetitive part, as code and symbol tables are
    return bytes(out[:n])


def add_file(tar, name, data, mode=0o644):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = mode
    ti.mtime = 1700000000
    tar.addfile(ti, io.BytesIO(data))


def add_link(tar, name, target, kind=tarfile.SYMTYPE):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = target
    ti.mtime = 1700000000
    tar.addfile(ti)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--release", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--cuda", type=int, required=True)
    ap.add_argument("--platform", default="linux-x86_64")
    ap.add_argument("--variant", default="good")
    ap.add_argument("--lib")
    ap.add_argument("--pad-mb", type=int, default=0)
    a = ap.parse_args()

    major, minor, patch = a.version.split(".")[:3]
    top = f"cudnn-{a.platform}-{a.version}_cuda{a.cuda}-archive"
    rel = f"cudnn/{a.platform}/{top}.tar.xz"
    header = (f"#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n#define CUDNN_MAJOR {major}\n"
              f"#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n"
              "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n#endif\n").encode()
    lib = open(a.lib, "rb").read() if a.lib else filler(64 * 1024, 1)
    so = f"libcudnn.so.{a.version}"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for d in ("", "/include", "/lib"):
            ti = tarfile.TarInfo(top + d)
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            ti.mtime = 1700000000
            tar.addfile(ti)
        add_file(tar, f"{top}/include/cudnn_version.h", header)
        add_file(tar, f"{top}/lib/{so}", lib, 0o755)
        add_link(tar, f"{top}/lib/libcudnn.so.{major}", so)
        add_link(tar, f"{top}/lib/libcudnn.so", f"libcudnn.so.{major}")
        if a.pad_mb:
            mib = 1 << 20
            for i in range(0, a.pad_mb, 64):  # 64 MiB per "library", like libcudnn_engines_*.so
                add_file(tar, f"{top}/lib/libcudnn_part{i // 64}.so.{a.version}",
                         filler(min(64, a.pad_mb - i) * mib, 100 + i), 0o755)
        v = a.variant
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
        elif v == "device":
            ti = tarfile.TarInfo(f"{top}/lib/nvidia0")
            ti.type = tarfile.CHRTYPE
            ti.devmajor, ti.devminor = 195, 0
            tar.addfile(ti)
        add_file(tar, f"{top}/LICENSE", b"test licence (not NVIDIA's)\n")
    # NVIDIA's archives are single-block xz streams (xz -T1): decompression cannot be spread over threads.
    data = lzma.compress(raw.getvalue(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6)
    sha = hashlib.sha256(data).hexdigest()
    size = len(data)
    if v == "tamper":
        data = bytearray(data)
        data[len(data) // 2] ^= 0x55
        data = bytes(data)
    if v == "short":
        size += 4096
    path = os.path.join(a.out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    index = {
        "release_date": "2025-08-04",
        "release_label": a.release,
        "release_product": "cudnn",
        "cudnn": {
            "name": "NVIDIA CUDA Deep Neural Network library",
            "license": "cudnn",
            "license_path": "cudnn/LICENSE.txt",
            "version": a.version,
            a.platform: {f"cuda{a.cuda}": {"relative_path": rel, "sha256": sha,
                                           "md5": hashlib.md5(data).hexdigest(), "size": str(size)}},
            "cuda_variant": [str(a.cuda)],
        },
    }
    with open(os.path.join(a.out, f"redistrib_{a.release}.json"), "w") as f:
        json.dump(index, f, indent=4)
    print(path)


if __name__ == "__main__":
    main()
