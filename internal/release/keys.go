package release

import (
	"crypto/hmac"
	"crypto/sha256"
)

// DeriveKey derives a purpose- and scope-bound key from the install secret, so one secret can key the
// splits, the anonymous ids and the canaries of every task without any two being related:
// HMAC-SHA256(secret, "dynabench/v1\x00" + purpose + "\x00" + scope).
//
// Use purpose "split", "anon" or "canary" and the task code as scope. Store the derived split key with the
// task if the install secret may ever be rotated: splits must not move.
func DeriveKey(secret []byte, purpose, scope string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("dynabench/v1\x00" + purpose + "\x00" + scope))
	return m.Sum(nil)
}

// mac returns HMAC-SHA256(key, parts joined by NUL).
func mac(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for i, p := range parts {
		if i > 0 {
			m.Write([]byte{0})
		}
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}
