"""URLs: gpuprep's ParseUrl against libcurl's own URL parser (curl_url_set, as the easy interface calls it).

  url_cases.py gen > cases        "url HEX" lines
  url_cases.py check GPUPREP      gpuprep's answers (each with libcurl's reading beside it, from
                                  tests/differential/answers.cc) compared
A URL gpuprep accepts must be one libcurl accepts, with the same scheme, host (as an address, for numeric
hosts), port and path (after libcurl's dot-segment removal), and a host gpuprep calls loopback must be one
libcurl reads as loopback. A URL gpuprep refuses while libcurl accepts it must be refused for one of the
documented reasons (docs/values.md), which are listed.
"""
import ipaddress
import sys

from common import main, Report, paired, rng, show, unhex, write_cases

# gpuprep's refusal (ParseUrl's reason) -> what docs/values.md says about it.
DELIBERATE = {
    "user information (user@) is not allowed": "user information (user@) is refused",
    "a fragment (#) is not allowed": "a fragment is refused (it is never sent; it hides in logs)",
    "a percent-encoded host is not allowed": "'%' in the authority (percent-encoding, IPv6 zone ids) is refused",
    "characters \\ \" < > ` { } | ^ are not allowed": "\\ \" < > ` { } | ^ are refused anywhere",
    "spaces, control and non-ASCII characters are not allowed": "spaces, control and non-ASCII bytes are refused",
    "expected scheme://host/path": "a scheme and '://' are required (libcurl guesses a missing scheme)",
    "a query or fragment must follow a path": "a query needs a path before it (https://h/?q, not https://h?q)",
    "the port is not a number from 1 to 65535": "a port is 1-65535 in at most 5 digits (libcurl takes 0 and an empty port)",
    "an IPv4 address is written as four decimal numbers 0-255 without leading zeros":
        "a numeric IPv4 host is four decimal octets (libcurl also reads 127.1, 0x7f.1 and 010.0.0.1)",
    "a host name holds letters, digits, '.' and '-' only": "a host name is letters, digits, '.' and '-' (no '_', '~', '!', ...)",
    "a file URL names no host (file:///path)": "a file URL names no host (libcurl takes file://localhost/)",
    "the host is missing": "a host follows '://' at once (libcurl skips a third '/': https:///x is host x)",
    "the scheme is not a URL scheme": "a scheme starts with a letter (RFC 3986 section 3.1; libcurl also takes"
                                      " 1ab://h)",
    "longer than 2048 characters": "a URL is at most 2048 bytes",
}

HOSTS = ["example.com", "EXAMPLE.com", "a-b.example", "localhost", "127.0.0.1", "127.0.0.255", "10.1.2.3",
         "127.1", "127.0.1", "0x7f.0.0.1", "0x7f000001", "2130706433", "010.0.0.1", "0177.0.0.1", "127.000.000.001",
         "1.2.3.256", "1.2.3.4.5", "256.1.1.1", "1.2.3.", "1e100.net", "08.1.1.1", "0x.1.1.1", "0xg.1", "4294967295",
         "4294967296", "a_b.com", "a~b", "xn--bcher-kva.example", "-a.com", "a-.com", "a..b", ".a", "a.", "",
         "[::1]", "[::]", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]", "[::ffff:1.2.3.4]", "[2001:db8::1]",
         "[2001:DB8::A]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7::]", "[::2:3:4:5:6:7:8]", "[1::2:3:4:5:6:7:8]",
         "[1:2:3:4:5:6:7:8:9]", "[ab.be]", "[:1]", "[1:]", "[:::]", "[1:::2]", "[12345::]", "[::1.2.3]",
         "[::1.2.3.4.5]", "[::01.2.3.4]", "[::256.1.1.1]", "[1.2.3.4]", "[::1.2.3.4:5]", "[g::]", "[]", "[:]",
         "[::1%25eth0]", "[fe80::1%eth0]", "[::1", "::1]", "[::1]x", "[::1]]", "[[::1]]", "[0::0]", "[::0:0]",
         "[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:7:1.2.3.4]", "[::1:2:3:4:5:1.2.3.4]"]
PORTS = ["", "", "", ":443", ":8080", ":1", ":65535", ":65536", ":0", ":", ":00080", ":000080", ":99999",
         ":-1", ":+80", ":80a", ":0x50", ": 80"]
PATHS = ["", "", "/", "/x", "/a/b.json", "/a/../b", "/a/./b", "/../x", "/a/b/..", "/.", "/%2e%2e/x", "/a%20b",
         "/a?b=c", "/a?", "?x", "/a#frag", "#f", "/a b", "/a\\b", "/a\"b", "/\u00e9", "/a\tb", "//x", "/a;b",
         "/a@b", "/:x", "/~u/", "/a|b", "/{x}", "/a^b", "/a`b", "/<x>", "/a%00b"]
