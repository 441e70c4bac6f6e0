package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lowmem/llm/chat"
)

// Server is an http.Handler speaking OpenAI's API and Ollama's. Make one
// with New.
type Server struct {
	backend Backend
	info    ModelInfo
	slots   *slots
	all     []*slot
	maxBody int64
	log     *slog.Logger
	mux     *http.ServeMux
	metrics metrics
	now     func() time.Time
	newID   func(prefix string) string
	gate    gate
	saveDir string          // WithSlotSavePath's; "" refuses slot actions
	embeds  bool            // every slot's session is an EmbedSession
	started time.Time       // when New made the server
	base    context.Context // cancelled when Shutdown gives up waiting
	cancel  context.CancelFunc
	// loraGen counts the changes of the adapters' scales (POST
	// /lora-adapters); a slot whose session ran before the last one
	// forgets its cached prompt first (forgetIfStale).
	loraGen atomic.Uint64
	// tasks numbers the generations and embeddings run on the slots
	// (llama-server's id_task, which GET /slots reports).
	tasks atomic.Int64
	// noSlots: GET /slots answers 501 (WithSlotsEndpoint(false)).
	noSlots bool
}

// Option configures a Server.
type Option func(*config) error

type config struct {
	parallel int
	queue    int
	maxBody  int64
	log      *slog.Logger
	newID    func(prefix string) string
	saveDir  string
	noSlots  bool
}

// ErrInvalidOption: an Option given a value out of its range (New).
var ErrInvalidOption = errors.New("server: invalid option")

// inRange is an Option that sets the field field picks to n when n is in
// lo..hi, and otherwise makes New fail naming the option and its range.
func inRange[T int | int64](name string, n, lo, hi T, field func(*config) *T) Option {
	return func(c *config) error {
		if n < lo || n > hi {
			return fmt.Errorf("server: %s(%d): want %d..%d: %w", name, n, lo, hi, ErrInvalidOption)
		}
		*field(c) = n
		return nil
	}
}

// WithParallel sets how many requests generate at once (one session each),
// 1 to 1024. Default 1.
func WithParallel(n int) Option {
	return inRange("WithParallel", n, 1, 1024, func(c *config) *int { return &c.parallel })
}

// WithQueue sets how many requests may wait for a free slot; past that a
// request gets 429. Default 16; 0 means none wait.
func WithQueue(n int) Option {
	return inRange("WithQueue", n, 0, math.MaxInt, func(c *config) *int { return &c.queue })
}

// WithMaxBodyBytes bounds request bodies (413 beyond it); at least 1.
// Default 1 MiB.
func WithMaxBodyBytes(n int64) Option {
	return inRange("WithMaxBodyBytes", n, 1, math.MaxInt64, func(c *config) *int64 { return &c.maxBody })
}

// WithLogger sets where request errors are logged. Default: discarded.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.log = l; return nil }
}

// WithIDs sets the generator of response and tool call IDs (for tests).
func WithIDs(f func(prefix string) string) Option {
	return func(c *config) error { c.newID = f; return nil }
}

// WithSlotsEndpoint(false) makes GET /slots answer 501, as llama-server's
// --no-slots does, for a server whose slots' settings and progress are
// nobody else's business. Default true, as llama-server's.
func WithSlotsEndpoint(on bool) Option {
	return func(c *config) error { c.noSlots = !on; return nil }
}

