package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// DatasetJSON is an evaluation dataset.
type DatasetJSON struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Access    string         `json:"access" enum:"scoring,standard,hidden"`
	Version   int            `json:"version"`
	Round     int            `json:"round,omitempty" doc:"The round a released dataset came from"`
	Size      int            `json:"size" doc:"Examples"`
	Perturbed map[string]int `json:"perturbed" doc:"Perturbed copies per kind (robustness, fairness); only changed examples are kept"`
	SHA256    string         `json:"sha256"`
	UpdatedAt string         `json:"updated_at"`
}

func datasetJSON(d *dynabench.Dataset) DatasetJSON {
	return DatasetJSON{ID: idString(d.ID), Name: d.Name, Access: d.Access, Version: d.Version, Round: d.RoundNumber, Size: d.Size,
		Perturbed: d.Variants, SHA256: d.SHA256, UpdatedAt: rfc3339(d.UpdatedAt)}
}

type uploadDatasetInput struct {
	Code    string `path:"code" maxLength:"64"`
	Name    string `query:"name" maxLength:"64" required:"true"`
	Access  string `query:"access" enum:"scoring,standard,hidden" default:"scoring"`
	RawBody []byte `contentType:"application/x-ndjson"`
}

type datasetOutput struct {
	Status int
	Body   DatasetJSON
}

type datasetsOutput struct {
	Body struct {
		Datasets []DatasetJSON `json:"datasets"`
	}
}

type datasetPath struct {
	Code string `path:"code" maxLength:"64"`
	Name string `path:"name" maxLength:"64"`
}

// EvaluationJSON is a model's evaluation on one dataset, its perturbed copies folded in.
type EvaluationJSON struct {
	Dataset string                        `json:"dataset"`
	Access  string                        `json:"access"`
	Version int                           `json:"version"`
	Status  string                        `json:"status" enum:"queued,running,completed,failed"`
	Reason  string                        `json:"reason,omitempty" doc:"Why it failed"`
	Fault   string                        `json:"fault,omitempty" enum:"model,platform," doc:"Who failed: the model (charged to the quota) or the platform (not)"`
	Scores  map[string]float64            `json:"scores,omitempty" doc:"Perf metrics in percent, examples_per_second, memory_gib when measured, and the delta metrics"`
	ByTag   map[string]map[string]float64 `json:"by_tag,omitempty"`
	Parts   []EvaluationPartJSON          `json:"parts" doc:"The dataset itself and each perturbed copy"`
}

// EvaluationPartJSON is one evaluation job's state.
type EvaluationPartJSON struct {
	Variant   string  `json:"variant" doc:"'' for the dataset itself, robustness or fairness for a perturbed copy"`
	Status    string  `json:"status"`
	Reason    string  `json:"reason,omitempty"`
	N         int     `json:"n,omitempty"`
	Log       *string `json:"log,omitempty" doc:"The evaluation's log (the model's owner and the task's owners)"`
	UpdatedAt string  `json:"updated_at"`
}

func evaluationJSON(st service.DatasetStatus, showLog bool) EvaluationJSON {
	e := EvaluationJSON{Dataset: st.Dataset.Name, Access: st.Dataset.Access, Version: st.Dataset.Version, Status: st.Status,
		Reason: st.Reason, Fault: st.Fault, Parts: []EvaluationPartJSON{}}
	for _, v := range st.Variants {
		p := EvaluationPartJSON{Variant: v.Variant, Status: v.Status, Reason: v.Reason, UpdatedAt: rfc3339(v.UpdatedAt)}
		if showLog {
			log := v.Log
			p.Log = &log
		}
		if r := v.Result; r != nil {
			p.N = r.N
			if e.Scores == nil {
				e.Scores = map[string]float64{}
			}
			for k, x := range r.Metrics {
				e.Scores[k] = x
			}
			if v.Variant == dynabench.VariantOriginal {
				e.Scores[service.MetricThroughput] = r.ExamplesPerSecond
				if r.MemoryGiB != nil {
					e.Scores["memory_gib"] = *r.MemoryGiB
				}
				e.ByTag = r.ByTag
			}
		}
		e.Parts = append(e.Parts, p)
	}
	return e
}

