package taskconfig

import "testing"

// TestPrimaryTarget: the perf metric's reference field wins when it is a target; otherwise the
// prediction field; otherwise the first target; none without targets.
func TestPrimaryTarget(t *testing.T) {
	base := `
context:
- name: context
  type: string
input:
- name: statement
  type: string
- name: label
  type: multiclass
  labels: [a, b]
- name: topic
  type: multiclass
  labels: [x, y]
output:
- name: label
- name: topic
`
	for _, c := range []struct{ extra, want string }{
		{"", "label"},
		{"perf_metric:\n  type: accuracy\n  reference_name: topic\n", "topic"},
		{"perf_metric:\n  type: accuracy\n  reference_name: statement\n", "label"},
	} {
		cfg, rep := Parse([]byte(base + c.extra))
		if cfg == nil {
			t.Fatalf("%q: %v", c.extra, rep.Problems)
		}
		f, ok := cfg.PrimaryTarget()
		if !ok || f.Name != c.want {
			t.Errorf("%q: got %q %v, want %q", c.extra, f.Name, ok, c.want)
		}
	}
	cfg, _ := Parse([]byte("context:\n- name: context\n  type: string\ninput:\n- name: statement\n  type: string\noutput:\n- name: label\n  type: multiclass\n  labels: [a]\n"))
	if cfg != nil {
		if _, ok := cfg.PrimaryTarget(); ok {
			t.Error("a config without targets has a primary target")
		}
	}
}
