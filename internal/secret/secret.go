// Package secret hashes passwords (argon2id) and makes and hashes opaque bearer tokens.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id cost parameters. They are stored in every hash (PHC string format), so
// raising them later keeps old hashes verifiable.
type Params struct {
	Time    uint32 // iterations
	Memory  uint32 // KiB
	Threads uint8
	KeyLen  uint32
	SaltLen int
}

// DefaultParams follow OWASP's password-storage guidance for argon2id (19 MiB, 2 iterations, 1
// lane): about 30 ms on one core here, which keeps login affordable under a rate limit while making
// offline guessing expensive.
var DefaultParams = Params{Time: 2, Memory: 19 * 1024, Threads: 1, KeyLen: 32, SaltLen: 16}

// TestParams are cheap parameters for tests only.
var TestParams = Params{Time: 1, Memory: 64, Threads: 1, KeyLen: 32, SaltLen: 16}

// HashPassword returns the argon2id PHC string for password.
func HashPassword(password string, p Params) (string, error) {
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("secret: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// ErrMismatch is returned when a password does not match its hash.
var ErrMismatch = errors.New("secret: password does not match")

// VerifyPassword checks password against a PHC string in constant time.
func VerifyPassword(password, encoded string) error {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return errors.New("secret: not an argon2id hash")
	}
	var version int
	var p Params
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return errors.New("secret: unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return errors.New("secret: bad argon2 parameters")
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return errors.New("secret: bad salt")
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return errors.New("secret: bad key")
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrMismatch
	}
	return nil
}

// TokenPrefix marks our tokens so that secret scanners and people recognise them.
const TokenPrefix = "dbk_"

// NewToken returns a fresh random bearer token (256 bits) and its hash for storage.
func NewToken() (token string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("secret: token: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is what the database stores and looks tokens up by. A fast hash is right here: the
// token has 256 bits of entropy, so nothing can be guessed from its hash.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