// New makes a server for b, creating one session per parallel slot.
func New(b Backend, opts ...Option) (*Server, error) {
	c := config{parallel: 1, queue: 16, maxBody: 1 << 20, newID: randomID}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	s := &Server{backend: b, info: b.Info(), maxBody: c.maxBody, log: c.log, now: time.Now, newID: c.newID, started: time.Now(),
		saveDir: c.saveDir, noSlots: c.noSlots}
	if s.info.ID == "" {
		s.info.ID = "model"
	}
	for i := 0; i < c.parallel; i++ {
		sess, err := b.NewSession()
		if err != nil {
			for _, sl := range s.all {
				sl.session.Close()
			}
			return nil, fmt.Errorf("server: session %d: %w", i, err)
		}
		nCtx := s.info.ContextLength
		if cs, ok := sess.(contextSession); ok {
			nCtx = cs.Context()
		}
		s.all = append(s.all, &slot{id: i, session: sess, nCtx: nCtx})
	}
	s.embeds = true
	for _, sl := range s.all {
		_, ok := sl.session.(EmbedSession)
		s.embeds = s.embeds && ok
	}
	s.slots = newSlots(s.all, c.queue)
	s.base, s.cancel = context.WithCancel(context.Background())
	s.mux = http.NewServeMux()
	for _, rt := range s.routes() {
		s.register(rt)
	}
	// Probes, not counted: Ollama's root (only the root itself, so that
	// other unknown paths stay 404), /health and /metrics.
	s.mux.HandleFunc("GET /{$}", s.handleOllamaRoot)
	s.mux.HandleFunc("GET /health", s.handleHealth)
	s.mux.HandleFunc("GET /metrics", s.handleMetrics)
	unknown := func(w http.ResponseWriter, r *http.Request) *apiError {
		return &apiError{Status: 404, Type: "invalid_request_error", Message: fmt.Sprintf("unknown route %s %s", r.Method, r.URL.Path)}
	}
	openAI, ollama := s.wrap("other", writeError, unknown), s.wrap("other", writeOllamaError, unknown)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if isOllamaPath(r.URL.Path) {
			ollama(w, r)
			return
		}
		openAI(w, r)
	})
	return s, nil
}

// route is an endpoint: its pattern, the error JSON of the API it belongs
// to, and its handler. GET patterns answer HEAD too, as Ollama's
// /api/tags does.
type route struct {
	pattern  string
	writeErr func(http.ResponseWriter, *apiError)
	h        func(http.ResponseWriter, *http.Request) *apiError
}

// plain is a route whose handler reads the request itself.
func plain(pattern string, writeErr func(http.ResponseWriter, *apiError), h func(http.ResponseWriter, *http.Request) *apiError) route {
	return route{pattern, writeErr, h}
}

// decoding is a route whose request is one JSON body, decoded into a T
// (readBody's errors answered for it) before h sees it.
func decoding[T any](pattern string, writeErr func(http.ResponseWriter, *apiError), h func(http.ResponseWriter, *http.Request, *T) *apiError) route {
	return route{pattern, writeErr, func(w http.ResponseWriter, r *http.Request) *apiError {
		var req T
		if aerr := readBody(r, &req); aerr != nil {
			return aerr
		}
		return h(w, r, &req)
	}}
}

// chatting is a route whose body is a chat completion request, decoded
// and checked before h sees it.
func chatting(pattern string, writeErr func(http.ResponseWriter, *apiError), h func(http.ResponseWriter, *http.Request, *chatRequest, *chatInput) *apiError) route {
	return decoding(pattern, writeErr, func(w http.ResponseWriter, r *http.Request, req *chatRequest) *apiError {
		in, aerr := req.validate()
		if aerr != nil {
			return aerr
		}
		return h(w, r, req, in)
	})
}

// aliases are the other paths llama-server answers an endpoint's path on;
// /metrics counts them as the endpoint.
var aliases = map[string][]string{
	"/v1/rerank":  {"/rerank", "/v1/reranking", "/reranking"},
	"/completion": {"/completions"},
	"/embedding":  {"/embeddings"},
}

// register adds rt, and its path's aliases, to s.mux; /metrics counts
// them under the path without its wildcard part ("/v1/models" for
// "/v1/models/{id}").
func (s *Server) register(rt route) {
	method, path, _ := strings.Cut(rt.pattern, " ")
	endpoint, _, _ := strings.Cut(path, "/{")
	h := s.wrap(endpoint, rt.writeErr, rt.h)
	for _, p := range append([]string{path}, aliases[path]...) {
		s.mux.HandleFunc(method+" "+p, h)
	}
}

