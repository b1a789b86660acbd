package release

import (
	"encoding/hex"
	"strconv"
)

// Anonymizer turns contributors into stable pseudonymous ids. An id is 32 hex digits: the first 16 bytes of
// HMAC-SHA256(key, role + "\x00" + "u:" + user id | "w:" + worker id), where key = DeriveKey(install secret,
// "anon", scope). Creator and validator ids of one person differ (as in Dynabench, which uses
// sha1(secret + "-validator" + uid) for validators), ids are stable across the rounds of a scope (a task),
// and without the secret they cannot be linked to a user, or across scopes.
type Anonymizer struct{ key []byte }

// MinSecretLen is the shortest install secret accepted.
const MinSecretLen = 16

// NewAnonymizer returns an Anonymizer for one scope, usually the task code.
func NewAnonymizer(installSecret []byte, scope string) (*Anonymizer, error) {
	if len(installSecret) < MinSecretLen {
		return nil, invalid("secret", "must be at least %d bytes", MinSecretLen)
	}
	return &Anonymizer{key: DeriveKey(installSecret, "anon", scope)}, nil
}

// Creator returns the anon_uid of an example's writer, or "" for nobody.
func (a *Anonymizer) Creator(p Person) string { return a.id("creator", p) }

// Validator returns the anonymous id of a validator, or "" for nobody.
func (a *Anonymizer) Validator(p Person) string { return a.id("validator", p) }

func (a *Anonymizer) id(role string, p Person) string {
	var who string
	switch {
	case p.UserID != 0:
		who = "u:" + strconv.FormatInt(p.UserID, 10)
	case p.WorkerID != "":
		who = "w:" + p.WorkerID
	default:
		return ""
	}
	return hex.EncodeToString(mac(a.key, role, who)[:16])
}
