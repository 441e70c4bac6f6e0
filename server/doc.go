// Package server serves a language model over HTTP with OpenAI's API,
// Anthropic's Messages API and Ollama's, so that unmodified OpenAI clients
// (the official Python, Node and Go libraries among them), Anthropic's
// and Ollama clients (its Go package and CLI, ollama-python, ollama-js,
// langchaingo, Open WebUI) can use it.
//
// Routes: POST /v1/chat/completions, POST /v1/completions and POST
// /v1/responses (OpenAI's Responses API, stateless), streamed as
// server-sent events or not; POST /v1/messages and
// /v1/messages/count_tokens (Anthropic's); POST /v1/embeddings; POST
// /v1/rerank (and llama-server's /rerank, /v1/reranking, /reranking) for
// a reranker (RerankSession); llama-server's POST /tokenize, /detokenize
// and /apply-template and GET /props (Vocabulary); llama-server's native
// POST /completion (/completions) and /infill (prompts of token ids and
// the fill-in-the-middle prompt: TokenSession, ModelInfo.FIM), POST
// /embedding (/embeddings) and GET /slots, in its JSON and error shape;
// GET /v1/models, GET /health and GET /metrics (Prometheus text format).
//
// The server runs at most N requests at once, one per slot (each slot
// holds one Session of the Backend, with its own KV cache); further requests
// wait in a bounded queue and past it get 429. A request whose client goes
// away is cancelled within one decode step. Request bodies are bounded and
// validated; every error is its API's error JSON. Shutdown drains: it stops
// taking requests, lets running ones finish, and cancels what is still
// running when its context ends.
//
// Beyond OpenAI's fields, as llama.cpp's server does: a reasoning model's
// thinking comes back as reasoning_content (in messages and in stream
// deltas), and a request may pass chat_template_kwargs (for example
// {"enable_thinking": false}) to the chat template.
//
// response_format {"type": "json_object"} constrains the output to one
// JSON object (llm.WithJSON), and {"type": "json_schema", "json_schema":
// {"schema": …}} (or llama.cpp's server's {"type": "json_object",
// "schema": …}) to one that satisfies the schema (llm.WithJSONSchema), on
// both endpoints; a schema with keywords that cannot be enforced is a 400
// that names them. llama-server's speculative.n_max and speculative.n_min
// set a request's draft sizes where the Model speculates (Model.Speculate
// by prompt lookup, Model.Draft by a draft model), and speculative.p_min
// the draft model's confidence; GET /props reports the defaults. Chat's logprobs and top_logprobs (0 to 20), and the
// legacy endpoint's logprobs (0 to 5), report each token's
// log-probability (llm.WithLogprobs) from a Backend whose sessions are
// LogprobSessions, as FromModel's are.
//
// n (1 to 16) choices are generated one after the other, each on the
// free slot whose cache holds the most of the prompt (so, usually, the
// one that generated the choice before); a seed moves on by the choice's
// index, and streamed choices come in order.
//
// tool_choice "required" or {"type": "function", "function": {"name": …}}
// makes the reply one call, held to the template's tool-call syntax (Llama
// 3's, Hermes/Qwen's, Mistral's) with a known tool's name and arguments
// that follow its parameters where they can be enforced
// (llm.WithToolChoice); a template without a tool syntax, or "required"
// with several tools in Mistral's name[ARGS] syntax, is a 400.
//
// POST /v1/embeddings takes OpenAI's input forms — a string, an array of
// strings, an array of token ids or an array of such arrays (tokens are
// embedded as given, text is tokenized as llm.Session.Embed does), at most
// 2048 inputs — and answers a vector each, in order: pooled as the file
// says, unit length, encoding_format "float" (the default) or "base64"
// (little-endian float32s), dimensions keeping the first n elements before
// normalising (1 to the model's width). usage counts the tokens embedded.
// An empty input, an unknown encoding_format, dimensions out of range and
// a token id outside the vocabulary are 400s naming the field; a text
// longer than the context is a 400 context_length_exceeded (of several
// inputs, the message names the one: input[i]). A request's inputs are
// embedded together on one slot (FromModel's sessions pack short ones into
// shared forward passes, llm.Session.EmbedBatch), queued like a
// generation, and the slot's session is emptied: the prefix it had cached
// for its next generation is gone (the free slot caching the least is
// taken). A Backend whose sessions are not EmbedSessions, or a model that
// cannot embed (a reranker), answers 501 (on Ollama's routes too), as
// llama.cpp's server does without --embeddings; a model that only embeds
// (ModelInfo.EmbeddingOnly: an encoder) answers 501 on the generation
// endpoints.
//
// What is not built, and answers 400 with a message saying so: best_of > 1
// and echo on /v1/completions, and non-text content parts.
//
// Ollama's REST API (as of Ollama 0.17.4, what GET /api/version answers)
// runs beside it on the same slots, queue and metrics: GET / ("Ollama is
// running"), GET /api/version, /api/tags and /api/ps (the one model, its
// details from ModelInfo), POST /api/show (details, model_info, the chat
// template's source, capabilities), POST /api/chat and /api/generate, and
// POST /api/embed and the legacy /api/embeddings. Any model name is the
// served model, echoed in replies (Ollama's clients send the names they
// know; the OpenAI endpoints ignore "model" too). Chat and generate stream
// NDJSON by default (one object with "stream": false); the last line is
// done, with done_reason and Ollama's counts and durations in
// nanoseconds. They render and parse as /v1/chat/completions does (a
// generate prompt is a user turn after its system message, or with raw
// the prompt as given); tool calls carry their arguments as an object;
// format "json" or a schema is Params.JSON or JSONSchema; think false is
// the template's enable_thinking false. options map to Params over
// Ollama's sampler defaults (temperature 0.8, top_k 40, top_p 0.9, min_p
// 0; repeat_penalty only when given, as in Ollama's current engine);
// num_predict -1 or -2 runs to a full context; options about loading
// (num_ctx, num_gpu …) are type-checked and ignored, unknown ones ignored.
// /api/embed truncates a text longer than the context by default
// (EmbedOptions.Truncate), and the legacy route answers the pooled vector
// not normalised (EmbedOptions.Raw), as Ollama's do. Errors are
// {"error": "…"}; images, suffix, template, context, think levels and raw
// with system are 400s saying they are not supported, chat and generate of
// an embedding-only model 501s, and model management (pull, create …)
// unknown routes.
//
// The model side is the Backend interface: FromModel makes one of a loaded
// llm.Model (each slot a Session; load it with llm.WithSessions(n) so that
// the memory plan counts n KV caches), tests use scripted fakes. Set
// ReadHeaderTimeout on the http.Server: slow clients are its business, not
// the handler's. Example (examples/server is the complete program):
//
//	m, err := llm.Load("model.gguf", llm.WithSessions(2))
//	backend, err := server.FromModel(m, "my-model")
//	srv, err := server.New(backend, server.WithParallel(2))
//	if err != nil { ... }
//	hs := &http.Server{Addr: "127.0.0.1:8080", Handler: srv}
//	go hs.ListenAndServe()
//	<-sigterm
//	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
//	defer cancel()
//	srv.Shutdown(ctx) // drain generations
//	hs.Shutdown(ctx)  // then the listener
package server