// routes are the endpoints of the APIs served: OpenAI's, Anthropic's,
// llama-server's own and Ollama's, each answering errors in its API's
// JSON.
func (s *Server) routes() []route {
	return []route{
		// OpenAI's.
		chatting("POST /v1/chat/completions", writeError, s.handleChat),
		decoding("POST /v1/completions", writeError, s.handleCompletion),
		decoding("POST /v1/responses", writeError, s.handleResponses),
		plain("POST /v1/embeddings", writeError, s.handleEmbeddings),
		decoding("POST /v1/rerank", writeError, s.handleRerank),
		plain("GET /v1/models", writeError, s.handleModels),
		plain("GET /v1/models/{id}", writeError, s.handleModel),
		// llama-server's that answer in OpenAI's error JSON, as it does.
		decoding("POST /tokenize", writeError, s.handleTokenize),
		decoding("POST /detokenize", writeError, s.handleDetokenize),
		chatting("POST /apply-template", writeError, s.handleApplyTemplate),
		plain("GET /props", writeError, s.handleProps),

		// Anthropic's.
		plain("POST /v1/messages", writeAnthropicError, s.handleAnthropicMessages),
		plain("POST /v1/messages/count_tokens", writeAnthropicError, s.handleAnthropicCountTokens),

		// llama-server's native ones, in its own error JSON.
		plain("POST /completion", writeNativeError, s.handleNativeCompletion),
		plain("POST /infill", writeNativeError, s.handleInfill),
		decoding("POST /embedding", writeNativeError, s.handleNativeEmbedding),
		plain("GET /slots", writeNativeError, s.handleSlots),
		plain("POST /slots/{id_slot}", writeNativeError, s.handleSlotAction),
		plain("GET /lora-adapters", writeNativeError, s.handleLoRAList),
		decoding("POST /lora-adapters", writeNativeError, s.handleLoRASet),

		// Ollama's.
		plain("GET /api/version", writeOllamaError, s.handleOllamaVersion),
		plain("GET /api/tags", writeOllamaError, s.handleOllamaTags),
		plain("GET /api/ps", writeOllamaError, s.handleOllamaPS),
		decoding("POST /api/show", writeOllamaError, s.handleOllamaShow),
		plain("POST /api/chat", writeOllamaError, s.handleOllamaChat),
		plain("POST /api/generate", writeOllamaError, s.handleOllamaGenerate),
		plain("POST /api/embed", writeOllamaError, s.handleOllamaEmbed),
		plain("POST /api/embeddings", writeOllamaError, s.handleOllamaEmbeddings),
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			s.log.Error("server: panic in handler (a bug)", "panic", v)
			e := &apiError{Status: 500, Type: "server_error", Message: "internal error"}
			if isOllamaPath(r.URL.Path) {
				writeOllamaError(w, e)
				return
			}
			writeError(w, e)
		}
	}()
	s.mux.ServeHTTP(w, r)
}

// Shutdown stops taking requests (they get 503), waits for running and
// queued ones to finish, and when ctx ends first, cancels them and waits
// for them to stop (within a decode step). It returns ctx's error when it
// had to cancel. It does not close the sessions; Close does.
func (s *Server) Shutdown(ctx context.Context) error {
	idle := s.gate.close()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		s.cancel()
		<-idle
		return ctx.Err()
	}
}

// Close cancels whatever runs and closes the sessions.
func (s *Server) Close() error {
	idle := s.gate.close()
	s.cancel()
	<-idle
	var errs []error
	for _, sl := range s.all {
		if err := sl.session.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// gate counts requests in flight and refuses new ones once closed.
type gate struct {
	mu     sync.Mutex
	active int
	closed bool
	idle   chan struct{} // closed when closed and no request is active
}

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.active++
	return true
}

func (g *gate) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	if g.closed && g.active == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

func (g *gate) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// close refuses further requests and returns a channel closed once none is
// in flight.
func (g *gate) close() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.active == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	return g.idle
}

