package simulate

import (
	"math/rand/v2"
	"strings"
)

// sentimentStrategies exploit a bag-of-n-grams sentiment model: "good" reads as positive whatever
// negates it, and a sentence's strongest words decide, not its turn.
var sentimentStrategies = []strategy{
	// Round 1: negated sentiment words, sarcasm and contrast.
	{name: "negated-positive", minRound: 1, label: "negative", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"Honestly, {t} was not good at all.", "I would not call {t} great, or even decent.",
			"{T} was not the wonderful experience everyone promised."}), true
	}},
	{name: "negated-negative", minRound: 1, label: "positive", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"Honestly, {t} was not bad at all.", "{T} was nowhere near as terrible as I feared.",
			"I have no complaints about {t}, none."}), true
	}},
	{name: "sarcasm", minRound: 1, label: "negative", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"Oh great, {t} was just perfect: two hours of my life I will never get back.",
			"Wonderful, {t} was exactly as amazing as a wet Monday morning.",
			"Brilliant. {T} was a fantastic way to waste a whole evening."}), true
	}},
	{name: "contrast-positive", minRound: 1, label: "positive", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"I expected to hate {t}, but it won me over completely.",
			"Everyone said {t} would be awful and boring, but I loved it."}), true
	}},
	// Round 2: double negation, neutral sentences full of sentiment words, faint praise.
	{name: "double-negation", minRound: 2, label: "positive", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"I can't say {t} was not worth it.", "It is not true that {t} was not enjoyable.",
			"Nobody could say {t} was not lovely."}), true
	}},
	{name: "neutral-loaded", minRound: 2, label: "neutral", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"My friend asked whether {t} would be wonderful or terrible.",
			"The sign outside said {t} is either amazing or awful, depending on who you ask.",
			"I am going to find out this week whether {t} is any good."}), true
	}},
	{name: "faint-praise", minRound: 2, label: "negative", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"Well, at least {t} was over quickly, which is the nicest thing I can say.",
			"The best part of {t} was leaving."}), true
	}},
	// Round 3: "never" and "no longer" on the positive side, rhetorical questions, comparisons.
	{name: "never-positive", minRound: 3, label: "positive", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"I have never had a better time than with {t}.",
			"{T} is no longer the disappointment it used to be; it is a joy now.",
			"Never did {t} let me down, not once."}), true
	}},
	{name: "rhetorical", minRound: 3, label: "positive", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"Could {t} have been any more perfect?", "Who wouldn't love {t}?"}), true
	}},
	{name: "comparison-negative", minRound: 3, label: "negative", write: func(_ string, c Context, rng *rand.Rand) (string, bool) {
		return fill(rng, c, []string{"{T} was less awful than the last one, and that is still awful.",
			"Compared with {t}, even a dentist's waiting room is exciting."}), true
	}},
}

// topics name the thing a statement is about, by the context's tag.
var topics = map[string][]string{
	"movies": {"the film", "the movie"}, "food": {"the food", "the meal"}, "hotels": {"the hotel", "our room"},
	"travel": {"the trip", "the journey"}, "gadgets": {"the gadget", "the new device"},
	"books": {"the book", "the story"}, "music": {"the concert", "the music"}, "games": {"the game"},
	"service": {"the service", "their customer service"}, "health": {"the place", "the staff"},
	"shopping": {"the purchase", "the shop"}, "events": {"the show", "the event"},
	"education": {"the course", "the class"},
}

// fill fills {t} (or {T}, capitalised) in one of the templates with the context's topic.
func fill(rng *rand.Rand, c Context, templates []string) string {
	t := "it"
	if ts, ok := topics[c.Tag]; ok {
		t = pick(rng, ts)
	}
	s := pick(rng, templates)
	s = strings.ReplaceAll(s, "{T}", strings.ToUpper(t[:1])+t[1:])
	return strings.ReplaceAll(s, "{t}", t)
}
