package release

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// CanaryPrefix starts every canary string.
const CanaryPrefix = "DYNABENCH CANARY GUID "

// canaryLen is the length of a canary: the prefix and a 36-character GUID.
const canaryLen = len(CanaryPrefix) + 36

// Canary returns the release's canary string: CanaryPrefix and a GUID (UUID version 8 layout) made of the
// first 16 bytes of HMAC-SHA256(key, "canary\x00" + task + "\x00" + round + "\x00" + version), where key
// is DeriveKey(install secret, "canary", task). It is the same every time a release is built, differs
// between releases, and cannot be forged for a release without the secret. It is written into every
// record, the dataset card and the datasheet; a model trained on the data may learn to complete it, and a
// training file that contains it has the data in it.
func Canary(key []byte, task string, round int, version string) string {
	b := mac(key, "canary", task, strconv.Itoa(round), version)[:16]
	b[6] = b[6]&0x0f | 0x80 // version 8: custom
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	h := hex.EncodeToString(b)
	return fmt.Sprintf("%s%s-%s-%s-%s-%s", CanaryPrefix, h[:8], h[8:12], h[12:16], h[16:20], h[20:])
}

// FindCanary scans r, of any size and line length, for canary strings, case-insensitively. With known
// canaries it returns those of them that occur; with none it returns every canary-shaped string found, its GUID lower-cased.
// The result is sorted and has no duplicates.
func FindCanary(r io.Reader, known ...string) ([]string, error) {
	want := make(map[string]string, len(known)) // upper-cased → as given
	for _, k := range known {
		want[string(bytes.ToUpper([]byte(k)))] = k
	}
	found := map[string]bool{}
	prefix := []byte(CanaryPrefix)
	br := bufio.NewReaderSize(r, 64<<10)
	var win []byte // the unscanned tail of the previous chunk, carried over so a canary may span chunks
	buf := make([]byte, 64<<10)
	for {
		n, err := br.Read(buf)
		win = append(win, bytes.ToUpper(buf[:n])...)
		for i := 0; ; {
			j := bytes.Index(win[i:], prefix)
			if j < 0 || i+j+canaryLen > len(win) {
				if j >= 0 {
					i += j
				} else {
					i = max(i, len(win)-len(prefix)+1)
				}
				win = append(win[:0], win[max(i, 0):]...)
				break
			}
			c := string(win[i+j : i+j+canaryLen])
			if orig, ok := want[c]; ok {
				found[orig] = true
			} else if len(known) == 0 && guidShaped(c[len(CanaryPrefix):]) {
				found[CanaryPrefix+strings.ToLower(c[len(CanaryPrefix):])] = true
			}
			i += j + 1
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("release: scanning for canaries: %w", err)
		}
	}
	out := make([]string, 0, len(found))
	for c := range found {
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

// guidShaped reports whether s is 8-4-4-4-12 hex digits.
func guidShaped(s string) bool {
	for i, c := range []byte(s) {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return len(s) == 36
}