// wrap wraps a handler: draining check, body bound, errors written by
// writeErr (in the JSON of the API the endpoint belongs to), metrics.
func (s *Server) wrap(endpoint string, writeErr func(http.ResponseWriter, *apiError), h func(http.ResponseWriter, *http.Request) *apiError) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		var err *apiError
		if !s.gate.enter() {
			err = &apiError{Status: 503, Type: "server_error", Message: "the server is shutting down"}
		} else {
			r.Body = http.MaxBytesReader(sw, r.Body, s.maxBody)
			err = h(sw, r)
			s.gate.exit()
		}
		if err != nil {
			if err.Status >= 500 {
				s.log.Error("request failed", "path", r.URL.Path, "err", err.Message)
			}
			if !sw.wrote {
				writeErr(sw, err)
			}
		}
		status := sw.status
		if status == 0 {
			status = 200
		}
		s.metrics.request(endpoint, status)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = 200, true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if e.Status == 429 {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(struct {
		Error *apiError `json:"error"`
	}{e})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// readBody decodes the request body, mapping an oversized one to 413.
func readBody(r *http.Request, v any) *apiError {
	// Any Content-Type: curl -d sends form encoding unless told otherwise.
	return decodeJSON(r.Body, v)
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) *apiError {
	writeJSON(w, map[string]any{"object": "list", "data": []any{s.modelJSON()}})
	return nil
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) *apiError {
	if id := r.PathValue("id"); id != s.info.ID {
		return &apiError{Status: 404, Type: "invalid_request_error", Param: strp("model"), Code: strp("model_not_found"),
			Message: fmt.Sprintf("the model %q does not exist; this server serves %q", id, s.info.ID)}
	}
	writeJSON(w, s.modelJSON())
	return nil
}

func (s *Server) modelJSON() map[string]any {
	return map[string]any{"id": s.info.ID, "object": "model", "created": 0, "owned_by": "lowmem",
		"context_length": s.info.ContextLength}
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.gate.isClosed() {
		writeError(w, &apiError{Status: 503, Type: "server_error", Message: "the server is shutting down"})
		return
	}
	writeJSON(w, map[string]string{"status": "ok"})
}

// acquire waits for a slot for r (429 past the queue; prompt picks the
// slot whose cache holds the most of it) and returns it, the context to
// run it under, which ends when the client goes away or Shutdown gives up
// waiting, and release, which gives the slot back.
func (s *Server) acquire(r *http.Request, prompt string) (ctx context.Context, sl *slot, release func(), aerr *apiError) {
	return s.hold(r, func(ctx context.Context) (*slot, error) { return s.slots.acquire(ctx, prompt) })
}

// acquireFor is acquire on the slot of id *id when id is not nil
// (llama-server's id_slot), waiting while a request holds it; an id no
// slot has is a 400, where llama-server would defer the task forever.
func (s *Server) acquireFor(r *http.Request, prompt string, id *int) (context.Context, *slot, func(), *apiError) {
	if id == nil {
		return s.acquire(r, prompt)
	}
	if *id < 0 || *id >= len(s.all) {
		return nil, nil, nil, badRequest("id_slot", "Invalid slot ID: no slot %d (the server has %d)", *id, len(s.all))
	}
	target := s.all[*id]
	return s.hold(r, func(ctx context.Context) (*slot, error) { return s.slots.acquireSlot(ctx, target) })
}

// hold is acquire with the slot taken by take.
func (s *Server) hold(r *http.Request, take func(context.Context) (*slot, error)) (ctx context.Context, sl *slot, release func(), aerr *apiError) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.base, cancel)
	sl, err := take(ctx)
	if err != nil {
		stop()
		cancel()
	}
	switch {
	case errors.Is(err, errQueueFull):
		return nil, nil, nil, &apiError{Status: 429, Type: "requests", Code: strp("rate_limit_exceeded"),
			Message: "all slots are busy and the queue is full; retry later"}
	case err != nil && s.base.Err() != nil:
		return nil, nil, nil, &apiError{Status: 503, Type: "server_error", Message: "the server shut down before the request could start"}
	case err != nil:
		return nil, nil, nil, &apiError{Status: 499, Type: "invalid_request_error", Message: "request cancelled while queued"}
	}
	s.forgetIfStale(sl)
	return ctx, sl, func() { s.slots.release(sl); stop(); cancel() }, nil
}

// failed is the reply to a Backend's error err during what ("generation",
// "embedding") under ctx: 503 when the server shut down, 499 when the
// client went away, 400 for a request the Backend refused (naming
// lengthParam when it does not fit the context, promptParam otherwise),
// else 500.
func (s *Server) failed(ctx context.Context, err error, what, lengthParam, promptParam string) *apiError {
	switch {
	case s.base.Err() != nil:
		return &apiError{Status: 503, Type: "server_error", Message: "the server shut down during " + what}
	case ctx.Err() != nil:
		return &apiError{Status: 499, Type: "invalid_request_error", Message: "request cancelled"}
	case errors.Is(err, ErrContextLength):
		e := badRequest(lengthParam, "%v", err)
		e.Code = strp("context_length_exceeded")
		return e
	case errors.Is(err, ErrBadPrompt):
		return badRequest(promptParam, "%v", err)
	}
	return &apiError{Status: 500, Type: "server_error", Message: what + " failed: " + err.Error()}
}

// timing is when a generation passed its stages: a slot held (the wait
// before it is Ollama's load_duration), the first token out (the prompt
// evaluated) and the end.
type timing struct {
	acquired, first, end time.Time
	slot                 int // the slot's id
}

