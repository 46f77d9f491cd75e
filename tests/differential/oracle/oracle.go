// The reference implementations gpuprep's image references and sizes are compared with: Docker's own
// distribution/reference (parse, normalise, familiarise) and go-units (RAMInBytes, the parser behind
// docker run --shm-size and --memory), as the distribution packages them. Built at test time; nothing of
// them is copied here.
//
// Input, one case a line: KIND HEX, HEX the input's bytes (KIND "ref" or "size"). Output, one JSON object a
// line, in the input's order: {"kind", "in": HEX, "ok": true, ...the answer} or {"kind", "in", "ok": false,
// "error": MESSAGE}. A reference's answer: normalised (String()), domain, path, tag, digest, familiar
// (FamiliarString()); a size's: bytes.
package main

import (
	"bufio"
	_ "crypto/sha256" // the digest algorithms Docker links (go-digest needs them registered)
	_ "crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/docker/distribution/reference"
	units "github.com/docker/go-units"
)

type answer map[string]interface{}

func ref(in string, a answer) {
	named, err := reference.ParseNormalizedNamed(in)
	if err != nil {
		a["ok"], a["error"] = false, err.Error()
		return
	}
	a["ok"], a["normalised"], a["familiar"] = true, named.String(), reference.FamiliarString(named)
	a["domain"], a["path"], a["tag"], a["digest"] = reference.Domain(named), reference.Path(named), "", ""
	if t, ok := named.(reference.Tagged); ok {
		a["tag"] = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		a["digest"] = d.Digest().String()
	}
}

func size(in string, a answer) {
	n, err := units.RAMInBytes(in)
	if err != nil {
		a["ok"], a["error"] = false, err.Error()
		return
	}
	a["ok"], a["bytes"] = true, n
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		kind, h, _ := strings.Cut(in.Text(), " ")
		raw, err := hex.DecodeString(h)
		if err != nil {
			fmt.Fprintf(os.Stderr, "oracle: bad line %q\n", in.Text())
			os.Exit(2)
		}
		a := answer{"kind": kind, "in": h}
		switch kind {
		case "ref":
			ref(string(raw), a)
		case "size":
			size(string(raw), a)
		default:
			fmt.Fprintf(os.Stderr, "oracle: unknown kind %q\n", kind)
			os.Exit(2)
		}
		if err := enc.Encode(a); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
			os.Exit(2)
		}
	}
}