SCHEMES = ["https", "https", "http", "HTTP", "HtTpS", "file", "ftp", "git+ssh", "s3", "1ab", "a b", "", "ht_tp"]
SEPARATORS = ["://", "://", "://", ":/", ":", ":///", "//", ":\\\\"]
USERS = ["", "", "", "", "", "user@", "user:pw@", "@", ":@", "a%40b@", "u@v@"]


def gen():
    r = rng("url")
    fixed = ["https://example.com/x", "http://127.0.0.1:8080/m.yaml", "file:///srv/mirror/k.gpg", "https://[ab.be]/x",
             "https://[:1]/x", "https://[::1]/x", "http://[::1]:8080/", "https://example.com", "https://h?q",
             "https://user@h/", "https://h/#f", "https://h/" + "a" * 2100, "file://localhost/etc/x", "file:/x",
             "file:x", "https:/h/x", "https:///x", "http://localhost./x", "http://LOCALHOST/x", "http://127.1/",
             "https://%65xample.com/", "http://0x7f000001/", "http://[::ffff:127.0.0.1]/", "HTTPS://EXAMPLE.COM/"]
    cases = [(u,) for u in fixed]
    for host in HOSTS:
        for port in ("", ":443", ":8080"):
            cases.append(("https://" + host + port + "/x",))
            cases.append(("http://" + host + port + "/",))
    for _ in range(2500):
        u = (r.choice(SCHEMES) + r.choice(SEPARATORS) + r.choice(USERS) + r.choice(HOSTS) + r.choice(PORTS)
             + r.choice(PATHS) + (r.choice(PATHS) if r.random() < 0.2 else ""))
        if r.random() < 0.1:
            i = r.randint(0, len(u))
            u = u[:i] + r.choice(["@", "#", "%", " ", "\x00", "\n", "[", "]", ":", "/", "\\", "\xff"]) + u[i:]
        cases.append((u,))
    write_cases("url", cases)


def remove_dot_segments(path):
    """RFC 3986 5.2.4, as libcurl applies it to the path it sends."""
    out = []
    inp = path
    while inp:
        if inp.startswith("../"):
            inp = inp[3:]
        elif inp.startswith("./"):
            inp = inp[2:]
        elif inp.startswith("/./") or inp == "/.":
            inp = "/" + inp[3:] if inp.startswith("/./") else "/"
        elif inp.startswith("/../") or inp == "/..":
            inp = "/" + inp[4:] if inp.startswith("/../") else "/"
            if out:
                out.pop()
        elif inp in (".", ".."):
            inp = ""
        else:
            i = inp.find("/", 1)
            i = len(inp) if i < 0 else i
            out.append(inp[:i])
            inp = inp[i:]
    return "".join(out)


def address(host):
    """The host as an IP address when it is one (brackets dropped), else the lower-cased name."""
    h = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        return host.lower()


def curl_loopback(host):
    a = address(host)
    return a == "localhost" or (not isinstance(a, str) and (a.is_loopback or (
        isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None and a.ipv4_mapped.is_loopback)))


def compare(ours, curl):
    """'' when gpuprep's reading is libcurl's, else what differs."""
    diffs = []
    if ours["scheme"] != curl["scheme"].lower():
        diffs.append("scheme %r vs %r" % (ours["scheme"], curl["scheme"]))
    if address(ours["host"]) != address(curl["host"]):
        diffs.append("host %r vs %r" % (ours["host"], curl["host"]))
    if (int(ours["port"]) if ours["port"] else None) != (int(curl["port"]) if curl["port"] else None):
        diffs.append("port %r vs %r" % (ours["port"], curl["port"]))
    path, _, query = ours["path"].partition("?")
    want_path = remove_dot_segments(path) or "/"
    if want_path != curl["path"] or ("?" in ours["path"] and query != curl["query"]):
        diffs.append("path %r vs %r?%r" % (ours["path"], curl["path"], curl["query"]))
    if ours["loopback"] and not curl_loopback(curl["host"]):
        diffs.append("gpuprep calls %r loopback, libcurl reads %r" % (ours["host"], curl["host"]))
    return "; ".join(diffs)


def check(gpuprep_file):
    report = Report("URLs", "libcurl curl_url")
    for (ours,) in paired(gpuprep_file):
        url, curl = unhex(ours["in"]), ours["curl"]
        if not ours["ok"] and not curl["ok"]:
            report.same()
        elif ours["ok"] and not curl["ok"]:
            report.differs(show(url), "gpuprep accepts, libcurl refuses: " + curl["error"])
        elif ours["ok"]:
            diff = compare(ours, curl)
            if diff:
                report.differs(show(url), diff)
            else:
                report.same()
        else:
            reason = DELIBERATE.get(ours["why"])
            report.differs(show(url), "gpuprep refuses (%s), libcurl accepts" % ours["why"], reason)
    return report.finish()


if __name__ == "__main__":
    main(__doc__, gen, check, 1)