// generate runs one request on a slot: acquire, generate with stop
// strings applied, release, count.
// started, when not nil, runs once a slot is held, before generation: a
// stream sends its first chunk there, so that a request refused before it
// (429, 503) still gets a proper HTTP status.
//
// yield gets the text released and, with p.Logprobs, the log-probabilities
// of the tokens generated since its last call.
func (s *Server) generate(r *http.Request, prompt string, p Params, stop []string, started func(), yield func(text string, lps []TokenLogprobs) bool) (Result, timing, *apiError) {
	return s.run(r, input{text: prompt}, p, stop, started, func(text string, lps []TokenLogprobs, _ []int32) bool { return yield(text, lps) })
}

// input is a request's prompt: text, or, when tokens is not nil, token ids
// (for a TokenSession).
type input struct {
	text   string
	tokens []int32
}

// key is what the slots compare prompts by: the text, or the ids' bytes
// (after a zero byte no text prompt starts with).
func (in input) key() string {
	if in.tokens == nil {
		return in.text
	}
	b := make([]byte, 1, 1+4*len(in.tokens))
	for _, id := range in.tokens {
		b = binary.BigEndian.AppendUint32(b, uint32(id))
	}
	return string(b)
}

// run is generate for a prompt of text or tokens, handing yield the ids of
// the tokens whose text it passes too.
func (s *Server) run(r *http.Request, in input, p Params, stop []string, started func(), yield func(text string, lps []TokenLogprobs, ids []int32) bool) (Result, timing, *apiError) {
	var t timing
	prompt := in.key()
	ctx, sl, release, aerr := s.acquireFor(r, prompt, p.slot)
	if aerr != nil {
		return Result{}, t, aerr
	}
	defer release()
	t.acquired, t.slot = time.Now(), sl.id
	ls, hasLogprobs := sl.session.(LogprobSession)
	ts, hasTokens := sl.session.(TokenSession)
	switch {
	case p.Logprobs && !hasLogprobs:
		return Result{}, t, unsupported("logprobs", "logprobs are not supported by this server's backend")
	case in.tokens != nil && !hasTokens:
		return Result{}, t, &apiError{Status: 501, Type: "not_supported_error", Message: "this server's backend does not take prompts of token ids"}
	}
	sl.prompt = prompt
	defer sl.start(s.tasks.Add(1)-1, p)()
	if started != nil {
		started()
	}

	m := newStopMatcher(stop)
	stopped := false
	var pending []TokenLogprobs // of tokens whose text is held back
	var ids []int32             // likewise
	givesIDs := in.tokens != nil || hasLogprobs
	piece := func(pc Piece) bool {
		if t.first.IsZero() {
			t.first = time.Now()
		}
		if pc.Logprobs != nil {
			pending = append(pending, *pc.Logprobs)
		}
		if pc.ID >= 0 {
			ids = append(ids, pc.ID)
		}
		// A Session that gives no ids: a piece a token.
		sl.generated(pc.Text, pc.ID >= 0 || !givesIDs && pc.Text != "")
		out, hit := m.push(pc.Text)
		if out != "" {
			lps, done := pending, ids
			pending, ids = nil, nil
			if !yield(out, lps, done) {
				return false
			}
		}
		if hit {
			stopped = true
			return false
		}
		return true
	}
	var res Result
	var gerr error
	switch {
	case in.tokens != nil:
		res, gerr = ts.GenerateTokens(ctx, in.tokens, p, piece)
	case hasLogprobs:
		res, gerr = ls.GenerateLogprobs(ctx, in.text, p, piece)
	default:
		res, gerr = sl.session.Generate(ctx, in.text, p, func(text string) bool { return piece(Piece{Text: text, ID: -1}) })
	}
	if gerr == nil && !stopped {
		if rest := m.flush(); rest != "" || len(pending) > 0 || len(ids) > 0 {
			yield(rest, pending, ids)
		}
	}
	if stopped {
		res.Finish, res.stopWord = "stop", m.hit
	}
	t.end = time.Now()
	if t.first.IsZero() { // nothing generated: it was all the prompt's
		t.first = t.end
	}
	s.metrics.generation(res, t.end.Sub(t.acquired))
	if gerr != nil {
		return res, t, s.failed(ctx, gerr, "generation", "messages", "")
	}
	if res.Finish == "" {
		res.Finish = "stop"
	}
	return res, t, nil
}