type leaderboardInput struct {
	Code           string `path:"code" maxLength:"64"`
	MetricWeights  string `query:"metric_weights" maxLength:"2000" doc:"name:weight,... (default: 4 for the perf metric, 1 for the others)"`
	DatasetWeights string `query:"dataset_weights" maxLength:"4000" doc:"name:weight,... (default: 5 each)"`
	Round          int    `query:"round" minimum:"0" doc:"Only the scoring datasets released from this round"`
}

type leaderboardOutput struct {
	Body *service.Leaderboard
}

func (in *leaderboardInput) query() (service.LeaderboardQuery, error) {
	mw, err := service.ParseWeights("metric_weights", in.MetricWeights)
	if err != nil {
		return service.LeaderboardQuery{}, err
	}
	dw, err := service.ParseWeights("dataset_weights", in.DatasetWeights)
	if err != nil {
		return service.LeaderboardQuery{}, err
	}
	return service.LeaderboardQuery{MetricWeights: mw, DatasetWeights: dw, Round: in.Round}, nil
}

type forkInput struct {
	Code string `path:"code" maxLength:"64"`
	Body struct {
		Name           string             `json:"name" maxLength:"100"`
		MetricWeights  map[string]float64 `json:"metric_weights,omitempty" maxProperties:"100"`
		DatasetWeights map[string]float64 `json:"dataset_weights,omitempty" maxProperties:"100"`
		Round          int                `json:"round,omitempty" minimum:"0"`
	}
}

// ForkJSON is saved leaderboard weights with a URL of their own.
type ForkJSON struct {
	Slug           string             `json:"slug"`
	Name           string             `json:"name"`
	URL            string             `json:"url"`
	MetricWeights  map[string]float64 `json:"metric_weights,omitempty"`
	DatasetWeights map[string]float64 `json:"dataset_weights,omitempty"`
	CreatedAt      string             `json:"created_at"`
}

type forkOutput struct {
	Status int
	Body   ForkJSON
}

type slugPath struct {
	Code string `path:"code" maxLength:"64"`
	Slug string `path:"slug" maxLength:"32"`
}

type forkBoardOutput struct {
	Body struct {
		Fork ForkJSON `json:"fork"`
		*service.Leaderboard
	}
}

// SnapshotJSON is a frozen leaderboard.
type SnapshotJSON struct {
	Slug        string          `json:"slug"`
	Name        string          `json:"name"`
	URL         string          `json:"url"`
	CreatedAt   string          `json:"created_at"`
	Leaderboard json.RawMessage `json:"leaderboard"`
}

type snapshotOutput struct {
	Status int
	Body   SnapshotJSON
}

type compareInput struct {
	A string `query:"a" required:"true" doc:"Model id"`
	B string `query:"b" required:"true" doc:"Model id"`
}

type compareOutput struct {
	Body *service.Comparison
}

type evaluateOutput struct {
	Status int
	Body   struct {
		Model       ModelJSON        `json:"model"`
		Evaluations []EvaluationJSON `json:"evaluations"`
	}
}

type publishInput struct {
	ID   string `path:"id"`
	Body *struct {
		Published *bool `json:"published,omitempty" doc:"false unpublishes; default true"`
	}
}

// Worker protocol.

type leaseInput struct {
	Body struct {
		Worker string   `json:"worker" minLength:"1" maxLength:"100" doc:"A name for the worker, shown in the evaluation's log"`
		Kinds  []string `json:"kinds,omitempty" maxItems:"4"`
	}
}

// WorkJSON is a leased job: the model to call and its inputs.
type WorkJSON struct {
	*service.Work
	Model WorkModelJSON `json:"model"`
}

// WorkModelJSON is what a worker needs to call a model.
type WorkModelJSON struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	URL     string         `json:"url"`
	Options map[string]any `json:"options"`
}

type leaseOutput struct {
	Status int
	Body   *WorkJSON
}

