package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/render"
)

// The kinds of Warning, in the order the report lists them.
const (
	// WarnNoRounds: a scenario has no ok round (N: its failed attempts).
	WarnNoRounds = "no_ok_round"
	// WarnClientBound: rounds whose load generator was busy for most of
	// its threads' time (the client_bound column): it, not the server, may
	// have set the pace (N: those rounds).
	WarnClientBound = "client_bound"
	// WarnRefusedWrites: rounds in which writes were refused (the
	// conflicts column: an insert-only command met keys that existed):
	// their QPS counts requests the server did not carry out, and they are
	// compared with nothing (N: those rounds).
	WarnRefusedWrites = "refused_writes"
	// WarnUntrimmed: fewer than 3 ok rounds, nothing dropped (N: rounds).
	WarnUntrimmed = "untrimmed"
	// WarnFewRounds: fewer than 5 ok rounds (N: rounds).
	WarnFewRounds = "few_rounds"
	// WarnNoisy: a CV above 5% (Value: the CV).
	WarnNoisy = "noisy"
	// WarnTestPower: too few rounds on both sides for the significance
	// test ever to find a difference at level α.
	WarnTestPower = "test_power"
	// WarnTestTies: every round of the strategy and of its baseline has
	// the same value of a metric (Value: the metric): no test.
	WarnTestTies = "test_ties"
	// WarnBaselines: several baseline candidates for a target (Value:
	// them, Chosen: the one used).
	WarnBaselines = "baselines"
	// WarnOther: a warning of no known kind, Msg as it came.
	WarnOther = "other"
)

// WarnKinds are the kinds, in the order the report lists them.
var WarnKinds = []string{WarnNoRounds, WarnRefusedWrites, WarnClientBound, WarnUntrimmed, WarnFewRounds, WarnNoisy,
	WarnTestPower, WarnTestTies, WarnBaselines, WarnOther}

// Warning is one kind of doubt about the figures, with every scenario (or,
// for WarnBaselines, target) it applies to: the report writes one line per
// Warning, in its language. Error gives the line in English.
type Warning struct {
	// Kind is one of the Warn… constants.
	Kind string
	// Where lists the scenarios (or targets) concerned, in table order.
	Where []Subject
	// Need is the kind's threshold in rounds (WarnUntrimmed,
	// WarnFewRounds, WarnTestPower, WarnTestTies).
	Need int
	// Level is α (WarnTestPower,
	// WarnTestTies) or the CV limit in percent (WarnNoisy).
	Level float64
	// Msg is the message of a WarnOther.
	Msg string
	// Every is set when the warning concerns every scenario of the report
	// that has an ok round, alike (WarnUntrimmed and WarnFewRounds with
	// one count of rounds): the report says so instead of naming them all.
	Every bool
}

// Subject is one scenario or target a Warning applies to.
type Subject struct {
	// Name is "target/strategy/mode", or the target's name.
	Name string
	// N is a count: the ok rounds, or the failed attempts of WarnNoRounds.
	N int
	// Value is the CV of WarnNoisy, the metric of WarnTestTies, the
	// candidates of WarnBaselines.
	Value string
	// Chosen is the baseline WarnBaselines used.
	Chosen string
}

// maxNamed is how many scenarios a warning names before it counts the
// rest.
const maxNamed = 20

// Error is the warning in English.
func (w *Warning) Error() string { return w.Text(render.LangEN) }

// Text is the warning in a language (render.LangEN or render.LangZH):
// what the doubt
// is, then whom it concerns.
func (w *Warning) Text(lang string) string {
	l := &render.LabelsOf(lang).Warnings
	var head string
	switch w.Kind {
	case WarnTestPower:
		head = fmt.Sprintf(l.TestPower, w.Need, w.Level)
	case WarnUntrimmed:
		head = fmt.Sprintf(l.Untrimmed, w.Need)
	case WarnFewRounds:
		head = fmt.Sprintf(l.FewRounds, w.Need)
	case WarnNoisy:
		head = fmt.Sprintf(l.Noisy, w.Level)
	case WarnOther:
		head = w.Msg
	default:
		head = warnHead(l, w.Kind)
	}
	if w.Every && len(w.Where) > 1 {
		return head + l.Colon + subject(l, w.Kind, Subject{Name: l.Every, N: w.Where[0].N})
	}
	var items []string
	for i, s := range w.Where {
		if i == maxNamed && len(w.Where) > maxNamed+1 {
			return head + l.Colon + strings.Join(items, l.ListSep) + fmt.Sprintf(l.More, len(w.Where)-i)
		}
		items = append(items, subject(l, w.Kind, s))
	}
	return head + l.Colon + strings.Join(items, l.ListSep)
}

// warnHead is the head of a kind of warning whose head has no verb; ""
// for WarnOther, whose head is its message.
func warnHead(l *render.WarningLabels, kind string) string {
	switch kind {
	case WarnNoRounds:
		return l.NoRounds
	case WarnClientBound:
		return l.ClientBound
	case WarnRefusedWrites:
		return l.RefusedWrites
	case WarnTestTies:
		return l.TestTies
	case WarnBaselines:
		return l.Baselines
	}
	return ""
}

// subject formats one subject of a warning of the given kind.
func subject(l *render.WarningLabels, kind string, s Subject) string {
	paren := func(v string) string { return fmt.Sprintf(l.Parens, v) }
	switch kind {
	case WarnNoRounds:
		if s.N == 1 {
			return s.Name + l.Failed1
		}
		return s.Name + fmt.Sprintf(l.FailedN, s.N)
	case WarnUntrimmed, WarnFewRounds, WarnClientBound, WarnRefusedWrites:
		if s.N == 1 {
			return s.Name + l.Rounds1
		}
		return s.Name + fmt.Sprintf(l.RoundsN, s.N)
	case WarnNoisy, WarnTestTies:
		return s.Name + paren(s.Value)
	case WarnBaselines:
		return s.Name + paren(s.Value+"; "+fmt.Sprintf(l.Using, s.Chosen))
	}
	return s.Name
}

// warnings puts the warnings in order: by kind, the scenarios of each in
// table order.
func (b *builder) warnings() {
	rank := make(map[string]int)
	measured := 0 // scenarios with an ok round
	for _, t := range b.rep.Targets {
		rank[t.Target] = len(rank)
		for _, sc := range t.Scenarios {
			rank[sc.Name()] = len(rank)
			if len(sc.Rounds) > 0 {
				measured++
			}
		}
	}
	for _, kind := range []string{WarnUntrimmed, WarnFewRounds} {
		if w := b.warns[kind]; w != nil {
			w.Every = len(w.Where) == measured &&
				!slices.ContainsFunc(w.Where, func(s Subject) bool { return s.N != w.Where[0].N })
		}
	}
	var ws []*Warning
	for _, w := range b.warns {
		// Subjects of the side-by-side tables ("a vs b") come after the
		// scenarios, in the order they were found.
		at := func(name string) int {
			if r, ok := rank[name]; ok {
				return r
			}
			return len(rank)
		}
		slices.SortStableFunc(w.Where, func(x, y Subject) int { return cmp.Compare(at(x.Name), at(y.Name)) })
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(x, y *Warning) int {
		return cmp.Or(cmp.Compare(slices.Index(WarnKinds, x.Kind), slices.Index(WarnKinds, y.Kind)), cmp.Compare(x.Msg, y.Msg))
	})
	b.rep.Warnings = b.rep.Warnings[:0]
	for _, w := range ws {
		b.rep.Warnings = append(b.rep.Warnings, w)
	}
}