// generateParsed is generate with the text split by parser into answer
// text, reasoning and tool calls (all answer text when parser is nil):
// send gets the deltas each piece completes and the log-probabilities of
// the tokens since its last call, and at the end what the parser held.
func (s *Server) generateParsed(r *http.Request, prompt string, p Params, stop []string, parser *chat.Parser, started func(),
	send func(ds []chat.Delta, lps []TokenLogprobs) bool) (Result, timing, *apiError) {
	res, t, aerr := s.generate(r, prompt, p, stop, started, func(text string, lps []TokenLogprobs) bool {
		if parser == nil {
			return send([]chat.Delta{{Content: text}}, lps)
		}
		return send(parser.Push(text), lps)
	})
	if aerr == nil && parser != nil {
		send(parser.Finish(), nil)
	}
	return res, t, aerr
}

// whole answers a request whose n choices come whole: it generates them
// one after the other, makes each into a C from its text, its tokens'
// logprobs (nil unless p asks for them) and its result, and writes the
// response that respond makes of them, their total usage and timings.
func whole[C any](s *Server, w http.ResponseWriter, r *http.Request, prompt string, p Params, stop []string, n int,
	choice func(i int, text string, lps []TokenLogprobs, res Result) C, respond func([]C, *usageJSON, *nativeTimings) any) *apiError {
	out := make([]C, 0, n)
	var total Result
	var tms nativeTimings
	for i := range n {
		var b strings.Builder
		var lps []TokenLogprobs
		if p.Logprobs {
			lps = []TokenLogprobs{}
		}
		res, tm, aerr := s.generate(r, prompt, p.choice(i), stop, nil, func(text string, more []TokenLogprobs) bool {
			b.WriteString(text)
			lps = append(lps, more...)
			return true
		})
		if aerr != nil {
			return aerr
		}
		total, tms = total.add(res), tms.plus(timingsOf(res, tm))
		out = append(out, choice(i, b.String(), lps, res))
	}
	writeJSON(w, respond(out, usageOf(total), &tms))
	return nil
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, req *chatRequest, in *chatInput) *apiError {
	prompt, popts, aerr := s.openAIPrompt(in, "chat completions")
	if aerr != nil {
		return aerr
	}
	id := s.newID("chatcmpl-")
	created := s.now().Unix()
	n := req.choices()
	var total Result // of all choices
	if !req.Stream {
		return whole(s, w, r, prompt, in.params, req.Stop, n, func(i int, text string, lps []TokenLogprobs, res Result) chatChoice {
			parser := chat.NewParser(s.info.Template.Format(), popts)
			parser.Push(text)
			parser.Finish()
			msg := parser.Message()
			rm := respMessage{Role: "assistant", ReasoningContent: msg.Thinking}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				rm.Content = strp(msg.Content)
			}
			choice := chatChoice{Index: i, Message: rm, FinishReason: res.Finish, Logprobs: chatLogprobsOf(lps)}
			for _, tc := range msg.ToolCalls {
				rm.ToolCalls = append(rm.ToolCalls, toolCallOut(tc, -1))
				choice.Message, choice.FinishReason = rm, "tool_calls"
			}
			return choice
		}, func(choices []chatChoice, u *usageJSON, tm *nativeTimings) any {
			return chatResponse{ID: id, Object: "chat.completion", Created: created, Model: s.info.ID,
				SystemFingerprint: "lowmem", Choices: choices, Usage: u, Timings: tm}
		})
	}

	// Choices stream one after the other, each told by its index.
	sse := newSSE(w)
	for i := range n {
		var lps []TokenLogprobs // not yet sent
		// A chunk carries the logprobs of the tokens since the last one:
		// the parser may hold a token's text back (a tool call being read).
		var tm *nativeTimings // the choice's, on its last chunk
		chunk := func(d deltaJSON, finish *string) bool {
			c := chunkChoice{Index: i, Delta: d, FinishReason: finish}
			if len(lps) > 0 {
				c.Logprobs, lps = chatLogprobsOf(lps), nil
			}
			return sse.send(chatChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.info.ID,
				SystemFingerprint: "lowmem", Choices: []chunkChoice{c}, Timings: tm})
		}
		ok := true
		calls := 0
		send := func(ds []chat.Delta, more []TokenLogprobs) bool {
			lps = append(lps, more...)
			for _, d := range ds {
				switch {
				case d.ToolCall != nil:
					ok = ok && chunk(deltaJSON{ToolCalls: []toolCallJSON{toolCallOut(*d.ToolCall, calls)}}, nil)
					calls++
				case d.Thinking != "":
					ok = ok && chunk(deltaJSON{ReasoningContent: d.Thinking}, nil)
				case d.Content != "":
					ok = ok && chunk(deltaJSON{Content: strp(d.Content)}, nil)
				}
			}
			return ok
		}
		started := func() { ok = chunk(deltaJSON{Role: "assistant", Content: strp("")}, nil) }
		parser := chat.NewParser(s.info.Template.Format(), popts)
		res, t, aerr := s.generateParsed(r, prompt, in.params.choice(i), req.Stop, parser, started, send)
		if aerr != nil {
			sse.fail(aerr)
			return aerr
		}
		total = total.add(res)
		finish := res.Finish
		if calls > 0 {
			finish = "tool_calls"
		}
		tms := timingsOf(res, t)
		tm = &tms
		chunk(deltaJSON{}, &finish)
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		sse.send(chatChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.info.ID,
			SystemFingerprint: "lowmem", Choices: []chunkChoice{}, Usage: usageOf(total)})
	}
	sse.done()
	return nil
}

