package server

import "strings"

// stopMatcher cuts generated text at the first stop sequence, holding back
// text that may be the start of one until the next piece decides.
type stopMatcher struct {
	stops []string
	held  string
	hit   string // the stop sequence reached, if any
}

func newStopMatcher(stops []string) *stopMatcher { return &stopMatcher{stops: stops} }

// push adds text and returns what can be passed on, and whether a stop
// sequence was reached (the text before it is returned, the rest dropped).
func (m *stopMatcher) push(text string) (string, bool) {
	if len(m.stops) == 0 {
		return text, false
	}
	s := m.held + text
	first := -1
	for _, stop := range m.stops {
		if i := strings.Index(s, stop); i >= 0 && (first < 0 || i < first) {
			first, m.hit = i, stop
		}
	}
	if first >= 0 {
		m.held = ""
		return s[:first], true
	}
	hold := 0
	for _, stop := range m.stops {
		for n := min(len(s), len(stop)-1); n > hold; n-- {
			if strings.HasSuffix(s, stop[:n]) {
				hold = n
				break
			}
		}
	}
	m.held = s[len(s)-hold:]
	return s[:len(s)-hold], false
}

// flush returns the text still held at the end of generation.
func (m *stopMatcher) flush() string {
	s := m.held
	m.held = ""
	return s
}