type jobInput struct {
	ID   string `path:"id"`
	Body struct {
		Lease string `json:"lease" minLength:"1" maxLength:"200"`
	}
}

type heartbeatOutput struct {
	Body struct {
		LeaseUntil string `json:"lease_until"`
	}
}

type completeInput struct {
	ID   string `path:"id"`
	Body struct {
		Lease  string             `json:"lease" minLength:"1" maxLength:"200"`
		Report service.WorkReport `json:"report"`
	}
}

type failInput struct {
	ID   string `path:"id"`
	Body struct {
		Lease   string              `json:"lease" minLength:"1" maxLength:"200"`
		Failure service.WorkFailure `json:"failure"`
	}
}

type jobResultOutput struct {
	Body struct {
		Status string `json:"status"`
	}
}

func (s *Server) evaluationRoutes() {
	dtags, ltags, mtags, wtags := []string{"datasets"}, []string{"leaderboards"}, []string{"models"}, []string{"workers"}
	up := op(http.MethodPost, "/api/v1/tasks/{code}/datasets", "uploadDataset",
		"Upload an evaluation dataset as JSON Lines (owners): uid, the config's fields, optional tags. Uploading an existing name makes a new version and re-scores every model",
		dtags, true, 403, 404, 413, 422)
	up.MaxBodyBytes = 256 << 20
	register(s, up, func(ctx context.Context, in *uploadDatasetInput) (*datasetOutput, error) {
		d, err := s.svc.UploadDataset(ctx, actor(ctx), in.Code, service.NewDataset{Name: in.Name, Access: in.Access, Body: bytes.NewReader(in.RawBody)})
		if err != nil {
			return nil, err
		}
		return &datasetOutput{Status: http.StatusCreated, Body: datasetJSON(d)}, nil
	})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/datasets", "listDatasets",
		"The task's evaluation datasets the caller may see (hidden ones: owners only)", dtags, false, 404),
		func(ctx context.Context, in *codePath) (*datasetsOutput, error) {
			ds, err := s.svc.Datasets(ctx, actor(ctx), in.Code)
			if err != nil {
				return nil, err
			}
			out := &datasetsOutput{}
			out.Body.Datasets = make([]DatasetJSON, 0, len(ds))
			for _, d := range ds {
				out.Body.Datasets = append(out.Body.Datasets, datasetJSON(d))
			}
			return out, nil
		})
	register(s, op(http.MethodDelete, "/api/v1/tasks/{code}/datasets/{name}", "deleteDataset",
		"Delete a dataset and its scores (owners)", dtags, true, 403, 404),
		func(ctx context.Context, in *datasetPath) (*noContent, error) {
			if err := s.svc.DeleteDataset(ctx, actor(ctx), in.Code, in.Name); err != nil {
				return nil, err
			}
			return &noContent{Status: http.StatusNoContent}, nil
		})

	register(s, op(http.MethodPost, "/api/v1/models/{id}/evaluate", "evaluateModel",
		"Queue the model's evaluation on every dataset again (the model's owner, the task's owners)", mtags, true, 403, 404),
		func(ctx context.Context, in *idPath) (*evaluateOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			m, err := s.svc.EvaluateModel(ctx, actor(ctx), id)
			if err != nil {
				return nil, err
			}
			return s.evaluations(ctx, m, http.StatusAccepted)
		})
	register(s, op(http.MethodPost, "/api/v1/models/{id}/publish", "publishModel",
		"Publish the model: it joins the leaderboard and anyone may see it (the model's owner); {\"published\": false} unpublishes", mtags, true, 403, 404),
		func(ctx context.Context, in *publishInput) (*evaluateOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			pub := true
			if in.Body != nil && in.Body.Published != nil {
				pub = *in.Body.Published
			}
			m, err := s.svc.PublishModel(ctx, actor(ctx), id, pub)
			if err != nil {
				return nil, err
			}
			return s.evaluations(ctx, m, http.StatusOK)
		})

	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/leaderboard", "getLeaderboard",
		"The task's published models ranked by Dynascore with 95% bootstrap intervals; readers set their own weights", ltags, false, 404, 422),
		func(ctx context.Context, in *leaderboardInput) (*leaderboardOutput, error) {
			q, err := in.query()
			if err != nil {
				return nil, err
			}
			b, err := s.svc.ComputeLeaderboard(ctx, actor(ctx), in.Code, q)
			if err != nil {
				return nil, err
			}
			return &leaderboardOutput{Body: b}, nil
		})
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/leaderboard/forks", "createFork",
		"Save leaderboard weights under a URL of their own", ltags, true, 404, 422),
		func(ctx context.Context, in *forkInput) (*forkOutput, error) {
			f, err := s.svc.CreateFork(ctx, actor(ctx), in.Code, in.Body.Name,
				service.LeaderboardQuery{MetricWeights: in.Body.MetricWeights, DatasetWeights: in.Body.DatasetWeights})
			if err != nil {
				return nil, err
			}
			return &forkOutput{Status: http.StatusCreated, Body: forkJSON(in.Code, f)}, nil
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/leaderboard/forks/{slug}", "getFork",
		"A fork: the leaderboard under its saved weights", ltags, false, 404),
		func(ctx context.Context, in *slugPath) (*forkBoardOutput, error) {
			f, err := s.svc.Fork(ctx, actor(ctx), in.Code, in.Slug)
			if err != nil {
				return nil, err
			}
			b, err := s.svc.ComputeLeaderboard(ctx, actor(ctx), in.Code,
				service.LeaderboardQuery{MetricWeights: f.MetricWeights, DatasetWeights: f.DatasetWeights})
			if err != nil {
				return nil, err
			}
			out := &forkBoardOutput{}
			out.Body.Fork, out.Body.Leaderboard = forkJSON(in.Code, f), b
			return out, nil
		})
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/leaderboard/snapshots", "createSnapshot",
		"Freeze the leaderboard as it stands (owners)", ltags, true, 403, 404, 422),
		func(ctx context.Context, in *forkInput) (*snapshotOutput, error) {
			sn, err := s.svc.CreateSnapshot(ctx, actor(ctx), in.Code, in.Body.Name,
				service.LeaderboardQuery{MetricWeights: in.Body.MetricWeights, DatasetWeights: in.Body.DatasetWeights, Round: in.Body.Round})
			if err != nil {
				return nil, err
			}
			return &snapshotOutput{Status: http.StatusCreated, Body: snapshotJSON(in.Code, sn)}, nil
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/leaderboard/snapshots/{slug}", "getSnapshot",
		"A frozen leaderboard", ltags, false, 404),
		func(ctx context.Context, in *slugPath) (*snapshotOutput, error) {
			sn, err := s.svc.Snapshot(ctx, actor(ctx), in.Code, in.Slug)
			if err != nil {
				return nil, err
			}
			return &snapshotOutput{Status: http.StatusOK, Body: snapshotJSON(in.Code, sn)}, nil
		})
	register(s, op(http.MethodGet, "/api/v1/compare", "compareModels",
		"Two models of a task compared on the same examples: paired bootstrap interval of the difference, and McNemar's test for labels", ltags, false, 404, 422),
		func(ctx context.Context, in *compareInput) (*compareOutput, error) {
			a, err := parseID("a", in.A)
			if err != nil {
				return nil, err
			}
			b, err := parseID("b", in.B)
			if err != nil {
				return nil, err
			}
			c, err := s.svc.Compare(ctx, actor(ctx), a, b)
			if err != nil {
				return nil, err
			}
			return &compareOutput{Body: c}, nil
		})

	register(s, op(http.MethodPost, "/api/v1/jobs/lease", "leaseJob",
		"Lease the next due evaluation (workers): admins' workers take any job, a model builder's only their own models' on datasets that are not hidden. 204 when none is due",
		wtags, true, 422),
		func(ctx context.Context, in *leaseInput) (*leaseOutput, error) {
			w, err := s.svc.LeaseWork(ctx, actor(ctx), in.Body.Worker, in.Body.Kinds)
			if dynabench.IsCode(err, dynabench.ENOTFOUND) {
				return &leaseOutput{Status: http.StatusNoContent}, nil
			}
			if err != nil {
				return nil, err
			}
			return &leaseOutput{Status: http.StatusOK, Body: &WorkJSON{Work: w, Model: WorkModelJSON{ID: idString(w.Model.ID),
				Name: w.Model.Name, Kind: w.Model.Kind, URL: w.Model.URL, Options: w.Model.Options}}}, nil
		})
	register(s, op(http.MethodPost, "/api/v1/jobs/{id}/heartbeat", "heartbeatJob",
		"Extend a job's lease; 409 when it was lost (stop working on it)", wtags, true, 404, 409),
		func(ctx context.Context, in *jobInput) (*heartbeatOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			until, err := s.svc.HeartbeatWork(ctx, actor(ctx), id, in.Body.Lease)
			if err != nil {
				return nil, err
			}
			out := &heartbeatOutput{}
			out.Body.LeaseUntil = until.UTC().Format(time.RFC3339Nano)
			return out, nil
		})
	complete := op(http.MethodPost, "/api/v1/jobs/{id}/complete", "completeJob",
		"Report a job's outputs, one per input in order; the server scores them. 409 when the lease was lost", wtags, true, 404, 409, 413, 422)
	complete.MaxBodyBytes = 256 << 20
	register(s, complete, func(ctx context.Context, in *completeInput) (*jobResultOutput, error) {
		id, err := parseID("id", in.ID)
		if err != nil {
			return nil, err
		}
		ev, err := s.svc.CompleteWork(ctx, actor(ctx), id, in.Body.Lease, in.Body.Report)
		if err != nil {
			return nil, err
		}
		out := &jobResultOutput{}
		out.Body.Status = ev.Status
		return out, nil
	})
	register(s, op(http.MethodPost, "/api/v1/jobs/{id}/fail", "failJob",
		"Report that a job could not be done and whose fault it was; it is retried with backoff or parked", wtags, true, 404, 409, 422),
		func(ctx context.Context, in *failInput) (*jobResultOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			ev, err := s.svc.FailWork(ctx, actor(ctx), id, in.Body.Lease, in.Body.Failure)
			if err != nil {
				return nil, err
			}
			out := &jobResultOutput{}
			out.Body.Status = ev.Status
			return out, nil
		})
}

