package secret

import (
	"strings"
	"testing"
)

func TestPasswordRoundTrip(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse battery", TestParams)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("unexpected PHC string %q", h)
	}
	if err := VerifyPassword("correct horse battery", h); err != nil {
		t.Fatalf("right password rejected: %v", err)
	}
	if err := VerifyPassword("correct horse batterY", h); err != ErrMismatch {
		t.Fatalf("wrong password: got %v, want ErrMismatch", err)
	}
	h2, _ := HashPassword("correct horse battery", TestParams)
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
}

func TestVerifyRejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"", "$argon2id$", "$argon2i$v=19$m=64,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=x$AAAA$AAAA",
		"$argon2id$v=19$m=64,t=1,p=1$!!$AAAA", "$argon2id$v=19$m=64,t=1,p=1$AAAA$"} {
		if err := VerifyPassword("pw", enc); err == nil {
			t.Errorf("VerifyPassword accepted %q", enc)
		}
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	tok, hash, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) < 40 {
		t.Fatalf("token %q", tok)
	}
	if string(HashToken(tok)) != string(hash) {
		t.Fatal("hash of token differs from the hash returned with it")
	}
	tok2, _, _ := NewToken()
	if tok == tok2 {
		t.Fatal("two tokens are equal")
	}
}
