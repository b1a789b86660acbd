package release

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Card returns the dataset card (README.md of the release folder) that the Hugging Face Hub and the
// datasets library read: YAML front matter (license, task categories, language, size category, and one
// config whose data files are the non-empty splits), then a short Markdown description with the canary.
func Card(m *Manifest, info CardInfo) string {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "license: %s\n", yamlString(m.License))
	fmt.Fprintf(&b, "pretty_name: %s\n", yamlString(cardName(m, info)))
	yamlList(&b, "language", info.Language)
	yamlList(&b, "task_categories", info.TaskCategories)
	yamlList(&b, "task_ids", info.TaskIDs)
	yamlList(&b, "size_categories", []string{SizeCategory(m.Examples)})
	b.WriteString("tags:\n- dynabench\n- adversarial\n")
	b.WriteString("configs:\n- config_name: default\n  data_files:\n")
	for _, s := range m.Splits {
		if s.Examples > 0 {
			fmt.Fprintf(&b, "  - split: %s\n    path: %s\n", s.Name, yamlString(dataFile(s.Name)))
		}
	}
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "# %s\n\n", cardName(m, info))
	if info.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(info.Description))
	}
	fmt.Fprintf(&b, "Round %d of the Dynabench task `%s`, release %s: %d examples written by people to fool "+
		"the model in the loop and verified by other people. See DATASHEET.md for how it was made, and "+
		"manifest.json for counts and file hashes.\n\n", m.Round, m.Task, m.Version, m.Examples)
	b.WriteString("| split | examples |\n|---|---|\n")
	for _, s := range m.Splits {
		fmt.Fprintf(&b, "| %s | %d |\n", s.Name, s.Examples)
	}
	fmt.Fprintf(&b, "\n## Canary\n\nDo not train on this data. Every record carries the canary string below; "+
		"if a model can complete it, or a training set contains it, that set is contaminated.\n\n"+
		"    %s\n", m.Canary)
	return b.String()
}

// CardInfo is what the card and datasheet need beyond the manifest.
type CardInfo struct {
	Name        string // the task's display name
	Description string // the task's description
	Owner       string // who maintains the dataset (a name or a contact), for the datasheet
	// TaskCategories and TaskIDs are Hugging Face's, e.g. text-classification and natural-language-inference.
	TaskCategories []string
	TaskIDs        []string
	Language       []string // BCP-47 codes, e.g. en
}

func cardName(m *Manifest, info CardInfo) string {
	name := info.Name
	if name == "" {
		name = m.Task
	}
	return fmt.Sprintf("%s, round %d, release %s", name, m.Round, m.Version)
}

// SizeCategory is Hugging Face's size_categories value for n examples.
func SizeCategory(n int) string {
	switch {
	case n < 1000:
		return "n<1K"
	case n < 10_000:
		return "1K<n<10K"
	case n < 100_000:
		return "10K<n<100K"
	case n < 1_000_000:
		return "100K<n<1M"
	case n < 10_000_000:
		return "1M<n<10M"
	}
	return "10M<n<100M"
}

// yamlString quotes s as a YAML double-quoted scalar: a JSON string is one.
func yamlString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func yamlList(b *strings.Builder, key string, vs []string) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n", key)
	for _, v := range vs {
		fmt.Fprintf(b, "- %s\n", yamlString(v))
	}
}

func dataFile(split string) string { return "data/" + split + ".jsonl" }
