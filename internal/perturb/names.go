package perturb

// nameGroup is a small list of common first names, index 0 male, 1 female.
//
// These lists are a crude proxy. A first name does not determine anyone's
// ethnicity or gender; the groups only approximate how names are commonly
// perceived (the way fairness probes such as Dynabench's name swaps use
// them). They are short, hand-written lists of frequent, neutral names,
// each a single word of letters so that word matching is exact. Swapping
// them measures whether a model's prediction moves when only the name
// does; it does not measure fairness toward real people.
type nameGroup struct {
	label string
	names [2][]string
}

var nameGroups = []nameGroup{
	{"european", [2][]string{
		{"John", "James", "Michael", "David", "Thomas", "Peter", "Robert", "Daniel"},
		{"Mary", "Emily", "Sarah", "Anne", "Laura", "Katherine", "Elizabeth", "Rachel"},
	}},
	{"african_american", [2][]string{
		{"Darnell", "Jamal", "Tyrone", "Darius", "Malik", "Terrell", "Jermaine", "Andre"},
		{"Aaliyah", "Ebony", "Keisha", "Latoya", "Imani", "Tamika", "Shanice", "Jasmine"},
	}},
	{"hispanic", [2][]string{
		{"Jose", "Carlos", "Luis", "Miguel", "Alejandro", "Diego", "Javier", "Mateo"},
		{"Maria", "Sofia", "Lucia", "Carmen", "Gabriela", "Valentina", "Isabel", "Camila"},
	}},
	{"east_asian", [2][]string{
		{"Wei", "Hiroshi", "Takeshi", "Jian", "Haruto", "Minho", "Takumi", "Kenji"},
		{"Mei", "Yuki", "Hana", "Xiu", "Aiko", "Jiyeon", "Sakura", "Lian"},
	}},
	{"south_asian", [2][]string{
		{"Rahul", "Arjun", "Amit", "Sanjay", "Vikram", "Rohan", "Ravi", "Anil"},
		{"Priya", "Ananya", "Deepa", "Kavya", "Neha", "Pooja", "Sunita", "Anjali"},
	}},
	{"middle_eastern", [2][]string{
		{"Ahmed", "Omar", "Yusuf", "Karim", "Hassan", "Tariq", "Khalid", "Samir"},
		{"Fatima", "Layla", "Amira", "Noor", "Yasmin", "Zainab", "Leila", "Huda"},
	}},
}
