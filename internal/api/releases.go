package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/release"
	"github.com/dynabench-go/dynabench/internal/service"
)

type releaseInput struct {
	Code   string `path:"code" maxLength:"64"`
	Number int    `path:"n" minimum:"1"`
	Body   *struct {
		Ratios  *release.Ratios `json:"ratios,omitempty" doc:"Train/dev/test shares (default 0.8/0.1/0.1)"`
		License string          `json:"license,omitempty" maxLength:"64" doc:"License id for the dataset card, e.g. cc-by-4.0"`
		Public  bool            `json:"public,omitempty" doc:"Anyone may download the release's files"`
	}
}

// ReleaseJSON is a released round.
type ReleaseJSON struct {
	Round     int             `json:"round"`
	Version   int             `json:"version"`
	Dataset   string          `json:"dataset,omitempty" doc:"The test split's scoring dataset"`
	Public    bool            `json:"public"`
	Canary    string          `json:"canary"`
	Files     string          `json:"files" doc:"URL of the release's files: append a path the manifest lists"`
	CreatedAt string          `json:"created_at"`
	Manifest  json.RawMessage `json:"manifest"`
}

func releaseJSON(code string, r *dynabench.Release, dataset string) ReleaseJSON {
	return ReleaseJSON{Round: r.RoundNumber, Version: r.Version, Dataset: dataset, Public: r.Public, Canary: r.Canary,
		Files:     fmt.Sprintf("/api/v1/tasks/%s/rounds/%d/releases/%d/file?path=", code, r.RoundNumber, r.Version),
		CreatedAt: rfc3339(r.CreatedAt), Manifest: json.RawMessage(r.Manifest)}
}

type releaseOutput struct {
	Status int
	Body   ReleaseJSON
}

type releasesOutput struct {
	Body struct {
		Releases []ReleaseJSON `json:"releases"`
	}
}

type exportInput struct {
	Code   string `path:"code" maxLength:"64"`
	Number int    `path:"n" minimum:"1"`
	Format string `query:"format" enum:"jsonl,csv,hf" default:"jsonl"`
}

type importInput struct {
	Code    string `path:"code" maxLength:"64"`
	Format  string `query:"format" enum:"anli,dynasent,squad" required:"true"`
	Name    string `query:"name" maxLength:"64" required:"true"`
	Access  string `query:"access" enum:"scoring,standard,hidden" default:"scoring"`
	Map     string `query:"map" maxLength:"2000" doc:"Field mapping source:task,... over the reader's defaults"`
	Labels  string `query:"labels" maxLength:"2000" doc:"Label mapping source:task,... (ANLI's e/n/c map to entailed/neutral/contradictory by default)"`
	As      string `query:"as" enum:"dataset,round" default:"dataset" doc:"dataset: an evaluation dataset named name; round: verified examples of the task's current round"`
	RawBody []byte `contentType:"application/x-ndjson"`
}

func pairs(field, s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, p := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok || k == "" {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, field, "%q: expected source:task", p)
		}
		out[k] = v
	}
	return out, nil
}