// openAIChat checks creq and renders its prompt for the OpenAI-shaped
// endpoint what (see openAIPrompt). tune, when not nil, first sets in the
// checked input what creq cannot carry (Anthropic's top_k and thinking).
func (s *Server) openAIChat(creq *chatRequest, what string, tune func(*chatInput) *apiError) (*chatInput, string, chat.ParseOptions, *apiError) {
	in, aerr := creq.validate()
	if aerr == nil && tune != nil {
		aerr = tune(in)
	}
	if aerr != nil {
		return nil, "", chat.ParseOptions{}, aerr
	}
	prompt, popts, aerr := s.openAIPrompt(in, what)
	return in, prompt, popts, aerr
}

// openAIPrompt is chatPrompt for the OpenAI endpoint what, which an
// embedding-only model or one without a chat template does not serve.
func (s *Server) openAIPrompt(in *chatInput, what string) (string, chat.ParseOptions, *apiError) {
	if s.info.EmbeddingOnly {
		return "", chat.ParseOptions{}, notGenerating(what)
	}
	return s.chatPrompt(in, "the model has no chat template; use /v1/completions or start the server with a chat template")
}

// chatPrompt renders in's conversation with the model's chat template
// (refusing with noTemplate when it has none) and returns the prompt and
// how to parse the reply.
func (s *Server) chatPrompt(in *chatInput, noTemplate string) (string, chat.ParseOptions, *apiError) {
	if s.info.Template == nil {
		return "", chat.ParseOptions{}, &apiError{Status: 400, Type: "invalid_request_error", Message: noTemplate}
	}
	opts := s.info.Render
	opts.AddGenerationPrompt = true
	opts.Tools = in.tools
	opts.Now = s.now()
	opts.EnableThinking = in.thinking
	if err := s.info.Template.Format().CheckEffort(in.effort); err != nil {
		return "", chat.ParseOptions{}, badRequest("reasoning_effort", "%v", err)
	}
	opts.ReasoningEffort = in.effort
	if len(in.kwargs) > 0 {
		opts.Kwargs = in.kwargs
	}
	prompt, err := s.info.Template.Render(in.messages, opts)
	if err != nil {
		return "", chat.ParseOptions{}, badRequest("messages", "the chat template cannot render these messages: %v", err)
	}
	// A tool choice the format cannot force is refused here, with the
	// field named, rather than by the Backend.
	if err := s.info.Template.Format().CheckToolChoice(in.tools, in.params.ToolChoice); err != nil {
		return "", chat.ParseOptions{}, badRequest("tool_choice", "%v", err)
	}
	return prompt, chat.ParseOptions{
		// JSON output (a forced tool call too) is the answer even after a
		// prompt that opened a reasoning block: the constraint leaves no
		// room to close it.
		ThinkingOpen: chat.PromptOpensThinking(prompt) && !in.params.JSON && in.params.ToolChoice == "",
		Tools:        len(in.tools) > 0,
		Defs:         in.tools,
		NewID:        func() string { return s.newID("call_") },
	}, nil
}

func toolCallOut(tc chat.ToolCall, index int) toolCallJSON {
	out := toolCallJSON{ID: tc.ID, Type: "function"}
	if index >= 0 {
		out.Index = &index
	}
	out.Function.Name = tc.Name
	out.Function.Arguments = tc.Arguments
	return out
}

