"""Image references and sizes: gpuprep against Docker's distribution/reference and go-units.

  docker_cases.py gen > cases              every case, "ref HEX" and "size HEX" lines
  docker_cases.py check ORACLE GPUPREP     compares the two answer files; exit 1 on a difference that is
                                           not one of the deliberate ones below
"""
import re
import sys

from common import main, Report, paired, rng, show, unhex, write_cases

HEX = "0123456789abcdef"
SHA = "sha256:" + "a" * 64


def fixed_refs():
    long_path = "/".join(["abcdefghij"] * 23) + "/abcd"  # 257 bytes
    yield from [
        # what the disagreements were found with
        "index.docker.io/debian", "index.docker.io/library/debian", "index.docker.io/nvidia/cuda:12.2.2-base",
        "test.com:http/foo", "a.com:5000:6000/x", "dock..er/docker", "a.com./x", "ab-.com/x", "a___b", "ab-.com",
        "a" * 64, "f" * 64, "0123456789abcdef" * 4 + ":tag", "0123456789abcdef" * 4 + "/x", "A" * 64, "a" * 63,
        "a" * 65,
        # the everyday ones
        "ubuntu", "ubuntu:22.04", "library/ubuntu", "docker.io/ubuntu", "docker.io/library/ubuntu:24.04",
        "nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04@" + SHA,
        "nvidia/cuda:12.2.2-base-ubuntu22.04", "localhost/x", "localhost:5000/x", "localhost:5000",
        "127.0.0.1:5000/a/b:tag", "mirror.local:5000/nvcr/nvidia/pytorch@" + SHA, "ghcr.io/org/repo/sub:v1",
        "registry-1.docker.io/library/x", "docker.io", "docker.io/x", "docker.io/library", "docker.io/library/x/y",
        "index.docker.io", "library/x/y", "x/library/y", "localhost", "LOCALHOST/x", "Localhost:5000/x",
        # hosts
        "[::1]:5000/x", "[::1]/x", "[fe80::1%eth0]:5000/x", "[::1]:5000", "[]:5000/x", "[::1]x/y", "[::1]:/x",
        "[::g]/x", "FOO.COM:5000/bar", "Foo.com/bar", "a_b.com/x", "foo_bar:5000/x", "a-.com/x", "-a.com/x",
        "a.-com/x", "a..com/x", ".a.com/x", "a.com:/x", "a.com:0/x", "a.com:65536/x", "a.com:99999999999/x",
        "a.com:5000a/x", ":5000/x", "a:5000/x", "1.2.3.4/x", "1.2.3.4:80/x", "xn--bcher-kva.example/x",
        "a" * 250 + ".com/x", "a" * 300 + ".com/x",
        # path components and separators
        "a/b", "a//b", "/a", "a/", "./a", "a/../b", "a.b", "a..b", "a._b", "a_.b", "a__b", "a-b", "a--b", "a---b",
        "a-_b", "a_-b", "a.-b", "-a", "a-", "_a", "a_", ".a", "a.", "A/b", "a/B", "Nvidia/pytorch", "a/b.c_d-e",
        "0", "0/0", "a/b/c/d/e/f/g/h", long_path, "docker.io/" + long_path, "library/" + long_path[:247],
        "a.com/" + long_path[:255], "a.com/" + long_path[:256], ("abcdefghij" * 25)[:245],
        ("abcdefghij" * 25)[:248], ("abcdefghij" * 26)[:255], ("abcdefghij" * 26)[:256],
        "x" * 200 + ".example.com/" + "y" * 255,
        # tags
        "a:b", "a:B", "a:_b", "a:.b", "a:-b", "a:b.c-d_e", "a:" + "t" * 128, "a:" + "t" * 129, "a:", "a::b",
        "a:b:c", "a/b:c/d", "a:b c", "a:\u00e9", ":tag", "localhost:5000:tag",
        # digests
        "a@" + SHA, "a:t@" + SHA, "a@sha256:" + "A" * 64, "a@sha256:" + "a" * 63, "a@sha256:" + "a" * 65,
        "a@sha512:" + "b" * 128, "a@sha384:" + "c" * 96, "a@md5:" + "d" * 32, "a@sha256+b64:" + "e" * 64,
        "a@sha256:", "a@", "@" + SHA, "a@" + SHA + "@" + SHA, "a@SHA256:" + "a" * 64, "a@" + "a" * 64,
        # hostile bytes
        "", " ", "a b", " a", "a ", "a\tb", "a\nb", "a\x00b", "a\x1b[31m", "\u00fcbuntu", "a/\u00fc", "\xff",
        "a\u200bb", "a;rm -rf /", "$(id)", "a|b", "a&b", "a%2fb", "a?b", "a#b", "a*", "a\\b",
    ]


