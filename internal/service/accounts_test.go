package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

func TestAccounts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, nil)
		ctx := context.Background()
		alice, bob := f.users["alice"], f.users["bob"]

		u, session, err := f.svc.Login(ctx, "alice", "password-alice")
		wantCode(t, err, "")
		if u.ID != alice.ID || !strings.HasPrefix(session, "dbk_") {
			t.Fatalf("login: %+v %q", u, session)
		}
		_, _, errWrong := f.svc.Login(ctx, "alice", "password-bob")
		_, _, errUnknown := f.svc.Login(ctx, "nobody", "password-bob")
		wantCode(t, errWrong, dynabench.EUNAUTHORIZED)
		wantCode(t, errUnknown, dynabench.EUNAUTHORIZED)
		if errWrong.Error() != errUnknown.Error() {
			t.Errorf("wrong password says %q, unknown user says %q", errWrong, errUnknown)
		}

		for _, tc := range []struct{ username, email, password, field string }{
			{"alice", "new@example.com", "longenough", ""},
			{"newname", "ALICE@example.com", "longenough", ""},
			{"ab", "ab@example.com", "longenough", "username"},
			{"-dash", "d@example.com", "longenough", "username"},
			{"ok_name", "no-at-sign", "longenough", "email"},
			{"ok_name", "ok@example.com", "seven77", "password"},
			{"ok_name", "ok@example.com", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "password"},
		} {
			_, _, err := f.svc.Register(ctx, tc.username, tc.email, tc.password)
			code := dynabench.EINVALID
			if tc.field == "" {
				code = dynabench.ECONFLICT
			}
			wantCode(t, err, code)
			if de, _ := err.(*dynabench.Error); tc.field != "" && de.Field != tc.field {
				t.Errorf("register %q %q: field %q, want %q", tc.username, tc.email, de.Field, tc.field)
			}
		}

		// Session tokens expire; API tokens do not.
		_, api, err := f.svc.CreateAPIToken(ctx, alice, "ci")
		wantCode(t, err, "")
		for _, tok := range []string{session, api} {
			if u, err := f.svc.Authenticate(ctx, tok); err != nil || u.ID != alice.ID {
				t.Fatalf("authenticate: %v %v", u, err)
			}
		}
		f.advance(f.svc.SessionTTL + time.Second)
		_, err = f.svc.Authenticate(ctx, session)
		wantCode(t, err, dynabench.EUNAUTHORIZED)
		if _, err := f.svc.Authenticate(ctx, api); err != nil {
			t.Errorf("API token expired: %v", err)
		}
		for _, bad := range []string{"", "dbk_", "nope", "dbk_" + strings.Repeat("A", 43), "dbk_" + strings.Repeat("A", 300)} {
			_, err := f.svc.Authenticate(ctx, bad)
			wantCode(t, err, dynabench.EUNAUTHORIZED)
		}

		// Revoking: only one's own tokens, and another user's token id is not found.
		tokens, err := f.svc.ListTokens(ctx, alice)
		wantCode(t, err, "")
		var apiID int64
		for _, tk := range tokens {
			if tk.Name == "ci" {
				apiID = tk.ID
			}
		}
		wantCode(t, f.svc.RevokeToken(ctx, bob, apiID), dynabench.ENOTFOUND)
		wantCode(t, f.svc.RevokeToken(ctx, alice, apiID), "")
		_, err = f.svc.Authenticate(ctx, api)
		wantCode(t, err, dynabench.EUNAUTHORIZED)
		wantCode(t, f.svc.RevokeToken(ctx, alice, apiID), dynabench.ENOTFOUND)
		_, _, err = f.svc.CreateAPIToken(ctx, alice, " ")
		wantCode(t, err, dynabench.EINVALID)
		_, _, err = f.svc.CreateAPIToken(ctx, nil, "x")
		wantCode(t, err, dynabench.EUNAUTHORIZED)

		// Roles.
		wantCode(t, f.svc.SetAdmin(ctx, alice, bob.ID, true), dynabench.EFORBIDDEN)
		wantCode(t, f.svc.SetAdmin(ctx, f.admin, f.admin.ID, false), dynabench.EINVALID)
		wantCode(t, f.svc.SetAdmin(ctx, f.admin, bob.ID, true), "")
		if u, _ := f.store.FindUserByID(ctx, bob.ID); !u.Admin {
			t.Errorf("bob is not admin")
		}
		roles, err := f.svc.Roles(ctx, f.admin)
		wantCode(t, err, "")
		if strings.Join(roles, ",") != "user,admin,owner:tk" {
			t.Errorf("admin roles %v", roles)
		}
		_, err = f.svc.Users(ctx, alice, 0, 10)
		wantCode(t, err, dynabench.EFORBIDDEN)
	})
}
