package sqlstore_test

import (
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

func TestUsers(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		alice := &dynabench.User{Username: "Alice", Email: "alice@example.org", PasswordHash: "$argon2id$v=19$abc", Admin: true}
		must(t, s.CreateUser(ctx, alice))
		if alice.ID == 0 || !alice.CreatedAt.Equal(millis(testNow)) || alice.CreatedAt.Location() != time.UTC {
			t.Fatalf("created user: id %d, created %v", alice.ID, alice.CreatedAt)
		}
		want := *alice
		want.CreatedAt = millis(testNow)

		t.Run("find", func(t *testing.T) {
			got, err := s.FindUserByID(ctx, alice.ID)
			must(t, err)
			wantEqual(t, "by id", got, &want)
			got, err = s.FindUserByUsername(ctx, "aLICE")
			must(t, err)
			wantEqual(t, "by username, other case", got, &want)
			_, err = s.FindUserByID(ctx, alice.ID+1000)
			wantCode(t, err, dynabench.ENOTFOUND)
			_, err = s.FindUserByUsername(ctx, "bob")
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("conflicts", func(t *testing.T) {
			err := s.CreateUser(ctx, &dynabench.User{Username: "ALICE", Email: "other@example.org", PasswordHash: "h"})
			wantCode(t, err, dynabench.ECONFLICT)
			err = s.CreateUser(ctx, &dynabench.User{Username: "alice2", Email: "Alice@Example.ORG", PasswordHash: "h"})
			wantCode(t, err, dynabench.ECONFLICT)
			n, err := s.CountUsers(ctx)
			must(t, err)
			if n != 1 {
				t.Fatalf("count after conflicts = %d, want 1", n)
			}
		})

		t.Run("admin", func(t *testing.T) {
			must(t, s.SetUserAdmin(ctx, alice.ID, false))
			got, err := s.FindUserByID(ctx, alice.ID)
			must(t, err)
			if got.Admin {
				t.Fatal("admin not revoked")
			}
			must(t, s.SetUserAdmin(ctx, alice.ID, true))
			got, err = s.FindUserByID(ctx, alice.ID)
			must(t, err)
			if !got.Admin {
				t.Fatal("admin not granted")
			}
			wantCode(t, s.SetUserAdmin(ctx, alice.ID+1000, true), dynabench.ENOTFOUND)
		})

		t.Run("list and count", func(t *testing.T) {
			var all []int64
			all = append(all, alice.ID)
			for range 4 {
				all = append(all, e.user(t).ID)
			}
			n, err := s.CountUsers(ctx)
			must(t, err)
			if n != 5 {
				t.Fatalf("count = %d, want 5", n)
			}
			var seen []int64
			var after int64
			for {
				page, err := s.FindUsers(ctx, after, 2)
				must(t, err)
				if len(page) == 0 {
					break
				}
				if len(page) > 2 {
					t.Fatalf("page of %d, limit 2", len(page))
				}
				for _, u := range page {
					seen = append(seen, u.ID)
				}
				after = page[len(page)-1].ID
			}
			wantEqual(t, "paged ids", seen, all)
			page, err := s.FindUsers(ctx, 0, 1)
			must(t, err)
			wantEqual(t, "first page", page, []*dynabench.User{&want})
		})
	})
}

func TestTokens(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u, other := e.user(t), e.user(t)
		expires := testNow.Add(30*24*time.Hour + 123456789) // sub-millisecond, not UTC
		tok := &dynabench.Token{UserID: u.ID, Name: "laptop", Kind: "api", Hash: []byte{0, 1, 2, 0xfe, 0xff}, ExpiresAt: &expires}
		must(t, s.CreateToken(ctx, tok))
		session := &dynabench.Token{UserID: u.ID, Name: "", Kind: "session", Hash: []byte("session-hash")}
		must(t, s.CreateToken(ctx, session))
		foreign := &dynabench.Token{UserID: other.ID, Name: "x", Kind: "api", Hash: []byte("foreign")}
		must(t, s.CreateToken(ctx, foreign))

		want := *tok
		want.CreatedAt, want.ExpiresAt = millis(testNow), timep(millis(expires))
		wantSession := *session
		wantSession.CreatedAt = millis(testNow)

		t.Run("find by hash", func(t *testing.T) {
			got, err := tokenByHash(s, []byte{0, 1, 2, 0xfe, 0xff})
			must(t, err)
			wantEqual(t, "token", got, &want)
			if got.ExpiresAt.Location() != time.UTC || got.LastUsedAt != nil {
				t.Fatalf("expires %v, last used %v", got.ExpiresAt, got.LastUsedAt)
			}
			got, err = tokenByHash(s, []byte("session-hash"))
			must(t, err)
			wantEqual(t, "token without expiry", got, &wantSession)
			_, err = tokenByHash(s, []byte{0, 1, 2})
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("find with its user", func(t *testing.T) {
			gotTok, gotUser, err := s.FindTokenUser(ctx, []byte{0, 1, 2, 0xfe, 0xff})
			must(t, err)
			wantEqual(t, "token", gotTok, &want)
			wantUser, err := s.FindUserByID(ctx, u.ID)
			must(t, err)
			wantEqual(t, "its user", gotUser, wantUser)
			gotTok, gotUser, err = s.FindTokenUser(ctx, []byte("foreign"))
			must(t, err)
			if gotTok.UserID != other.ID || gotUser.ID != other.ID {
				t.Fatalf("foreign token: token of %d, user %d, want %d", gotTok.UserID, gotUser.ID, other.ID)
			}
			_, _, err = s.FindTokenUser(ctx, []byte{0, 1, 2})
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("list", func(t *testing.T) {
			got, err := s.FindTokens(ctx, u.ID)
			must(t, err)
			wantEqual(t, "tokens newest first", got, []*dynabench.Token{&wantSession, &want})
			got, err = s.FindTokens(ctx, other.ID+1000)
			must(t, err)
			if len(got) != 0 {
				t.Fatalf("tokens of nobody: %v", got)
			}
		})

		t.Run("conflicts and references", func(t *testing.T) {
			wantCode(t, s.CreateToken(ctx, &dynabench.Token{UserID: other.ID, Kind: "api", Hash: tok.Hash}), dynabench.ECONFLICT)
			wantCode(t, s.CreateToken(ctx, &dynabench.Token{UserID: other.ID + 1000, Kind: "api", Hash: []byte("new")}), dynabench.ENOTFOUND)
		})

		t.Run("delete", func(t *testing.T) {
			// Another user's token is not found, and survives the attempt.
			wantCode(t, s.DeleteToken(ctx, u.ID, foreign.ID), dynabench.ENOTFOUND)
			if _, err := tokenByHash(s, foreign.Hash); err != nil {
				t.Fatalf("foreign token gone after refused delete: %v", err)
			}
			must(t, s.DeleteToken(ctx, u.ID, tok.ID))
			_, err := tokenByHash(s, tok.Hash)
			wantCode(t, err, dynabench.ENOTFOUND)
			wantCode(t, s.DeleteToken(ctx, u.ID, tok.ID), dynabench.ENOTFOUND)
			got, err := s.FindTokens(ctx, u.ID)
			must(t, err)
			wantEqual(t, "remaining", got, []*dynabench.Token{&wantSession})
		})
	})
}

// tokenByHash is FindTokenUser's token alone.
func tokenByHash(s dynabench.Store, hash []byte) (*dynabench.Token, error) {
	t, _, err := s.FindTokenUser(ctx, hash)
	return t, err
}
