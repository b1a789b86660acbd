package simulate

import (
	"math/rand/v2"
	"regexp"
	"strings"
)

// nliStrategies exploit a bag-of-n-grams NLI model: high word overlap reads as entailment, "not" and
// "no" read as contradiction, numbers are just tokens.
var nliStrategies = []strategy{
	// Round 1: overlap. Copy the premise and add something it does not say (neutral), or change one
	// number or one word to its opposite (contradictory): nearly every n-gram still matches.
	{name: "overlap-neutral", minRound: 1, label: "neutral", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return sentenceBody(p) + pick(rng, neutralTails) + ".", true
	}},
	{name: "number-swap", minRound: 1, label: "contradictory", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return swapWord(p, numberSwaps, rng)
	}},
	{name: "antonym-swap", minRound: 1, label: "contradictory", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return swapWord(p, antonyms, rng)
	}},
	{name: "false-that", minRound: 1, label: "contradictory", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return pick(rng, []string{"It is false that ", "It is a lie that ", "Nobody saw that "}) + lowerFirst(sentenceBody(p)) + ".", true
	}},
	// Round 2: negation that does not contradict. Double negation and "nobody denies" are entailed;
	// "not ... for the first time" is neutral.
	{name: "double-negation", minRound: 2, label: "entailed", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		if subj, verb, rest, ok := splitCopula(p); ok {
			return "It is not true that " + lowerFirst(subj) + " " + verb + " not " + sentenceBody(rest) + ".", true
		}
		return "It is not false that " + lowerFirst(sentenceBody(p)) + ".", true
	}},
	{name: "nobody-denies", minRound: 2, label: "entailed", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return pick(rng, []string{"Nobody could deny that ", "No one disputes that ", "There is no doubt that "}) +
			lowerFirst(sentenceBody(p)) + ".", true
	}},
	{name: "negated-neutral", minRound: 2, label: "neutral", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return sentenceBody(p) + pick(rng, []string{", but not for the first time", ", and not because anyone asked",
			", though not everyone approves", ", and nobody knows why"}) + ".", true
	}},
	// Round 3: quantities and scenes. "More than one" for "two" is entailed though the number changed; a
	// different activity for the same subject contradicts without any negation; a hedged clause is neutral
	// though every content word matches.
	{name: "number-entailed", minRound: 3, label: "entailed", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return swapWord(p, numberWeakenings, rng)
	}},
	{name: "scene-contradiction", minRound: 3, label: "contradictory", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		subj, verb, _, ok := splitCopula(p)
		if !ok {
			return "", false
		}
		return subj + " " + verb + " " + pick(rng, otherScenes) + ".", true
	}},
	{name: "hedged-neutral", minRound: 3, label: "neutral", write: func(p string, _ Context, rng *rand.Rand) (string, bool) {
		return pick(rng, []string{"Someone hoped that ", "A reporter guessed that ", "Maybe "}) +
			lowerFirst(sentenceBody(p)) + " again tomorrow.", true
	}},
}

var neutralTails = []string{
	" because they planned it weeks ago", " for the first time", ", and everyone there is happy about it",
	" on a Tuesday", " while a friend films it", " to celebrate a birthday",
}

var otherScenes = []string{
	"asleep at home with the lights off", "sitting alone in an empty office", "swimming in a heated pool",
	"watching television in a hotel room",
}

var numberSwaps = map[string][]string{
	"one": {"three", "five"}, "two": {"three", "four"}, "three": {"two", "five"}, "four": {"two", "six"},
	"five": {"three", "seven"}, "six": {"two", "nine"}, "ten": {"three", "twelve"}, "forty": {"four", "ten"},
	"1974": {"1947", "2004"}, "first": {"second", "third"}, "half": {"a quarter", "a tenth"},
	"Two": {"Three", "Five"}, "Three": {"Two", "Four"}, "hour": {"week", "year"}, "hours": {"minutes", "days"},
	"months": {"weeks", "years"},
}

var numberWeakenings = map[string][]string{
	"two": {"more than one", "at least two"}, "three": {"more than two", "at least three"},
	"four": {"more than three", "several"}, "six": {"more than five", "several"}, "ten": {"more than nine"},
	"forty": {"more than thirty", "many"}, "Two": {"More than one", "At least two"},
	"Three": {"More than two", "Several"}, "a group of": {"several"}, "A group of": {"Several"},
}

var antonyms = map[string][]string{
	"yellow": {"blue"}, "old": {"young", "new"}, "young": {"old"}, "narrow": {"wide"}, "small": {"huge"},
	"warm": {"freezing"}, "winter": {"summer"}, "sleeping": {"running"}, "south": {"north"},
	"under": {"on top of"}, "foreign": {"home"}, "tall": {"short"}, "late": {"early"}, "new": {"old"},
	"open": {"closed"}, "closing": {"opening"}, "night": {"day"}, "sunrise": {"sunset"}, "up": {"down"},
	"win": {"lose"}, "fell": {"stayed"}, "protected": {"harmed"}, "discovered": {"hidden"},
	"out": {"in"}, "cut": {"raised"}, "after": {"before"}, "aloud": {"silently"}, "first": {"last"},
	"long": {"short"}, "ancient": {"modern"}, "coast": {"mountains"}, "Strong": {"Gentle"},
}

var wordRE = regexp.MustCompile(`[A-Za-z0-9]+`)

// swapWord replaces one word of s (or phrase, for keys with spaces) found in the table, chosen by rng.
func swapWord(s string, table map[string][]string, rng *rand.Rand) (string, bool) {
	var hits [][2]int
	var keys []string
	for _, loc := range wordRE.FindAllStringIndex(s, -1) {
		if _, ok := table[s[loc[0]:loc[1]]]; ok {
			hits, keys = append(hits, [2]int{loc[0], loc[1]}), append(keys, s[loc[0]:loc[1]])
		}
	}
	for k := range table {
		if strings.Contains(k, " ") {
			if i := strings.Index(s, k); i >= 0 {
				hits, keys = append(hits, [2]int{i, i + len(k)}), append(keys, k)
			}
		}
	}
	if len(hits) == 0 {
		return "", false
	}
	// Sort for determinism: map iteration above only adds phrase keys, which are few; order by position.
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && hits[j][0] < hits[j-1][0]; j-- {
			hits[j], hits[j-1], keys[j], keys[j-1] = hits[j-1], hits[j], keys[j-1], keys[j]
		}
	}
	i := rng.IntN(len(hits))
	return s[:hits[i][0]] + pick(rng, table[keys[i]]) + s[hits[i][1]:], true
}

// splitCopula splits "A man is carrying a ladder." into "A man", "is", "carrying a ladder.".
func splitCopula(p string) (subj, verb, rest string, ok bool) {
	best := -1
	for _, v := range []string{" is ", " are ", " has ", " was "} {
		if i := strings.Index(p, v); i > 0 && (best < 0 || i < best) {
			best, verb = i, strings.TrimSpace(v)
		}
	}
	if best < 0 {
		return "", "", "", false
	}
	return p[:best], verb, p[best+len(verb)+2:], true
}
