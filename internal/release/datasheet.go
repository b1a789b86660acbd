package release

import (
	"fmt"
	"slices"
	"strings"
)

// Datasheet returns a datasheet for the release in Markdown, with the sections of Gebru et al.,
// "Datasheets for Datasets" (2021): motivation, composition, collection process, preprocessing, uses,
// distribution and maintenance. It is filled from the manifest; the owner is expected to edit it (the
// "TODO(owner)" lines mark what only they know), and WriteRelease takes the edited text instead.
func Datasheet(m *Manifest, info CardInfo) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Datasheet: %s\n\n", cardName(m, info))
	p("## Motivation\n\n")
	p("- **Purpose.** An adversarial benchmark collected with Dynamic Adversarial Data Collection: people wrote "+
		"inputs for the task `%s` that the model in the loop got wrong, and other people checked them. It "+
		"measures what current models still fail at, and becomes harder round by round.\n", m.Task)
	if info.Description != "" {
		p("- **Task.** %s\n", strings.TrimSpace(info.Description))
	}
	p("- **Created by.** %s\n", orTODO(info.Owner, "who created the dataset and on whose behalf"))
	p("- **Funding.** TODO(owner): who funded the collection.\n\n")

	p("## Composition\n\n")
	p("- **Instances.** %d examples, each a context, the annotator's input with its label, the model's "+
		"answer, whether it fooled the model, and the validators' verdicts.\n", m.Examples)
	p("- **Splits.** Deterministic, by a keyed hash of the example id (train %.0f%%, dev %.0f%%, test %.0f%%):\n\n",
		100*m.Ratios.Train, 100*m.Ratios.Dev, 100*m.Ratios.Test)
	writeSplitTable(&b, m)
	p("\n- **Labels.** The label is the annotator's, confirmed by the validators. Examples are adversarial: " +
		"the label distribution reflects what fooled the model, not the world.\n")
	p("- **Personal information.** Annotators wrote free text and may have included names or other personal " +
		"details. TODO(owner): say whether the text was reviewed for them.\n\n")

	p("## Collection process\n\n")
	p("- **Round.** Round %d, collected under task config version %d (sha256 %s).\n",
		m.Round, m.ConfigVersion, orDash(m.ConfigSHA256))
	p("- **Models in the loop.** %s.\n", modelNames(m.Models))
	if c := m.Collection; c.Collected > 0 {
		p("- **Annotation.** %d examples were collected from %d annotators; %d fooled the model (MER %.1f%%) and "+
			"%d were verified as fooling it (vMER %.1f%%) by %d validators, %d agreeing validations each.\n",
			c.Collected, c.Annotators, c.Fooled, pct(c.Fooled, c.Collected), c.VerifiedFooled,
			pct(c.VerifiedFooled, c.Collected), c.Validators, c.MatchingValidates)
	}
	p("- **Who annotated, and pay.** TODO(owner): the annotators (volunteers, crowd workers) and their pay.\n\n")

	p("## Preprocessing, cleaning, labelling\n\n")
	p("- Only verified examples are released; retracted and rejected ones are not.\n")
	p("- Annotators and validators appear only as keyed hashes (HMAC-SHA256 with the platform's secret); " +
		"usernames, e-mail addresses and crowd worker ids are never exported.\n\n")

	p("## Uses\n\n")
	p("- **Intended.** Evaluating models (the test split is a scoring dataset of the task's leaderboard), " +
		"and training models for the next round (train and dev).\n")
	p("- **Not intended.** Training on the test split; drawing conclusions about the world from the " +
		"label distribution; using the examples, written to fool one model, as a sample of natural text.\n")
	p("- **Contamination.** Every record carries the canary `%s`. Training data containing it is "+
		"contaminated with this release.\n\n", m.Canary)

	p("## Distribution\n\n")
	p("- **License.** %s.\n", m.License)
	p("- **Format.** `data/{train,dev,test}.jsonl` (Hugging Face datasets rows, with README.md as the card), " +
		"`full/examples.jsonl` (Dynabench's export shape), `full/examples.csv`, and `manifest.json`.\n")
	p("- **Files.**\n\n| file | bytes | sha256 |\n|---|---|---|\n")
	for _, f := range m.Files {
		p("| %s | %d | `%s` |\n", f.Path, f.Size, f.SHA256)
	}
	p("\n## Maintenance\n\n")
	p("- **Maintainer.** %s\n", orTODO(info.Owner, "who maintains the dataset and how to reach them"))
	p("- **Versions.** A release is immutable; corrections come as a new version (this is %s), listed on the "+
		"task's page.\n", m.Version)
	p("- **Errata.** TODO(owner): where known errors are reported.\n")
	return b.String()
}

func writeSplitTable(b *strings.Builder, m *Manifest) {
	var labels []string
	for _, s := range m.Splits {
		for l := range s.Labels {
			if !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	slices.Sort(labels)
	fmt.Fprintf(b, "| split | examples | %s |\n|---|---|%s\n", strings.Join(labels, " | "),
		strings.Repeat("---|", len(labels)))
	for _, s := range m.Splits {
		fmt.Fprintf(b, "| %s | %d |", s.Name, s.Examples)
		for _, l := range labels {
			fmt.Fprintf(b, " %d |", s.Labels[l])
		}
		b.WriteString("\n")
	}
}

func modelNames(ms []ModelRef) string {
	if len(ms) == 0 {
		return "none recorded"
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = "`" + m.Name + "`"
	}
	return strings.Join(names, ", ")
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

func orTODO(s, what string) string {
	if s != "" {
		return s
	}
	return "TODO(owner): " + what + "."
}

func orDash(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
