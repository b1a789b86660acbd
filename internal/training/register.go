package training

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/blob"
)

// Keys of a registered built-in model's Options that say where its artifact is: the resolver loads
// it with LoadBlob(ctx, blobs, options[OptionBlobKey], options[OptionSHA256]).
const (
	OptionBlobKey = "blob_key"
	OptionSHA256  = "sha256"
)

// BlobKey is where an artifact file with this SHA-256 is stored: content-addressed, so storing the
// same file twice is harmless and a key never names two different models.
func BlobKey(sha256Hex string) string { return "models/" + sha256Hex + ".dbm" }

// Register stores the artifact file in blobs and creates m — the caller fills TaskID, UserID, Name,
// Card and Published — as a built-in model whose options point at it, together with its artifact
// record, in one transaction. The blob is written first: a failure after it leaves at most an
// unreferenced, content-addressed file, never a model without its bytes.
func Register(ctx context.Context, store dynabench.Store, blobs blob.Store, a *Artifact, m *dynabench.Model) (*dynabench.ModelArtifact, error) {
	file, err := a.MarshalBinary()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(file)
	info, err := blobs.Put(ctx, BlobKey(hex.EncodeToString(sum[:])), bytes.NewReader(file))
	if err != nil {
		return nil, fmt.Errorf("training: store artifact: %w", err)
	}
	manifest, err := manifestMap(a.Manifest)
	if err != nil {
		return nil, err
	}
	m.Kind = dynabench.KindBuiltin
	m.Options = maps.Clone(m.Options)
	if m.Options == nil {
		m.Options = map[string]any{}
	}
	m.Options[OptionBlobKey], m.Options[OptionSHA256] = info.Key, info.SHA256
	rec := &dynabench.ModelArtifact{BlobKey: info.Key, Size: info.Size, SHA256: info.SHA256, Manifest: manifest}
	err = store.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.CreateModel(ctx, m); err != nil {
			return err
		}
		rec.ModelID = m.ID
		return tx.CreateModelArtifact(ctx, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// manifestMap is the manifest as the JSON object the store keeps.
func manifestMap(m Manifest) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("training: encode manifest: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("training: encode manifest: %w", err)
	}
	return out, nil
}
