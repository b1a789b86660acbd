// Package blob stores opaque byte objects — trained models, exports, uploads — under string keys, behind
// one small interface: a directory on the local disk by default (Dir), S3-compatible storage at scale
// later, without the callers changing.
//
// Keys are slash-separated paths of plain segments ("models/3f2a….dbm"): letters, digits, '.', '_' and
// '-', no segment starting with '.', so a key can never name anything outside the store.
package blob

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dynabench-go/dynabench"
)

// Store holds blobs. Implementations are safe for concurrent use; a Put is atomic (a concurrent or
// later Get sees the old blob or the new one, never part of either) and durable once it returns.
//
// Errors: EINVALID for a malformed key; ENOTFOUND from Get and Delete when no blob has the key
// (ErrNotFound matches with errors.Is); anything else is internal.
type Store interface {
	// Put stores what r yields under key, replacing any blob already there, and returns its size and
	// SHA-256. Nothing is stored when r fails or ctx ends first.
	Put(ctx context.Context, key string, r io.Reader) (Info, error)
	// Get opens the blob for reading; the caller closes it.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the blob.
	Delete(ctx context.Context, key string) error
}

// Info describes a stored blob.
type Info struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lower-case hex
}

// ErrNotFound is the error (wrapped with the key) for a missing blob.
var ErrNotFound = &dynabench.Error{Code: dynabench.ENOTFOUND, Message: "blob not found"}

// MaxKeyLen bounds a key, comfortably under every filesystem's and S3's path limits.
const MaxKeyLen = 512

// ValidateKey checks a key: 1 to MaxKeyLen bytes of '/'-separated segments, each made of ASCII letters,
// digits, '.', '_' and '-' and not starting with '.'. That excludes "", "..", absolute paths,
// backslashes, empty segments and hidden names (the Dir store keeps its temporary files under ".tmp").
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return keyError(key, fmt.Sprintf("must be 1 to %d bytes", MaxKeyLen))
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" {
			return keyError(key, "has an empty path segment")
		}
		if seg[0] == '.' {
			return keyError(key, "has a segment starting with '.'")
		}
		for i := 0; i < len(seg); i++ {
			if !keyByte(seg[i]) {
				return keyError(key, fmt.Sprintf("has the character %q (allowed: letters, digits, '.', '_', '-', '/')", seg[i]))
			}
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

func keyError(key, problem string) error {
	if len(key) > 64 {
		key = key[:64] + "…"
	}
	return &dynabench.Error{Code: dynabench.EINVALID, Field: "key", Message: fmt.Sprintf("blob key %q %s", key, problem)}
}
