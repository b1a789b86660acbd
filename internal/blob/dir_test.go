package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/blob"
)

var ctx = context.Background()

func newDir(t *testing.T) (*blob.Dir, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "blobs")
	d, err := blob.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, root
}

func read(t *testing.T, s blob.Store, key string) string {
	t.Helper()
	rc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// temps lists what is left in the store's temporary directory.
func temps(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, ".tmp"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestDirRoundTrip(t *testing.T) {
	t.Parallel()
	d, root := newDir(t)
	body := "model bytes \x00\xff"
	info, err := d.Put(ctx, "models/task-1/a.dbm", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	want := blob.Info{Key: "models/task-1/a.dbm", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}
	if info != want {
		t.Fatalf("info %+v, want %+v", info, want)
	}
	if got := read(t, d, "models/task-1/a.dbm"); got != body {
		t.Fatalf("got %q", got)
	}
	// A second Put replaces the blob whole.
	if _, err := d.Put(ctx, "models/task-1/a.dbm", strings.NewReader("v2")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, d, "models/task-1/a.dbm"); got != "v2" {
		t.Fatalf("after replace: %q", got)
	}
	if err := d.Delete(ctx, "models/task-1/a.dbm"); err != nil {
		t.Fatal(err)
	}
	_, err = d.Get(ctx, "models/task-1/a.dbm")
	if !errors.Is(err, blob.ErrNotFound) || !dynabench.IsCode(err, dynabench.ENOTFOUND) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := d.Delete(ctx, "models/task-1/a.dbm"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestDirKeys(t *testing.T) {
	t.Parallel()
	d, _ := newDir(t)
	for _, key := range []string{
		"", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "a/", ".tmp/x", ".hidden", `a\b`, "a b", "ü",
		"a/..", "x\x00y", strings.Repeat("k", blob.MaxKeyLen+1),
	} {
		if _, err := d.Put(ctx, key, strings.NewReader("x")); !dynabench.IsCode(err, dynabench.EINVALID) {
			t.Errorf("Put(%q): %v, want EINVALID", key, err)
		}
		if _, err := d.Get(ctx, key); !dynabench.IsCode(err, dynabench.EINVALID) {
			t.Errorf("Get(%q): %v, want EINVALID", key, err)
		}
		if err := d.Delete(ctx, key); !dynabench.IsCode(err, dynabench.EINVALID) {
			t.Errorf("Delete(%q): %v, want EINVALID", key, err)
		}
	}
	for _, key := range []string{"a", "A-b_c.d", "x/y/z.dbm", strings.Repeat("k", blob.MaxKeyLen)} {
		if err := blob.ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q): %v", key, err)
		}
	}
}

func TestDirNotFound(t *testing.T) {
	t.Parallel()
	d, _ := newDir(t)
	if _, err := d.Put(ctx, "file", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "dir/x", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"missing", "file/below", "dir"} {
		if _, err := d.Get(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Get(%q): %v, want not found", key, err)
		}
		if err := d.Delete(ctx, key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Delete(%q): %v, want not found", key, err)
		}
	}
	// A key may not run through an existing blob.
	if _, err := d.Put(ctx, "file/below", strings.NewReader("x")); err == nil {
		t.Fatal("Put through a file succeeded")
	}
}

// TestDirSymlinkEscape plants a link to outside the directory: a key through it reads nothing.
func TestDirSymlinkEscape(t *testing.T) {
	t.Parallel()
	d, root := newDir(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if rc, err := d.Get(ctx, "link/secret"); err == nil {
		rc.Close()
		t.Fatal("read a file outside the store through a link")
	}
	if _, err := d.Put(ctx, "link/new", strings.NewReader("x")); err == nil {
		t.Fatal("wrote outside the store through a link")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Fatal("file created outside the store")
	}
	if err := d.Delete(ctx, "link/secret"); err == nil {
		t.Fatal("deleted a file outside the store")
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk on fire")
	}
	f.n--
	return copy(p, "partial"), nil
}

// TestDirFailedPut: a reader error or a cancelled context leaves the old blob and no litter.
func TestDirFailedPut(t *testing.T) {
	t.Parallel()
	d, root := newDir(t)
	if _, err := d.Put(ctx, "k", strings.NewReader("old")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "k", &failingReader{n: 3}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("put from a failing reader: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	r := io.MultiReader(strings.NewReader("new"), readerFunc(func([]byte) (int, error) { cancel(); return 0, nil }),
		strings.NewReader("more"))
	if _, err := d.Put(cctx, "k", r); !errors.Is(err, context.Canceled) {
		t.Fatalf("put with a cancelled context: %v", err)
	}
	if _, err := d.Put(cctx, "other", strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("put on a done context: %v", err)
	}
	if got := read(t, d, "k"); got != "old" {
		t.Fatalf("after failed puts: %q", got)
	}
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestDirConcurrentPuts: readers racing writers of one key see one whole version, never a mix.
func TestDirConcurrentPuts(t *testing.T) {
	t.Parallel()
	d, root := newDir(t)
	versions := map[string]bool{}
	for _, c := range "abcdefgh" {
		versions[strings.Repeat(string(c), 64<<10)] = true
	}
	if _, err := d.Put(ctx, "shared", strings.NewReader(strings.Repeat("a", 64<<10))); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for v := range versions {
		wg.Go(func() {
			if _, err := d.Put(ctx, "shared", strings.NewReader(v)); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if got := read(t, d, "shared"); !versions[got] {
				t.Errorf("read a torn blob of %d bytes", len(got))
			}
		})
	}
	wg.Wait()
	if !versions[read(t, d, "shared")] {
		t.Fatal("final blob is torn")
	}
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestDirStaleTemps: opening the store removes old crash leftovers but not a live writer's file.
func TestDirStaleTemps(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(root, ".tmp", "old"), filepath.Join(root, ".tmp", "fresh")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	d, err := blob.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("stale temporary file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temporary file removed: %v", err)
	}
}

func TestDirLarge(t *testing.T) {
	t.Parallel()
	d, _ := newDir(t)
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	info, err := d.Put(ctx, "big", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(body)) || read(t, d, "big") != string(body) {
		t.Fatalf("large blob: %+v", info)
	}
}
