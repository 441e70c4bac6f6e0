package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// metrics are the counters /metrics shows.
type metrics struct {
	mu               sync.Mutex
	requests         map[[2]string]int64 // endpoint, status
	promptTokens     int64
	completionTokens int64
	genSeconds       float64
	lastTokPerSec    float64
}

func (m *metrics) request(endpoint string, status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.requests == nil {
		m.requests = map[[2]string]int64{}
	}
	m.requests[[2]string{endpoint, fmt.Sprint(status)}]++
}

func (m *metrics) generation(r Result, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.promptTokens += int64(r.PromptTokens)
	m.completionTokens += int64(r.CompletionTokens)
	m.genSeconds += d.Seconds()
	if d > 0 && r.CompletionTokens > 0 {
		m.lastTokPerSec = float64(r.CompletionTokens) / d.Seconds()
	}
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	queued, busy := s.slots.load()
	m := &s.metrics
	m.mu.Lock()
	var b strings.Builder
	metric := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric("llm_requests_total", "counter", "HTTP requests by endpoint and status code.")
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		fmt.Fprintf(&b, "llm_requests_total{endpoint=%q,code=%q} %d\n", k[0], k[1], m.requests[k])
	}
	metric("llm_prompt_tokens_total", "counter", "Prompt tokens evaluated: generations' prompts and embeddings' inputs.")
	fmt.Fprintf(&b, "llm_prompt_tokens_total %d\n", m.promptTokens)
	metric("llm_completion_tokens_total", "counter", "Generated tokens.")
	fmt.Fprintf(&b, "llm_completion_tokens_total %d\n", m.completionTokens)
	metric("llm_generation_seconds_total", "counter", "Time spent generating (prompt evaluation included) and embedding.")
	fmt.Fprintf(&b, "llm_generation_seconds_total %g\n", m.genSeconds)
	metric("llm_tokens_per_second", "gauge", "Generated tokens per second of the last finished generation.")
	fmt.Fprintf(&b, "llm_tokens_per_second %g\n", m.lastTokPerSec)
	m.mu.Unlock()
	metric("llm_queue_length", "gauge", "Requests waiting for a free slot.")
	fmt.Fprintf(&b, "llm_queue_length %d\n", queued)
	metric("llm_slots_busy", "gauge", "Slots generating or embedding now.")
	fmt.Fprintf(&b, "llm_slots_busy %d\n", busy)
	metric("llm_slots", "gauge", "Slots (parallel sessions).")
	fmt.Fprintf(&b, "llm_slots %d\n", len(s.all))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte(b.String()))
}
