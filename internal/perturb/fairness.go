package perturb

import (
	"math/rand/v2"
	"strings"
)

// ---- gendered words ----

// genderPairs are swapped both ways; genderOneWay only left to right
// (their reverse is already taken by another pair). "her" and "his" are
// handled by rules (see genderSwap).
var genderPairs = [][2]string{
	{"he", "she"}, {"himself", "herself"},
	{"man", "woman"}, {"men", "women"}, {"boy", "girl"}, {"boys", "girls"},
	{"father", "mother"}, {"fathers", "mothers"}, {"dad", "mom"}, {"dads", "moms"},
	{"daddy", "mommy"}, {"grandpa", "grandma"},
	{"son", "daughter"}, {"sons", "daughters"}, {"brother", "sister"}, {"brothers", "sisters"},
	{"husband", "wife"}, {"husbands", "wives"}, {"king", "queen"}, {"kings", "queens"},
	{"prince", "princess"}, {"princes", "princesses"}, {"uncle", "aunt"}, {"uncles", "aunts"},
	{"nephew", "niece"}, {"nephews", "nieces"}, {"grandfather", "grandmother"},
	{"grandson", "granddaughter"}, {"gentleman", "lady"}, {"gentlemen", "ladies"},
	{"boyfriend", "girlfriend"}, {"male", "female"}, {"males", "females"},
	{"mr", "ms"}, {"sir", "madam"}, {"actor", "actress"}, {"waiter", "waitress"},
}

var genderOneWay = [][2]string{
	{"him", "her"}, {"hers", "his"}, {"mrs", "mr"}, {"mum", "dad"},
}

var genderMap = func() map[string]string {
	m := map[string]string{}
	for _, p := range genderPairs {
		m[p[0]], m[p[1]] = p[1], p[0]
	}
	for _, p := range genderOneWay {
		m[p[0]] = p[1]
	}
	return m
}()

// notNounStart lists words that, right after "her"/"his", show the pronoun
// is not a determiner: "gave her the book", "saw her yesterday", "the book
// is his and ...".
var notNounStart = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the this that these those some any every all no each
		to at in on for with from about by of into onto over under up down out off back away again
		and or but nor so yet because if when while as than until before after since though although
		now then today tonight yesterday tomorrow too very well there here once twice soon later
		i you he she it we they me him her us them my your his its our their what how why where who
		is was are were be been has have had do does did will would can could should may might must not`) {
		m[w] = true
	}
	return m
}()

// genderSwap swaps gendered words and gendered first names, keeping case
// and word boundaries. The ambiguous pronouns use one rule: "her"/"his"
// directly followed (after spaces only) by a word that is not in
// notNounStart is a determiner, so "her"→"his" and "his"→"her"; otherwise
// it is a pronoun, so "her"→"him" and "his"→"hers". First names are
// swapped to a name of the other gender in the same name group, the same
// name always to the same replacement within one text.
func genderSwap(s string, rng *rand.Rand) string {
	var es []edit
	names, used := map[string]string{}, namesIn(s)
	for _, w := range words(s) {
		word := s[w.start:w.end]
		lower := strings.ToLower(word)
		var repl string
		switch lower {
		case "her", "his":
			det := false
			if next := nextWord(s, w.end); next != "" && !notNounStart[strings.ToLower(next)] {
				det = true
			}
			switch {
			case lower == "her" && det:
				repl = "his"
			case lower == "her":
				repl = "him"
			case det:
				repl = "her"
			default:
				repl = "hers"
			}
		default:
			if r, ok := genderMap[lower]; ok {
				repl = r
			} else if r, ok := swapName(word, names, used, rng, func(n nameInfo) []string {
				return nameGroups[n.group].names[1-n.gender]
			}); ok {
				es = append(es, edit{w, r})
				continue
			} else {
				continue
			}
		}
		es = append(es, edit{w, withCase(repl, patternOf(word))})
	}
	return applyEdits(s, es)
}

// ---- first names ----

type nameInfo struct{ group, gender int }

// nameIndex maps every listed name (Title case) to its group and gender.
var nameIndex = func() map[string]nameInfo {
	m := map[string]nameInfo{}
	for g, grp := range nameGroups {
		for sex, list := range grp.names {
			for _, n := range list {
				m[n] = nameInfo{g, sex}
			}
		}
	}
	return m
}()

// swapName recognises word as a listed first name (in Title or UPPER case
// only, so common words in lower case are left alone) and returns a
// replacement drawn from candidates(info), memoised in seen so a name is
// replaced consistently within a text. Names in used (those in the text and
// replacements already chosen) are avoided, so two different people never
// end up with the same name.
func swapName(word string, seen map[string]string, used map[string]bool, rng *rand.Rand, candidates func(nameInfo) []string) (string, bool) {
	pat := patternOf(word)
	if pat == lowerCase {
		return "", false
	}
	title := capitalize(strings.ToLower(word))
	info, ok := nameIndex[title]
	if !ok || (pat == titleCase && word != title) {
		return "", false
	}
	r, ok := seen[title]
	if !ok {
		all := candidates(info)
		cands := make([]string, 0, len(all))
		for _, c := range all {
			if !used[c] {
				cands = append(cands, c)
			}
		}
		if len(cands) == 0 { // more distinct names than the lists hold
			cands = all
		}
		r = cands[rng.IntN(len(cands))]
		seen[title] = r
		used[r] = true
	}
	if pat == upperCase {
		return strings.ToUpper(r), true
	}
	return r, true
}

// ethnicNameSwap replaces every listed first name by a name of the same
// gender from a different name group, consistently within the text.
func ethnicNameSwap(s string, rng *rand.Rand) string {
	var es []edit
	names, used := map[string]string{}, namesIn(s)
	for _, w := range words(s) {
		word := s[w.start:w.end]
		r, ok := swapName(word, names, used, rng, func(n nameInfo) []string {
			var out []string
			for g, grp := range nameGroups {
				if g != n.group {
					out = append(out, grp.names[n.gender]...)
				}
			}
			return out
		})
		if ok {
			es = append(es, edit{w, r})
		}
	}
	return applyEdits(s, es)
}

// namesIn returns the listed names (Title case) that occur in s.
func namesIn(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words(s) {
		word := s[w.start:w.end]
		if patternOf(word) == lowerCase {
			continue
		}
		if t := capitalize(strings.ToLower(word)); isListedName(t) {
			m[t] = true
		}
	}
	return m
}

func isListedName(t string) bool { _, ok := nameIndex[t]; return ok }