// evaluations renders a model with its evaluations.
func (s *Server) evaluations(ctx context.Context, m *dynabench.Model, status int) (*evaluateOutput, error) {
	_, t, err := s.svc.Model(ctx, actor(ctx), m.ID)
	if err != nil {
		return nil, err
	}
	sts, err := s.svc.ModelEvaluations(ctx, actor(ctx), m, t)
	if err != nil {
		return nil, err
	}
	out := &evaluateOutput{Status: status}
	out.Body.Model = ModelJSON{ID: idString(m.ID), Name: m.Name, Kind: m.Kind, Published: m.Published, Card: m.Card, CreatedAt: rfc3339(m.CreatedAt)}
	out.Body.Evaluations = make([]EvaluationJSON, 0, len(sts))
	for _, st := range sts {
		out.Body.Evaluations = append(out.Body.Evaluations, evaluationJSON(st, true))
	}
	return out, nil
}

func forkJSON(code string, f *dynabench.LeaderboardFork) ForkJSON {
	return ForkJSON{Slug: f.Slug, Name: f.Name, URL: "/api/v1/tasks/" + code + "/leaderboard/forks/" + f.Slug,
		MetricWeights: f.MetricWeights, DatasetWeights: f.DatasetWeights, CreatedAt: rfc3339(f.CreatedAt)}
}

func snapshotJSON(code string, sn *dynabench.LeaderboardSnapshot) SnapshotJSON {
	return SnapshotJSON{Slug: sn.Slug, Name: sn.Name, URL: "/api/v1/tasks/" + code + "/leaderboard/snapshots/" + sn.Slug,
		CreatedAt: rfc3339(sn.CreatedAt), Leaderboard: json.RawMessage(sn.Body)}
}
