package training_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/blob"
	"github.com/dynabench-go/dynabench/internal/training"
)

// TestRegister stores an artifact and its model, then loads it back the way the resolver will:
// from the model's options, through the blob store, checking the hash.
func TestRegister(t *testing.T) {
	t.Parallel()
	e := newStoreEnv(t, "nli")
	dir := filepath.Join(t.TempDir(), "blobs")
	blobs, err := blob.NewDir(dir)
	must(t, err)
	defer blobs.Close()
	a := smallArtifact(t, "nli")

	m := &dynabench.Model{TaskID: e.task.ID, UserID: e.user.ID, Name: "nli-r1", Options: map[string]any{"note": "kept"}}
	rec, err := training.Register(ctx, e.store, blobs, a, m)
	must(t, err)
	if m.ID == 0 || m.Kind != dynabench.KindBuiltin || m.Options["note"] != "kept" || m.Options[training.OptionBlobKey] != rec.BlobKey {
		t.Fatalf("model %+v", m)
	}
	stored, err := e.store.FindModelByID(ctx, m.ID)
	must(t, err)
	art, err := e.store.FindModelArtifact(ctx, m.ID)
	must(t, err)
	if art.BlobKey != training.BlobKey(art.SHA256) || art.Manifest["model_sha256"] != a.Manifest.ModelSHA256 {
		t.Fatalf("artifact record %+v", art)
	}

	key, _ := stored.Options[training.OptionBlobKey].(string)
	sum, _ := stored.Options[training.OptionSHA256].(string)
	p, manifest, err := training.LoadBlob(ctx, blobs, key, sum)
	must(t, err)
	if manifest.ModelSHA256 != a.Manifest.ModelSHA256 {
		t.Fatal("loaded another model")
	}
	in := map[string]any{"context": "A man sleeps.", "hypothesis": "A man is awake."}
	got, err := p.Predict(ctx, in)
	must(t, err)
	want, err := a.Predictor().Predict(ctx, in)
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("registered model answers %v, trained %v", got, want)
	}

	// A blob changed behind the database's back is refused; a missing one is not found.
	must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), []byte("tampered"), 0o644))
	if _, _, err := training.LoadBlob(ctx, blobs, key, sum); !dynabench.IsCode(err, dynabench.EINVALID) {
		t.Fatalf("tampered blob: %v", err)
	}
	if _, _, err := training.LoadBlob(ctx, blobs, training.BlobKey("00"), ""); !dynabench.IsCode(err, dynabench.ENOTFOUND) {
		t.Fatalf("missing blob: %v", err)
	}
}