func (s *Server) handleCompletion(w http.ResponseWriter, r *http.Request, req *completionRequest) *apiError {
	prompt, p, aerr := req.validate()
	if aerr != nil {
		return aerr
	}
	if s.info.EmbeddingOnly {
		return notGenerating("completions")
	}
	id := s.newID("cmpl-")
	created := s.now().Unix()
	n := req.choices()
	var total Result // of all choices
	if !req.Stream {
		return whole(s, w, r, prompt, p, req.Stop, n, func(i int, text string, lps []TokenLogprobs, res Result) completionChoice {
			return completionChoice{Index: i, Text: text, FinishReason: &res.Finish, Logprobs: completionLogprobsOf(lps, 0)}
		}, func(choices []completionChoice, u *usageJSON, tm *nativeTimings) any {
			return completionResponse{ID: id, Object: "text_completion", Created: created, Model: s.info.ID,
				SystemFingerprint: "lowmem", Choices: choices, Usage: u, Timings: tm}
		})
	}
	// Choices stream one after the other, each told by its index.
	sse := newSSE(w)
	for i := range n {
		offset := 0           // of the next token's text in the completion
		var tm *nativeTimings // the choice's, on its last chunk
		chunk := func(text string, lps []TokenLogprobs, finish *string) bool {
			c := completionChoice{Index: i, Text: text, FinishReason: finish}
			if p.Logprobs && len(lps) > 0 {
				c.Logprobs = completionLogprobsOf(lps, offset)
				for _, lp := range lps {
					offset += len(lp.Token)
				}
			}
			return sse.send(completionResponse{ID: id, Object: "text_completion", Created: created, Model: s.info.ID,
				SystemFingerprint: "lowmem", Choices: []completionChoice{c}, Timings: tm})
		}
		res, t, aerr := s.generate(r, prompt, p.choice(i), req.Stop, nil, func(text string, lps []TokenLogprobs) bool { return chunk(text, lps, nil) })
		if aerr != nil {
			sse.fail(aerr)
			return aerr
		}
		total = total.add(res)
		tms := timingsOf(res, t)
		tm = &tms
		chunk("", nil, &res.Finish)
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		sse.send(completionResponse{ID: id, Object: "text_completion", Created: created, Model: s.info.ID,
			SystemFingerprint: "lowmem", Choices: []completionChoice{}, Usage: usageOf(total)})
	}
	sse.done()
	return nil
}

// eventStream writes a streamed reply: server-sent events as OpenAI frames
// them ("data: {json}\n\n", ending with "data: [DONE]\n\n"), or, for
// Ollama's API, NDJSON (one JSON object a line). Each event is flushed as
// it is written.
type eventStream struct {
	w       http.ResponseWriter
	ndjson  bool
	started bool
	broken  bool
}

func newSSE(w http.ResponseWriter) *eventStream { return &eventStream{w: w} }

func newNDJSON(w http.ResponseWriter) *eventStream { return &eventStream{w: w, ndjson: true} }

func (e *eventStream) start() {
	if e.started {
		return
	}
	e.started = true
	h := e.w.Header()
	if e.ndjson {
		h.Set("Content-Type", "application/x-ndjson")
	} else {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
	}
	h.Set("X-Accel-Buffering", "no")
	e.w.WriteHeader(200)
}

func (e *eventStream) write(data []byte) bool {
	if e.broken {
		return false
	}
	e.start()
	format := "data: %s\n\n"
	if e.ndjson {
		format = "%s\n"
	}
	if _, err := fmt.Fprintf(e.w, format, data); err != nil {
		e.broken = true
		return false
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

func (e *eventStream) send(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return e.write(b)
}

func (e *eventStream) done() { e.write([]byte("[DONE]")) }

// sendEvent sends v as a server-sent event named name (the Responses
// API's framing: "event: NAME" before the data).
func (e *eventStream) sendEvent(name string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil || e.broken {
		return false
	}
	e.start()
	if _, err := fmt.Fprintf(e.w, "event: %s\n", name); err != nil {
		e.broken = true
		return false
	}
	return e.write(b)
}

// fail reports an error: as the response when nothing was sent yet (the
// caller writes it), else as an error event in the stream, in the API's
// error JSON.
func (e *eventStream) fail(err *apiError) {
	if !e.started {
		return
	}
	if e.ndjson {
		e.send(ollamaError{Error: err.Message})
		return
	}
	e.send(struct {
		Error *apiError `json:"error"`
	}{err})
}

func randomID(prefix string) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return prefix + string(b[:])
}
