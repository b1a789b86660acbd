// Package evaluation computes model metrics, the Dynaboard Dynascore and
// bootstrap confidence intervals for leaderboards.
//
// It is pure: no I/O, no global state, standard library only (plus the
// SQuAD normalisation from internal/taskconfig).
//
// Metrics are computed from paired gold/prediction slices. Every metric
// that is a mean of per-example scores (accuracy, SQuAD EM and F1) has a
// *Scores variant that returns the per-example vector, so a bootstrap can
// resample examples; macro-F1 is not a mean and is recomputed from
// confusion counts on each resample (see LabelPairs).
//
// Dynascore follows Dynaboard's ScoreModel.dynascore exactly (see the
// comment on Dynascore for every decision taken where the reference is
// loose). Leaderboard adds paired bootstrap percentile intervals for every
// dataset-weighted metric value and every Dynascore, and rank groups.
package evaluation