def random_refs(r, n):
    label_chars = "abcz09-" + "A"
    comp_chars = "abz09" * 4 + "._-"
    tag_chars = "aZ09_.-"

    def label():
        return "".join(r.choice(label_chars) for _ in range(r.randint(1, 6)))

    def domain():
        kind = r.random()
        if kind < 0.1:
            return "localhost" + (":" + str(r.randint(0, 70000)) if r.random() < 0.5 else "")
        if kind < 0.2:
            host = "[" + "".join(r.choice("0123456789abcdefABCDEF:.") for _ in range(r.randint(0, 8))) + "]"
        else:
            host = ".".join(label() for _ in range(r.randint(1, 3)))
            if r.random() < 0.1:
                host += "."
        if r.random() < 0.3:
            host += ":" + r.choice([str(r.randint(0, 70000)), "", "http", "1:2", "08"])
        return host

    def component():
        return "".join(r.choice(comp_chars) for _ in range(r.randint(1, 8)))

    for _ in range(n):
        s = ""
        if r.random() < 0.5:
            s = domain() + "/"
        s += "/".join(component() for _ in range(r.randint(1, 3)))
        if r.random() < 0.4:
            s += ":" + "".join(r.choice(tag_chars) for _ in range(r.randint(0, 10)))
        if r.random() < 0.2:
            algo = r.choice(["sha256", "sha256", "sha512", "Sha256", "sha1"])
            s += "@" + algo + ":" + "".join(r.choice(HEX + "A") for _ in range(r.choice([64, 64, 128, 63, 32])))
        if r.random() < 0.15:  # one hostile edit
            i = r.randint(0, len(s))
            s = s[:i] + r.choice("/:@.-_A [] %\x00\xff") + s[i + r.randint(0, 1):]
        yield s


def fixed_sizes():
    yield from [
        "0.3MB", "0.3m", "1.5G", "1.5g", "0.5k", "0.1", "0.9", "1.999999b", "2.5 GiB", "0.0001t", "0.3p",
        "64m", "1g", "16GiB", "128GiB", "512 MB", "67108864", "0", "1b", "1B", "1k", "1K", "1kb", "1KiB", "1kib",
        "1ki", "1i", "1ib", "1iB", "1 b", "1  b", " 1", "1 ", "1\t", "1p", "1P", "1pb", "1e3", "1e", "0x10",
        "1.", ".5", "1.2.3", "1..2", "-1", "+1", "1,5", "1_000", "", "k", "g", "1bb", "1kk", "1 k b", "1ik",
        "1ẞ", "\u0661", "9223372036854775807", "9223372036854775808", "9223372036854775807b",
        "9007199254740993", "18446744073709551616", "8191p", "8192p", "8193p", "8388607t", "8388608t",
        "1" + "0" * 30, "1" + "0" * 400, "0." + "0" * 400 + "1", "0." + "9" * 40 + "k", "1.0000000000000001",
        "4503599627370497.5", "00012", "0012.50k", "1\x00", "1m\n",
    ]