func (s *Server) releaseRoutes() {
	tags := []string{"releases"}
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/rounds/{n}/release", "releaseRound",
		"Freeze a closed round's verified examples as a new release version (owners): deterministic splits, manifest, datasheet, canary; its test split becomes a scoring dataset",
		tags, true, 403, 404, 409, 422),
		func(ctx context.Context, in *releaseInput) (*releaseOutput, error) {
			var req service.ReleaseRequest
			if in.Body != nil {
				if in.Body.Ratios != nil {
					req.Ratios = *in.Body.Ratios
				}
				req.License, req.Public = in.Body.License, in.Body.Public
			}
			res, err := s.svc.ReleaseRound(ctx, actor(ctx), in.Code, in.Number, req)
			if err != nil {
				return nil, err
			}
			name := ""
			if res.Dataset != nil {
				name = res.Dataset.Name
			}
			return &releaseOutput{Status: http.StatusCreated, Body: releaseJSON(in.Code, res.Release, name)}, nil
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/releases", "listReleases",
		"The task's releases: every one for owners, the public ones for everyone", tags, false, 404),
		func(ctx context.Context, in *codePath) (*releasesOutput, error) {
			rels, err := s.svc.Releases(ctx, actor(ctx), in.Code)
			if err != nil {
				return nil, err
			}
			out := &releasesOutput{}
			out.Body.Releases = make([]ReleaseJSON, 0, len(rels))
			for _, r := range rels {
				out.Body.Releases = append(out.Body.Releases, releaseJSON(in.Code, r, ""))
			}
			return out, nil
		})
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/import", "importDataset",
		"Import a published adversarial dataset (ANLI, DynaSent, SQuAD-style) with a field and label mapping (owners): as an evaluation dataset, or as verified examples of the current round",
		[]string{"datasets"}, true, 403, 404, 413, 422),
		func(ctx context.Context, in *importInput) (*importOutput, error) {
			fields, err := pairs("map", in.Map)
			if err != nil {
				return nil, err
			}
			labels, err := pairs("labels", in.Labels)
			if err != nil {
				return nil, err
			}
			req := service.ImportRequest{Format: in.Format, Name: in.Name, Access: in.Access,
				Mapping: release.Mapping{Fields: fields, Labels: labels}, Body: bytes.NewReader(in.RawBody)}
			if in.As == "round" {
				n, err := s.svc.ImportRound(ctx, actor(ctx), in.Code, req)
				if err != nil {
					return nil, err
				}
				return &importOutput{Status: http.StatusCreated, Body: importJSON{Examples: n}}, nil
			}
			d, err := s.svc.ImportDataset(ctx, actor(ctx), in.Code, req)
			if err != nil {
				return nil, err
			}
			return &importOutput{Status: http.StatusCreated, Body: importJSON{Dataset: ptr(datasetJSON(d))}}, nil
		})
	register(s, op(http.MethodPut, "/api/v1/tasks/{code}/rounds/{n}/releases/{version}/public", "setReleasePublic",
		"Let anyone download a release's files, or stop it (owners)", tags, true, 403, 404),
		func(ctx context.Context, in *publicInput) (*releaseOutput, error) {
			r, err := s.svc.SetReleasePublic(ctx, actor(ctx), in.Code, in.Number, in.Version, in.Body.Public)
			if err != nil {
				return nil, err
			}
			return &releaseOutput{Status: http.StatusOK, Body: releaseJSON(in.Code, r, "")}, nil
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/cycle", "getCycle",
		"The retraining cycle: per round, its vMER and its loop model's perf metric on each released round's test split", tags, false, 404),
		func(ctx context.Context, in *codePath) (*cycleOutput, error) {
			c, err := s.svc.RoundCycle(ctx, actor(ctx), in.Code)
			if err != nil {
				return nil, err
			}
			return &cycleOutput{Body: c}, nil
		})
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/rounds/cycle", "startCycle",
		"Close the current round and open the next, as a job (owners); with retrain, also release it, train a built-in model on every released round's train split and put it in the loop. Follow it at GET /api/v1/jobs/{id}",
		tags, true, 403, 404, 422),
		func(ctx context.Context, in *startCycleInput) (*jobOutput, error) {
			req := service.CycleRequest{SeedData: true}
			if in.Body != nil {
				req.Retrain = in.Body.Retrain
				if in.Body.SeedData != nil {
					req.SeedData = *in.Body.SeedData
				}
				if in.Body.Ratios != nil {
					req.Ratios = *in.Body.Ratios
				}
			}
			j, err := s.svc.StartCycle(ctx, actor(ctx), in.Code, req)
			if err != nil {
				return nil, err
			}
			return &jobOutput{Status: http.StatusAccepted, Body: j}, nil
		})
	register(s, op(http.MethodGet, "/api/v1/jobs/{id}", "getJob",
		"A job's state, attempts and progress: its owner, the task's owners, admins", []string{"workers"}, true, 404),
		func(ctx context.Context, in *idPath) (*jobOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			j, err := s.svc.Job(ctx, actor(ctx), id)
			if err != nil {
				return nil, err
			}
			return &jobOutput{Status: http.StatusOK, Body: j}, nil
		})
	// Streaming routes: plain handlers on the API mux, documented in the OpenAPI description.
	exp := op(http.MethodGet, "/api/v1/tasks/{code}/rounds/{n}/export", "exportRound",
		"A closed round's examples with validations, contributors anonymised (owners): format jsonl (Dynabench's export), csv or hf", tags, true, 403, 404, 409, 422)
	register(s, exp, func(ctx context.Context, in *exportInput) (*huma.StreamResponse, error) {
		// Fail before streaming: authorization and the round's state decide the status.
		var buf bytes.Buffer
		if err := s.svc.ExportRound(ctx, actor(ctx), in.Code, in.Number, in.Format, &buf, nil); err != nil {
			return nil, err
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			ct := map[string]string{"jsonl": "application/x-ndjson", "hf": "application/x-ndjson", "csv": "text/csv"}[in.Format]
			hctx.SetHeader("Content-Type", ct+"; charset=utf-8")
			hctx.SetHeader("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-round-%d.%s"`, in.Code, in.Number, map[string]string{"jsonl": "jsonl", "hf": "jsonl", "csv": "csv"}[in.Format]))
			io.Copy(hctx.BodyWriter(), &buf)
		}}, nil
	})
	files := op(http.MethodGet, "/api/v1/tasks/{code}/rounds/{n}/releases/{version}/file", "releaseFile",
		"One file of a release (a path its manifest lists): owners, or anyone when the release is public", tags, false, 404)
	register(s, files, func(ctx context.Context, in *releaseFileInput) (*huma.StreamResponse, error) {
		f, err := s.svc.ReleaseFile(ctx, actor(ctx), in.Code, in.Number, in.Version, in.Path)
		if err != nil {
			return nil, err
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			defer f.Close()
			ct := "application/octet-stream"
			switch {
			case strings.HasSuffix(in.Path, ".jsonl"):
				ct = "application/x-ndjson"
			case strings.HasSuffix(in.Path, ".json"):
				ct = "application/json"
			case strings.HasSuffix(in.Path, ".md"):
				ct = "text/markdown; charset=utf-8"
			case strings.HasSuffix(in.Path, ".csv"):
				ct = "text/csv; charset=utf-8"
			}
			hctx.SetHeader("Content-Type", ct)
			io.Copy(hctx.BodyWriter(), f)
		}}, nil
	})
}

type publicInput struct {
	Code    string `path:"code" maxLength:"64"`
	Number  int    `path:"n" minimum:"1"`
	Version int    `path:"version" minimum:"1"`
	Body    struct {
		Public bool `json:"public" doc:"Anyone may download the release's files"`
	}
}

type startCycleInput struct {
	Code string `path:"code" maxLength:"64"`
	Body *struct {
		Retrain  bool            `json:"retrain,omitempty" doc:"Also release the closed round, retrain on every released round and put the new model in the loop"`
		SeedData *bool           `json:"seed_data,omitempty" doc:"Train on the seed set too (default true)"`
		Ratios   *release.Ratios `json:"ratios,omitempty"`
	}
}

type jobOutput struct {
	Status int
	Body   *service.JobView
}

type cycleOutput struct {
	Body *service.Cycle
}

type importJSON struct {
	Dataset  *DatasetJSON `json:"dataset,omitempty" doc:"The dataset made (as=dataset)"`
	Examples int          `json:"examples,omitempty" doc:"Examples added to the current round (as=round)"`
}

type importOutput struct {
	Status int
	Body   importJSON
}

func ptr[T any](v T) *T { return &v }

type releaseFileInput struct {
	Code    string `path:"code" maxLength:"64"`
	Number  int    `path:"n" minimum:"1"`
	Version int    `path:"version" minimum:"1"`
	Path    string `query:"path" maxLength:"200" required:"true" doc:"A path the manifest lists, e.g. data/test.jsonl"`
}