def random_sizes(r, n):
    for _ in range(n):
        num = str(r.choice([0, 1, r.randint(0, 1000), r.randint(0, 1000), r.randint(0, 10**6), r.randint(0, 10**6),
                              r.randint(0, 10**12), r.randint(0, 10**20)]))
        if r.random() < 0.4:
            num += "." + "".join(r.choice("0123456789") for _ in range(r.randint(1, 20)))
        unit = (" " if r.random() < 0.2 else "") + r.choice(["", "", "k", "M", "g", "T", "p", "x"])
        unit += r.choice(["", "", "i", "I"]) + r.choice(["", "b", "B", "bb"])
        s = num + unit
        if r.random() < 0.1:
            i = r.randint(0, len(s))
            s = s[:i] + r.choice(" .-+e_x\x00") + s[i:]
        yield s


def gen():
    r = rng("docker")
    write_cases("ref", ((s,) for s in list(fixed_refs()) + list(random_refs(r, 3000))))
    write_cases("size", ((s,) for s in list(fixed_sizes()) + list(random_sizes(r, 2000))))


REF_FIELDS = ("normalised", "domain", "path", "tag", "digest", "familiar")


def ref_reason(text, docker, ours):
    """The documented reason gpuprep answers differently (docs/values.md), or None."""
    if docker["ok"] and not ours["ok"]:
        if docker["digest"] and not docker["digest"].startswith("sha256:"):
            return "digests other than sha256 are refused (gpuprep verifies sha256 only)"
        if docker["domain"] == "":
            return ("a first component with '.' or ':' that is not a registry host is refused (Docker keeps it"
                    " as a path on no registry)")
    if ours["ok"] and not docker["ok"]:
        if "must not be more than 255 characters" in docker["error"] and len(ours["path"]) <= 255:
            return ("the 255-byte limit applies to the path alone, as distribution/reference does since v0.6.0"
                    " (the packaged 2.8 counts the registry too)")
        if ours["domain"].startswith("["):
            return ("an IPv6 registry host in brackets is read, as distribution/reference does since v0.5.0"
                    " (the packaged 2.8 refuses it)")
    return None


def i_without_unit_and_b(text):
    """A suffix go-units 0.4.0's sizeRegex reads and v0.5.0's parseSize refuses: "i", "<unit>i", "ib"."""
    m = re.fullmatch(r"\d+(\.\d+)? ?([kKmMgGtTpP]?)([iI]?)([bB]?)", text)
    return bool(m and m.group(3) and not (m.group(2) and m.group(4)))


def check(oracle_file, gpuprep_file):
    refs = Report("image references", "distribution/reference")
    sizes = Report("sizes", "the packaged go-units 0.4.0 RAMInBytes")
    for docker, ours in paired(oracle_file, gpuprep_file):
        text = unhex(docker["in"])
        if docker["kind"] == "ref":
            if docker["ok"] == ours["ok"] and all(docker.get(k) == ours.get(k) for k in REF_FIELDS):
                refs.same()
                continue
            what = ("docker: %s; gpuprep: %s" % (
                {k: docker[k] for k in REF_FIELDS} if docker["ok"] else docker["error"],
                {k: ours[k] for k in REF_FIELDS} if ours["ok"] else "refused"))
            refs.differs(show(text), what, ref_reason(text, docker, ours))
        else:
            if docker["ok"] == ours["ok"] and docker.get("bytes") == ours.get("bytes"):
                sizes.same()
                continue
            reason = None
            if docker["ok"] and not ours["ok"] and docker["bytes"] < 0:
                reason = "2^63 bytes or more is refused (go-units' int64 overflows to a negative size)"
            elif docker["ok"] and not ours["ok"] and i_without_unit_and_b(text):
                reason = ("an 'i' without a unit before it and a 'b' after it is refused, as go-units v0.5.0 does"
                          " (size.go at e682442797b3, parseSize); the packaged 0.4.0's sizeRegex reads it")
            what = "go-units: %s; gpuprep: %s" % (docker.get("bytes", docker.get("error")),
                                                  ours.get("bytes", "refused"))
            sizes.differs(show(text), what, reason)
    return refs.finish() | sizes.finish()


if __name__ == "__main__":
    main(__doc__, gen, check, 2)
